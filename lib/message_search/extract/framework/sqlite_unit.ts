/**
 * The entry flow of a session that lives in a SQLite store (one database holds every
 * session; one unit per session). The JSONL entry flow (entry_flow.ts) reads byte
 * offsets; a database has none, so a session is re-derived from a watermark (formats-more
 * §0, §8.5):
 *  1. lstat the database and its `-wal` (sqlite_snapshot `statSqliteStore`): database gone
 *     → "gone"; the same signature as at the last publish, captured outside the racy
 *     window → "unchanged" WITHOUT opening anything;
 *  2. otherwise take (or reuse) the process-wide private snapshot; a store that stayed
 *     busy, is not SQLite, is too large or corrupt is HELD: the unit keeps its cursors and
 *     state (next sweep retries) and the reason is counted in `skipped`;
 *  3. the source's `watermark` for the session (e.g. max time_updated + row counts):
 *     equal to the last one → an empty "append" that only refreshes the cursors, so the
 *     next sweep is "unchanged" again; the session no longer in the store → "gone";
 *  4. else the source's `read` → prose records → sqlite_rederive (replace, or append
 *     keeping vanished text superseded).
 * Cursors: one FileCursor per existing file (database, WAL) with offset = size, so the
 * store's fingerprint follows inode + rewrite epoch; every replace bumps the epoch.
 */
import { RACY_WINDOW_MS } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import type { EntryMeta } from "../../store/types.ts";
import { nextRewriteEpoch } from "./entry_flow.ts";
import {
  type DerivedRecord,
  isSeenList,
  rederiveSession,
  type SeenEntry,
} from "./sqlite_rederive.ts";
import {
  type FileSig,
  sameStoreSig,
  sharedSnapshot,
  type SnapshotOptions,
  type SqliteSnapshot,
  statSqliteStore,
  type StoreSig,
} from "./sqlite_snapshot.ts";
import type { ExtractOutcome, PriorShard, SessionUnit } from "./types.ts";

/** The session facts the catalog shows. */
export interface SessionMeta {
  project: string | null;
  title: string | null;
  parent_session_id: string | null;
}

/** What a source's `read` returns for one session. */
export type SessionRead =
  | {
    ok: true;
    records: DerivedRecord[];
    meta: SessionMeta;
    skipped: Record<string, number>;
  }
  /** `hold`: transient (retry next sweep, keep what is published); `fail`: a bound blew. */
  | { ok: false; hold: string }
  | { ok: false; fail: string };

/** A source's hooks into {@link extractSqliteUnit}. */
export interface SqliteUnitHooks {
  /** The session's change watermark; null when the session is not in the store. */
  watermark(snap: SqliteSnapshot, sessionId: string): string | null | { hold: string };
  read(snap: SqliteSnapshot, sessionId: string): SessionRead;
}

/** The unit state this flow keeps in the shard. */
export interface SqliteUnitState {
  v: 1;
  kind: "sqlite";
  sig: StoreSig;
  /** When `sig` was captured (racy-clean rule). */
  at: number;
  wm: string;
  seen: SeenEntry[];
  meta: SessionMeta;
  failed: string | null;
}

function isState(v: unknown): v is SqliteUnitState {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Partial<SqliteUnitState>;
  return s.v === 1 && s.kind === "sqlite" && typeof s.sig === "object" && s.sig !== null &&
    typeof s.at === "number" && typeof s.wm === "string" && isSeenList(s.seen) &&
    typeof s.meta === "object" && s.meta !== null;
}

function cursorOf(sig: FileSig, now: number, epoch: number): FileCursor {
  return {
    dev: sig.dev,
    ino: sig.ino,
    size: sig.size,
    mtime_ms: sig.mtime_ms,
    captured_at_ms: now,
    prefix_len: 0,
    prefix_hash: "",
    offset: sig.size,
    anchor_len: 0,
    anchor_hash: "",
    next_line: 1,
    rewrite_epoch: epoch,
  };
}

function cursorsOf(dbPath: string, sig: StoreSig, now: number, epoch: number) {
  const out: Record<string, FileCursor> = { [dbPath]: cursorOf(sig.db, now, epoch) };
  if (sig.wal) out[`${dbPath}-wal`] = cursorOf(sig.wal, now, epoch);
  return out;
}

function racy(state: SqliteUnitState): boolean {
  const newest = Math.max(state.sig.db.mtime_ms, state.sig.wal?.mtime_ms ?? 0);
  return state.at - newest <= RACY_WINDOW_MS;
}

/** Options of {@link extractSqliteUnit}. */
export interface SqliteUnitOptions {
  dbPath: string;
  snapshot: SnapshotOptions;
  hooks: SqliteUnitHooks;
  now: number;
}

/** One session of a SQLite store through the flow in the header. */
export async function extractSqliteUnit(
  unit: SessionUnit,
  prior: PriorShard | null,
  o: SqliteUnitOptions,
): Promise<ExtractOutcome> {
  const { dbPath, hooks, now } = o;
  const state = prior && isState(prior.state) ? prior.state : null;
  const metaOf = (m: SessionMeta): EntryMeta => ({ ...m, files: [dbPath] });
  const hold = (reason: string): ExtractOutcome => {
    const skipped = { [reason]: 1 };
    if (prior) {
      return {
        kind: "append",
        records: [],
        marks: [],
        cursors: prior.cursors,
        state: prior.state,
        meta: metaOf(state?.meta ?? { project: null, title: null, parent_session_id: null }),
        skipped,
      };
    }
    // No shard yet: an empty replace is kept in process only (indexer: publishes
    // nothing), remembered by the files' signature, so a changed store is retried.
    return {
      kind: "replace",
      records: [],
      marks: [],
      cursors: {},
      state: null,
      meta: metaOf({ project: null, title: null, parent_session_id: null }),
      skipped,
    };
  };
  const sig = statSqliteStore(dbPath);
  if (sig === null) return { kind: "gone" };
  if (sig === "refused") return hold("db_refused");
  if (state && sameStoreSig(state.sig, sig) && !racy(state)) return { kind: "unchanged" };
  const snap = await sharedSnapshot(dbPath, sig, o.snapshot);
  if (!snap.ok) return hold(snap.reason);
  const s = snap.snapshot;
  const wm = hooks.watermark(s, unit.sessionId);
  if (wm === null) return { kind: "gone" };
  if (typeof wm === "object") return hold(wm.hold);
  const dbCursor = prior?.cursors[dbPath];
  if (state && state.wm === wm) {
    const epoch = dbCursor?.rewrite_epoch ?? 0;
    return {
      kind: "append",
      records: [],
      marks: [],
      cursors: cursorsOf(dbPath, s.sig, now, epoch),
      state: { ...state, sig: s.sig, at: now } satisfies SqliteUnitState,
      meta: metaOf(state.meta),
      skipped: {},
    };
  }
  const read = hooks.read(s, unit.sessionId);
  if (!read.ok && "hold" in read) return hold(read.hold);
  const epoch = nextRewriteEpoch(dbCursor, { shardExists: prior !== null });
  if (!read.ok) {
    // Fail closed: the session publishes empty, the reason is counted and remembered.
    const meta = state?.meta ?? { project: null, title: null, parent_session_id: null };
    return {
      kind: "replace",
      records: [],
      marks: [],
      cursors: cursorsOf(dbPath, s.sig, now, epoch),
      state: {
        v: 1,
        kind: "sqlite",
        sig: s.sig,
        at: now,
        wm,
        seen: [],
        meta,
        failed: read.fail,
      } satisfies SqliteUnitState,
      meta: metaOf(meta),
      skipped: { [read.fail]: 1 },
    };
  }
  const r = rederiveSession({
    source: unit.source,
    sessionId: unit.sessionId,
    current: read.records,
    priorRecords: prior?.records ?? null,
    priorSeen: state && state.failed === null ? state.seen : null,
  });
  const keepEpoch = r.kind === "append" ? dbCursor?.rewrite_epoch ?? 0 : epoch;
  return {
    kind: r.kind,
    records: r.records,
    marks: r.marks,
    cursors: cursorsOf(dbPath, s.sig, now, keepEpoch),
    state: {
      v: 1,
      kind: "sqlite",
      sig: s.sig,
      at: now,
      wm,
      seen: r.seen,
      meta: read.meta,
      failed: null,
    } satisfies SqliteUnitState,
    meta: metaOf(read.meta),
    skipped: read.skipped,
  };
}
