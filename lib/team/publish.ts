/**
 * The publisher (issue 19): makes this machine's rows on the team server equal its local
 * message index. The local store is the source of truth; the server is a derived replica
 * any publish can rebuild.
 *
 * One publish:
 *  1. First time only: requireCurrentSchema, ensureMachine.
 *  2. One small query: the machine's publish_seq and local_revision, and the retention
 *     setting. When local_revision equals the manifest revision and publish_seq is what
 *     this publisher last saw, nothing can differ: return (no write).
 *  3. Otherwise the per-session sigs of this machine (cached with publish_seq; reloaded
 *     when publish_seq moved, i.e. someone else published this machine), planSessions,
 *     then sessions in groups of about `batchRecords` records: load their shards, read the
 *     server's rows of those sessions that exist there (ids, flags, ord, ts — no text),
 *     diffSession, and pack the changes into transactions of ≤ batchRecords rows /
 *     batchBytes of text (publish_batch.ts).
 *  4. A session larger than one transaction spans several; its `sig` is written only by
 *     the transaction holding its last rows ("" before), so a crash between them leaves a
 *     sig that matches nothing and the next publish re-diffs the session — by record id,
 *     so the rows already there are kept and the rest land once.
 *  5. StalePublishError (another publisher of this machine committed in between): drop
 *     the cache, re-read the manifest and the server, re-diff; up to STALE_RETRIES times.
 *  6. local_revision is written by the transaction that completes the publish, so an
 *     interrupted publish is never taken for a no-op.
 *  7. The append fast path (its pure rules in publish_tail.ts; issue 28: a daemon publishing after every watched append
 *     re-read a growing session's whole shard and all its server rows each time). The
 *     cache remembers, per session this publisher completed, the generations list it
 *     published and what the diff needs from it (record count, marks, highest order,
 *     highest mark anchor). When the session's list now extends that list — the
 *     indexer's append adds generations after the old ones — only the new generations
 *     are loaded, and their records are inserted as they are (all active) provided that
 *       - the new generations carry no supersession marks,
 *       - every new record sorts after every old record and at or after every old mark's
 *         after_order (a mark applies only to records before it: old flags stay right),
 *       - and none of their ids is on the server already (one indexed query).
 *     Anything else (a rewrite, a compaction, a new mark, an out-of-order record, the
 *     cache dropped) takes the full diff of step 3. The tail state is valid only while the
 *     server holds exactly what this publisher completed: it lives in the same cache,
 *     dropped with it when publish_seq moved or any publish failed, and is checked
 *     against the session's sig as the server holds it.
 * Calls of publish() on one Publisher run one after another (in-process serialization).
 *
 * Errors: TeamDbError (schema, privilege, settings), StalePublishError after the retries,
 * the server's own error for anything else (a batch that fails rolls back entirely).
 * Record text is never logged or put into an error.
 * A shard that cannot be loaded (a generation gone or damaged since the manifest read: GC,
 * quarantine) is skipped for this publish; the publish then does not record
 * local_revision, so the next one looks again.
 */
import { NotFoundError, StalePublishError } from "../errors.ts";
import {
  CorruptGenerationError,
  decodeRecords,
  deriveActive,
  type MessageRecord,
  slicePause,
  type Store,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { type TeamDb, TeamDbError } from "./connect.ts";
import { ensureMachine } from "./machine_role.ts";
import { requireCurrentSchema } from "./migrate.ts";
import {
  type AfterStageHook,
  applyBatch,
  type BatchPlan,
  type BatchResult,
  emptyBatchPlan,
  markPublished,
} from "./publish_batch.ts";
import {
  diffSession,
  planSessions,
  type ServerRecord,
  type ServerSession,
  type SessionDiff,
  type SessionRow,
  sessionRow,
  sessionSig,
} from "./publish_diff.ts";
import { appendDiff, canAppend, extendsList, type Tail, tailOf } from "./publish_tail.ts";
import { pgLabel, type RecordRow, toRecordRow } from "./record_row.ts";

/** Options of {@link createPublisher}. */
export interface PublisherOptions {
  /** openTeamDb result; requireCurrentSchema(db) is checked on the first publish. */
  db: TeamDb;
  /** The local store (lib/message_search openStore). */
  store: Store;
  /** Validated machine name. */
  machine: string;
  /** Written to machines.binary_version. */
  binaryVersion: string;
  /** Rows per transaction. @default 5000 */
  batchRecords?: number;
  /** Text per transaction, in UTF-16 units of text + folded text. @default 16 MiB */
  batchBytes?: number;
  /** @default Date.now */
  now?: () => number;
  /** Sessions done of sessions to do, after every committed transaction. */
  onProgress?: (done: number, total: number) => void;
  /** Test seam: runs inside every transaction after its rows are written, before the team revision. */
  afterStage?: AfterStageHook;
}

/** What one publish did. */
export interface PublishReport {
  sessions_changed: number;
  sessions_deleted: number;
  records_inserted: number;
  records_deleted: number;
  flags_flipped: number;
  batches: number;
  /** Team revision of the last batch (null: nothing to do). */
  revision: number | null;
  stale_retries: number;
  took_ms: number;
  skipped_quarantined: number;
  /** Of sessions_changed: those published from their new generations alone (header, 7). */
  sessions_appended: number;
}

/** A machine's publisher. */
export interface Publisher {
  /** Publishes the local changes since the last publish (calls serialize in-process). */
  publish(): Promise<PublishReport>;
}

export const DEFAULT_BATCH_RECORDS = 5000;
export const DEFAULT_BATCH_BYTES = 16 * 1024 * 1024;
/** StalePublishErrors absorbed by one publish before it gives up. */
export const STALE_RETRIES = 8;

const MS_PER_DAY = 86_400_000;

/** Server state this publisher last saw (valid while publish_seq is unchanged). */
interface Cache {
  seq: number;
  sessions: Map<string, ServerSession>;
  /** Stored session key → what this publisher completed of it (header, 7). */
  tails: Map<string, Tail>;
}

/** One session's changes, ready to batch. */
interface Work {
  key: string;
  /** The records `inserts` index into. */
  records: MessageRecord[];
  /** Active flag per record; null: all active. */
  active: boolean[] | null;
  diff: SessionDiff;
  marks: readonly SupersessionMark[];
  /** The tail state once this session's last transaction commits. */
  tail: Tail;
  appended: boolean;
}

/** A session loaded from the local store. */
interface Loaded {
  key: string;
  records: MessageRecord[];
  marks: SupersessionMark[];
}

/** Creates the publisher of machine `o.machine`. */
export function createPublisher(o: PublisherOptions): Publisher {
  /** False once the server refused intendant.clean_pending() to this role. */
  let canClean = true;
  const batchRecords = o.batchRecords ?? DEFAULT_BATCH_RECORDS;
  const batchBytes = o.batchBytes ?? DEFAULT_BATCH_BYTES;
  if (!Number.isInteger(batchRecords) || batchRecords < 1) {
    throw new RangeError(`batchRecords must be a positive integer: got ${batchRecords}`);
  }
  if (!(batchBytes >= 1)) throw new RangeError(`batchBytes must be ≥ 1: got ${batchBytes}`);
  const now = o.now ?? Date.now;
  const sql = o.db.sql;
  const m = o.machine;
  let ready = false;
  let cache: Cache | null = null;
  let chain: Promise<unknown> = Promise.resolve();

  async function readHead() {
    const [row] = await sql<
      { publish_seq: string; local_revision: string | null; retention: string | null }[]
    >`SELECT publish_seq, local_revision,
             (SELECT value FROM intendant.settings WHERE key = 'retention_days') AS retention
      FROM intendant.machines WHERE name = ${m}`;
    if (!row) throw new TeamDbError("schema", `Machine "${m}" has no row in the team database`);
    return {
      seq: Number(row.publish_seq),
      localRevision: row.local_revision === null ? null : Number(row.local_revision),
      cutoff: retentionCutoff(row.retention, now()),
    };
  }

  async function loadServerSessions(): Promise<Map<string, ServerSession>> {
    const rows = await sql<{ session_key: string; sig: string }[]>`
      SELECT session_key, sig FROM intendant.sessions WHERE machine = ${m}`;
    return new Map(rows.map((r) => [r.session_key, { sig: r.sig }]));
  }

  async function once(report: PublishReport): Promise<void> {
    const manifest = await o.store.readManifest();
    const head = await readHead();
    if (cache !== null && cache.seq === head.seq && head.localRevision === manifest.revision) {
      return;
    }
    if (cache === null || cache.seq !== head.seq) {
      cache = { seq: head.seq, sessions: await loadServerSessions(), tails: new Map() };
    }
    const c = cache;
    const plan = planSessions(manifest, c.sessions, { retentionCutoffMs: head.cutoff });
    report.skipped_quarantined = plan.quarantined;
    const total = plan.changed.length + plan.deleted.length;
    let done = 0;
    let complete = true;
    let pending = emptyBatchPlan({ machine: m, binaryVersion: o.binaryVersion, seenSeq: 0 });
    let pendingRows = 0;
    let pendingBytes = 0;
    /** Sessions the pending transaction completes. */
    let pendingDone = 0;
    /** Tail states the pending transaction completes (stored key → tail). */
    let pendingTails = new Map<string, Tail>();

    const commit = async (localRevision: number | null) => {
      pending.seenSeq = c.seq;
      pending.localRevision = localRevision;
      const r: BatchResult = await applyBatch(sql, pending, {
        afterStage: o.afterStage,
      });
      c.seq = r.publishSeq;
      // After the commit, outside the batch: the pending list of the trigram index goes
      // into the index with its pages recycled (schema_v1.ts clean_pending).
      if (r.inserted > 0 && canClean) {
        try {
          await sql`SELECT intendant.clean_pending()`;
        } catch (e) {
          // A role without EXECUTE on it (a database set up without the publisher group)
          // publishes correctly without it — the index is only larger until a VACUUM.
          if ((e as { code?: string })?.code !== "42501") throw e;
          canClean = false;
        }
      }
      for (const d of pending.sessionDeletes) {
        c.sessions.delete(d.key);
        c.tails.delete(d.key);
      }
      for (const s of pending.sessions) {
        c.sessions.set(s.session_key, { sig: s.sig });
        const t = s.sig === "" ? undefined : pendingTails.get(s.session_key);
        if (t !== undefined && t.sig === s.sig) c.tails.set(s.session_key, t);
        else c.tails.delete(s.session_key);
      }
      report.batches++;
      report.revision = r.revision;
      report.records_inserted += r.inserted;
      report.records_deleted += r.deleted;
      report.flags_flipped += r.flipped;
      report.sessions_deleted += r.sessionsDeleted;
      done += pendingDone + pending.sessionDeletes.length;
      o.onProgress?.(done, total);
      pending = emptyBatchPlan({ machine: m, binaryVersion: o.binaryVersion, seenSeq: 0 });
      pendingRows = 0;
      pendingBytes = 0;
      pendingDone = 0;
      pendingTails = new Map();
    };

    pending.sessionDeletes = plan.deleted;
    pending.destructive = plan.deleted.length > 0;
    // The daemon's local searches share this thread: the decoding and diffing yield every
    // PUBLISH_SLICE_MS (a publish in flight never holds a query for longer than a slice).
    const pause = slicePause(PUBLISH_SLICE_MS);
    // A session on the fast path weighs its new records only (an estimate from the counts).
    const weight = (key: string) => {
      const e = manifest.sessions[key]!;
      const t = c.tails.get(pgLabel(key));
      return t !== undefined && extendsList(t.generations, e.generations)
        ? Math.max(1, e.records - t.count)
        : e.records;
    };
    for (const group of groupsOf(plan.changed, weight, batchRecords)) {
      const work: Work[] = [];
      const full: string[] = [];
      const appends: { key: string; t: Tail; records: MessageRecord[] }[] = [];
      for (const key of group) {
        const stored = pgLabel(key);
        const entry = manifest.sessions[key]!;
        const t = c.tails.get(stored);
        if (
          t === undefined || c.sessions.get(stored)?.sig !== t.sig ||
          !extendsList(t.generations, entry.generations)
        ) {
          full.push(key);
          continue;
        }
        const l = await loadGenerations(
          o.store,
          key,
          entry.generations.slice(t.generations.length),
          pause,
        );
        if (l === null) {
          complete = false;
          continue;
        }
        if (!canAppend(t, l.records, l.marks)) full.push(key);
        else appends.push({ key, t, records: l.records });
      }
      const clashes = await serverIdsAmong(appends);
      for (const a of appends) {
        const stored = pgLabel(a.key);
        if (clashes.has(stored)) {
          full.push(a.key);
          continue;
        }
        const entry = manifest.sessions[a.key]!;
        const { diff, tail } = appendDiff(a.t, a.records, {
          sig: sessionSig(entry),
          generations: entry.generations,
        });
        work.push({
          key: a.key,
          records: a.records,
          active: null,
          diff,
          marks: a.t.marks,
          tail,
          appended: true,
        });
      }
      const loaded: Loaded[] = [];
      for (const key of full) {
        const l = await loadGenerations(o.store, key, manifest.sessions[key]!.generations, pause);
        if (l === null) complete = false;
        else loaded.push(l);
      }
      const server = await serverRecords(
        loaded.map((l) => l.key).filter((k) => c.sessions.has(pgLabel(k))),
      );
      for (const l of loaded) {
        const entry = manifest.sessions[l.key]!;
        const active = deriveActive(l.records, l.marks);
        const diff = diffSession(l.records, active, server.get(pgLabel(l.key)) ?? []);
        await pause();
        work.push({
          key: l.key,
          records: l.records,
          active,
          diff,
          marks: l.marks,
          tail: tailOf({
            sig: sessionSig(entry),
            generations: entry.generations,
            count: diff.count,
            records: l.records,
            marks: l.marks,
          }),
          appended: false,
        });
      }
      for (const w of work) {
        const stored = pgLabel(w.key);
        const entry = manifest.sessions[w.key]!;
        const d = w.diff;
        const row = (done: boolean): SessionRow =>
          sessionRow(w.key, entry, { records: d.count, marks: w.marks, complete: done });
        const isNew = !c.sessions.has(stored);
        for (const id of d.deletes) pending.recordDeletes.push({ key: stored, id });
        for (const f of d.flips) pending.flips.push({ key: stored, ...f });
        if (d.destructive) pending.destructive = true;
        if (isNew) pending.newSessions.push(stored);
        report.sessions_changed++;
        if (w.appended) report.sessions_appended++;
        // Inserts, split across transactions when they do not fit in one.
        let k = 0;
        for (;;) {
          for (; k < d.inserts.length; k++) {
            if (pendingRows >= batchRecords || pendingBytes >= batchBytes) break;
            const i = d.inserts[k]!;
            const rr: RecordRow = toRecordRow(w.records[i]!, {
              machine: m,
              sessionKey: w.key,
              superseded: w.active === null ? false : !w.active[i],
              rev: 0,
            });
            pending.inserts.push(rr);
            pendingRows++;
            pendingBytes += rr.text.length + rr.folded.length;
          }
          const last = k >= d.inserts.length;
          pending.sessions.push(row(last));
          if (last) {
            pendingDone++;
            pendingTails.set(stored, w.tail);
            break;
          }
          await commit(null);
        }
        if (pendingRows >= batchRecords || pendingBytes >= batchBytes) await commit(null);
      }
    }
    const localRevision = complete ? manifest.revision : null;
    if (hasWork(pending)) await commit(localRevision);
    else if (localRevision !== null && head.localRevision !== localRevision) {
      c.seq = await markPublished(sql, {
        machine: m,
        seenSeq: c.seq,
        localRevision,
        binaryVersion: o.binaryVersion,
      });
    }
  }

  /**
   * The stored keys of the fast-path candidates of which some new record id is on the
   * server already (one query per group, by the records' primary key).
   */
  async function serverIdsAmong(
    appends: { key: string; records: MessageRecord[] }[],
  ): Promise<Set<string>> {
    const keys: string[] = [];
    const ids: string[] = [];
    for (const a of appends) {
      for (const r of a.records) {
        keys.push(pgLabel(a.key));
        ids.push(pgLabel(r.id));
      }
    }
    if (ids.length === 0) return new Set();
    const rows = await sql<{ session_key: string }[]>`
      SELECT DISTINCT r.session_key FROM intendant.records r
      JOIN unnest(${keys}::text[], ${ids}::text[]) AS n(session_key, record_id)
        ON r.session_key = n.session_key AND r.record_id = n.record_id
      WHERE r.machine = ${m}`;
    return new Set(rows.map((r) => r.session_key));
  }

  /** The server's rows of `keys` (stored form), grouped by session. */
  async function serverRecords(keys: string[]): Promise<Map<string, ServerRecord[]>> {
    const out = new Map<string, ServerRecord[]>();
    if (keys.length === 0) return out;
    const stored = keys.map((k) => pgLabel(k));
    const rows = await sql<
      { session_key: string; record_id: string; superseded: boolean; ord: number; ts_ms: string }[]
    >`SELECT session_key, record_id, superseded, ord, ts_ms FROM intendant.records
      WHERE machine = ${m} AND session_key = ANY(${stored}::text[])`;
    for (const r of rows) {
      let list = out.get(r.session_key);
      if (!list) out.set(r.session_key, list = []);
      list.push({
        record_id: r.record_id,
        superseded: r.superseded,
        ord: r.ord,
        ts_ms: Number(r.ts_ms),
      });
    }
    return out;
  }

  async function run(): Promise<PublishReport> {
    const t0 = performance.now();
    if (!ready) {
      await requireCurrentSchema(o.db);
      await ensureMachine(sql, m);
      ready = true;
    }
    let staleRetries = 0;
    for (;;) {
      const report = emptyReport();
      try {
        await once(report);
        report.stale_retries = staleRetries;
        report.took_ms = Math.round(performance.now() - t0);
        return report;
      } catch (e) {
        // Whatever failed, the next attempt re-reads the server: a commit whose answer
        // was lost may have landed.
        cache = null;
        if (!(e instanceof StalePublishError) || staleRetries >= STALE_RETRIES) throw e;
        staleRetries++;
      }
    }
  }

  return {
    publish() {
      const p = chain.then(run);
      chain = p.catch(() => {});
      return p;
    },
  };
}

function emptyReport(): PublishReport {
  return {
    sessions_changed: 0,
    sessions_deleted: 0,
    records_inserted: 0,
    records_deleted: 0,
    flags_flipped: 0,
    batches: 0,
    revision: null,
    stale_retries: 0,
    took_ms: 0,
    skipped_quarantined: 0,
    sessions_appended: 0,
  };
}

function hasWork(b: BatchPlan): boolean {
  return b.sessionDeletes.length > 0 || b.recordDeletes.length > 0 || b.flips.length > 0 ||
    b.sessions.length > 0 || b.inserts.length > 0;
}

/** The cutoff (ms) of the server's retention_days setting, null when unset. */
function retentionCutoff(value: string | null, nowMs: number): number | null {
  if (value === null || value.trim() === "") return null;
  const days = Number(value);
  if (!Number.isFinite(days) || days <= 0) {
    throw new TeamDbError(
      "settings",
      `The team setting retention_days is ${JSON.stringify(value)}, not a positive number of days`,
    );
  }
  return nowMs - days * MS_PER_DAY;
}

/** Work between two yields of a publish (see the decode loop). */
const PUBLISH_SLICE_MS = 8;

/** Changed keys in groups of about `budget` records (by `weight`, an estimate per key). */
function* groupsOf(
  keys: string[],
  weight: (key: string) => number,
  budget: number,
): Generator<string[]> {
  let group: string[] = [];
  let n = 0;
  for (const key of keys) {
    const records = weight(key);
    if (group.length > 0 && n + records > budget) {
      yield group;
      group = [];
      n = 0;
    }
    group.push(key);
    n += records;
  }
  if (group.length > 0) yield group;
}

/**
 * The records (sorted by order) and marks of `generations` of local session `key`; null
 * when one of them cannot be read.
 */
async function loadGenerations(
  store: Store,
  key: string,
  generations: readonly string[],
  pause: () => Promise<void>,
): Promise<Loaded | null> {
  const records: MessageRecord[] = [];
  const marks: SupersessionMark[] = [];
  for (const g of generations) {
    try {
      const view = await store.loadSegment(g);
      // Loops, not push(...xs): a spread of 100k+ records overflows the call stack.
      let n = 0;
      for (const r of decodeRecords(view)) {
        records.push(r);
        if (++n % 512 === 0) await pause();
      }
      for (const k of view.marks) marks.push(k);
    } catch (e) {
      if (e instanceof CorruptGenerationError || e instanceof NotFoundError) return null;
      throw e;
    }
  }
  records.sort((a, b) => a.order - b.order);
  return { key, records, marks };
}
