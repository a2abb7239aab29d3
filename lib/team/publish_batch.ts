/**
 * One publish batch = one PostgreSQL transaction (issue 19). Either everything of the
 * batch is visible, or nothing: a crash or kill -9 anywhere before COMMIT leaves the
 * server as it was, and the next publish re-diffs against it (publish_diff.ts).
 *
 * Order inside the transaction, and why:
 *  1. CAS on machines.publish_seq (`… WHERE publish_seq = $seen`): 0 rows ⇒ another
 *     publisher of this machine committed since we read the server state ⇒
 *     StalePublishError, nothing written. It also row-locks the machine, so two publishers
 *     of one machine serialize here instead of deadlocking later.
 *  2. Stage the new record rows into a TEMP table (ON COMMIT DROP). COPY FROM straight into
 *     intendant.records is refused by PostgreSQL for a role subject to row-level security,
 *     so a machine role must stage; the owner role stages too (one code path). Two staging
 *     methods, measured on a 60k-message bench-corpus store (PostgreSQL 15, GIN kept, this
 *     2-core box): INSERT … SELECT FROM unnest(arrays) 5.8k msgs/s one machine, 5.5k
 *     aggregate for 10 in-process machines; COPY text format 5.9k / 6.4k. The staging
 *     step is not the bottleneck (the GIN-maintained INSERT into records is), and COPY
 *     has a fatal flaw in porsager 3.4.9: a server error in the middle of COPY FROM STDIN
 *     (a bad value, a constraint) never settles the writable stream — the publish hangs
 *     forever (reproduced). So unnest is the default; "copy" stays selectable for
 *     measurement and is exercised by the tests.
 *  3. Bump team_state.revision — as LATE as possible: the row lock serializes every
 *     machine's batch commits (revision R committed ⇒ all ≤ R committed, the cursor
 *     invariant), so everything that does not need R (the CAS, building and shipping the
 *     rows) happens before it.
 *  4. Deletes (sessions — records explicitly first, to count them — then records), session
 *     upserts (the FK needs the row before its records), record inserts from the stage with
 *     rev_added = R, superseded flips, tombstones, and the machine row's bookkeeping.
 * Writes go through RLS for a machine role: a row of another machine is refused by the
 * server (WITH CHECK) and the whole batch rolls back.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { StalePublishError } from "../errors.ts";
import type { TeamSql } from "./connect.ts";
import type { SessionDelete, SessionRow } from "./publish_diff.ts";
import type { RecordRow } from "./record_row.ts";

/** How record rows reach the TEMP stage. */
export type StageMethod = "copy" | "unnest";

/** Everything one transaction writes. */
export interface BatchPlan {
  machine: string;
  /** machines.publish_seq as read with the diff base (the CAS). */
  seenSeq: number;
  binaryVersion: string;
  sessionDeletes: SessionDelete[];
  recordDeletes: { key: string; id: string }[];
  flips: { key: string; id: string; superseded: boolean }[];
  /** Session upserts (every session that gets inserts in this batch is here). */
  sessions: SessionRow[];
  /** Sessions new to the server (their old tombstone, if any, is lifted). */
  newSessions: string[];
  /** Rows to insert; their rev_added is ignored (the batch's revision is written). */
  inserts: RecordRow[];
  /** The local manifest revision, on the batch that completes the publish; else null. */
  localRevision: number | null;
  destructive: boolean;
}

/** What one committed batch did. */
export interface BatchResult {
  revision: number;
  /** machines.publish_seq after the batch. */
  publishSeq: number;
  inserted: number;
  deleted: number;
  flipped: number;
  sessionsInserted: number;
  sessionsDeleted: number;
}

/** Test seam: runs inside the transaction after staging (a throw rolls everything back). */
export type AfterStageHook = () => void | Promise<void>;

const STAGE_COLUMNS = `session_key text NOT NULL, record_id text NOT NULL, ord integer NOT NULL,
  source text NOT NULL, role smallint NOT NULL, ts_ms bigint NOT NULL, seq integer,
  truncated boolean NOT NULL, subagent boolean NOT NULL, superseded boolean NOT NULL,
  has_marks boolean NOT NULL, text text NOT NULL, nul_at integer[], folded text NOT NULL,
  locator text NOT NULL`;
const STAGE_NAMES = "session_key, record_id, ord, source, role, ts_ms, seq, truncated, " +
  "subagent, superseded, has_marks, text, nul_at, folded, locator";

/** Throws StalePublishError when the CAS found another publisher's commit. */
function stale(machine: string, seen: number): StalePublishError {
  return new StalePublishError(
    `Cannot publish machine "${machine}": its publish_seq moved past ${seen} ` +
      `(another publisher of this machine committed first)`,
  );
}

/** Applies `b` in one transaction; StalePublishError when the CAS fails. */
export async function applyBatch(
  sql: TeamSql,
  b: BatchPlan,
  o: { stage?: StageMethod; afterStage?: AfterStageHook } = {},
): Promise<BatchResult> {
  const m = b.machine;
  return await sql.begin(async (tx) => {
    const cas = await tx<{ publish_seq: string }[]>`
      UPDATE intendant.machines SET publish_seq = publish_seq + 1
      WHERE name = ${m} AND publish_seq = ${b.seenSeq}
      RETURNING publish_seq`;
    if (cas.length === 0) throw stale(m, b.seenSeq);
    if (b.inserts.length > 0) {
      await tx.unsafe(`CREATE TEMP TABLE pub_stage (${STAGE_COLUMNS}) ON COMMIT DROP`);
      if (o.stage === "copy") await stageCopy(tx as unknown as TeamSql, b.inserts);
      else await stageUnnest(tx as unknown as TeamSql, b.inserts);
    }
    await o.afterStage?.();
    const [st] = await tx<{ revision: string }[]>`
      UPDATE intendant.team_state SET revision = revision + 1 RETURNING revision`;
    const rev = Number(st!.revision);
    let deleted = 0;
    let sessionsDeleted = 0;
    if (b.sessionDeletes.length > 0) {
      const keys = b.sessionDeletes.map((d) => d.key);
      const r = await tx`DELETE FROM intendant.records
                         WHERE machine = ${m} AND session_key = ANY(${keys}::text[])`;
      deleted += r.count;
      const s = await tx`DELETE FROM intendant.sessions
                         WHERE machine = ${m} AND session_key = ANY(${keys}::text[])`;
      sessionsDeleted = s.count;
      const tomb = b.sessionDeletes.filter((d) => d.tombstone).map((d) => d.key);
      if (tomb.length > 0) {
        await tx`INSERT INTO intendant.tombstones (machine, session_key, rev)
                 SELECT ${m}, k, ${rev} FROM unnest(${tomb}::text[]) AS k
                 ON CONFLICT (machine, session_key)
                 DO UPDATE SET rev = EXCLUDED.rev, deleted_at = now()`;
      }
    }
    if (b.recordDeletes.length > 0) {
      const r = await tx`
        DELETE FROM intendant.records r
        USING unnest(${b.recordDeletes.map((d) => d.key)}::text[],
                     ${b.recordDeletes.map((d) => d.id)}::text[]) AS d(k, i)
        WHERE r.machine = ${m} AND r.session_key = d.k AND r.record_id = d.i`;
      deleted += r.count;
    }
    const sessionsInserted = await upsertSessions(tx as unknown as TeamSql, m, rev, b.sessions);
    if (b.newSessions.length > 0) {
      await tx`DELETE FROM intendant.tombstones
               WHERE machine = ${m} AND session_key = ANY(${b.newSessions}::text[])`;
    }
    let inserted = 0;
    if (b.inserts.length > 0) {
      const r = await tx.unsafe(
        `INSERT INTO intendant.records (machine, ${STAGE_NAMES}, rev_added)
         SELECT $1, ${STAGE_NAMES}, $2 FROM pg_temp.pub_stage`,
        [m, rev],
      );
      inserted = r.count;
    }
    let flipped = 0;
    if (b.flips.length > 0) {
      const r = await tx`
        UPDATE intendant.records r SET superseded = f.s
        FROM unnest(${b.flips.map((f) => f.key)}::text[], ${b.flips.map((f) => f.id)}::text[],
                    ${txt(b.flips.map((f) => f.superseded))}::text[]::boolean[]) AS f(k, i, s)
        WHERE r.machine = ${m} AND r.session_key = f.k AND r.record_id = f.i
          AND r.superseded <> f.s`;
      flipped = r.count;
    }
    const destructive = b.destructive || deleted > 0 || flipped > 0;
    const [mach] = await tx<{ publish_seq: string }[]>`
      UPDATE intendant.machines SET
        local_revision = COALESCE(${b.localRevision}::bigint, local_revision),
        last_publish_at = now(),
        last_publish_rev = ${rev},
        destructive_rev = CASE WHEN ${destructive} THEN ${rev} ELSE destructive_rev END,
        sessions = sessions + ${sessionsInserted - sessionsDeleted},
        records = records + ${inserted - deleted},
        newest_ts_ms = (SELECT max(newest_ts_ms) FROM intendant.sessions WHERE machine = ${m}),
        binary_version = ${b.binaryVersion}
      WHERE name = ${m}
      RETURNING publish_seq`;
    return {
      revision: rev,
      publishSeq: Number(mach!.publish_seq),
      inserted,
      deleted,
      flipped,
      sessionsInserted,
      sessionsDeleted,
    };
  }) as BatchResult;
}

/**
 * Commits nothing but the bookkeeping of a publish that found no row to change (the local
 * manifest moved without touching what is published): the CAS, local_revision and the
 * binary version. No team revision is taken — no row changed. Returns the new publish_seq.
 */
export async function markPublished(
  sql: TeamSql,
  o: { machine: string; seenSeq: number; localRevision: number; binaryVersion: string },
): Promise<number> {
  const rows = await sql<{ publish_seq: string }[]>`
    UPDATE intendant.machines SET publish_seq = publish_seq + 1,
      local_revision = ${o.localRevision}, last_publish_at = now(),
      binary_version = ${o.binaryVersion}
    WHERE name = ${o.machine} AND publish_seq = ${o.seenSeq}
    RETURNING publish_seq`;
  if (rows.length === 0) throw stale(o.machine, o.seenSeq);
  return Number(rows[0]!.publish_seq);
}

/** Upserts session rows; returns how many were new. */
async function upsertSessions(
  tx: TeamSql,
  m: string,
  rev: number,
  rows: readonly SessionRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const col = <K extends keyof SessionRow>(k: K) => rows.map((r) => r[k]);
  const r = await tx<{ inserted: boolean }[]>`
    INSERT INTO intendant.sessions AS s (machine, session_key, source, session_id, title,
      project, project_folded, parent_session_id, newest_ts_ms, oldest_ts_ms, records,
      source_gone, sig, marks, rev_added, rev_changed)
    SELECT ${m}, u.k, u.src, u.sid, u.title, u.project, u.pf, u.parent, u.newest, u.oldest,
           u.n, u.gone, u.sig, u.marks::jsonb, ${rev}, ${rev}
    FROM unnest(${col("session_key")}::text[], ${col("source")}::text[],
                ${col("session_id")}::text[], ${col("title")}::text[],
                ${col("project")}::text[], ${col("project_folded")}::text[],
                ${col("parent_session_id")}::text[], ${txt(col("newest_ts_ms"))}::text[]::bigint[],
                ${txt(col("oldest_ts_ms"))}::text[]::bigint[], ${
    txt(col("records"))
  }::text[]::int[],
                ${txt(col("source_gone"))}::text[]::boolean[], ${col("sig")}::text[], ${
    col("marks")
  }::text[])
      AS u(k, src, sid, title, project, pf, parent, newest, oldest, n, gone, sig, marks)
    ON CONFLICT (machine, session_key) DO UPDATE SET
      title = EXCLUDED.title, project = EXCLUDED.project,
      project_folded = EXCLUDED.project_folded, parent_session_id = EXCLUDED.parent_session_id,
      newest_ts_ms = EXCLUDED.newest_ts_ms, oldest_ts_ms = EXCLUDED.oldest_ts_ms,
      records = EXCLUDED.records, source_gone = EXCLUDED.source_gone, sig = EXCLUDED.sig,
      marks = EXCLUDED.marks, rev_changed = EXCLUDED.rev_changed
    RETURNING (xmax = 0) AS inserted`;
  return r.filter((x) => x.inserted).length;
}

/**
 * A non-text column as text[] (cast back in SQL): porsager types an array parameter by its
 * first element and sends `boolean` for a boolean[] (PostgreSQL then refuses the cast).
 */
function txt(values: readonly (string | number | boolean | null)[]): (string | null)[] {
  return values.map((v) =>
    v === null ? null : typeof v === "boolean" ? (v ? "t" : "f") : String(v)
  );
}

/** COPY text format: one field (\N for null; backslash, tab, newline, CR escaped). */
function copyField(v: string | number | boolean | null): string {
  if (v === null) return "\\N";
  if (typeof v === "boolean") return v ? "t" : "f";
  if (typeof v === "number") return String(v);
  return /[\\\t\n\r]/.test(v)
    ? v.replace(
      /[\\\t\n\r]/g,
      (c) => c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r",
    )
    : v;
}

function copyLine(r: RecordRow): string {
  return [
    copyField(r.session_key),
    copyField(r.record_id),
    copyField(r.ord),
    copyField(r.source),
    copyField(r.role),
    copyField(r.ts_ms),
    copyField(r.seq),
    copyField(r.truncated),
    copyField(r.subagent),
    copyField(r.superseded),
    copyField(r.has_marks),
    copyField(r.text),
    r.nul_at === null ? "\\N" : `{${r.nul_at.join(",")}}`,
    copyField(r.folded),
    copyField(r.locator),
  ].join("\t") + "\n";
}

/** Chunks of COPY text of about 1 MiB (few socket writes, bounded memory). */
function* copyChunks(rows: readonly RecordRow[]): Generator<string> {
  let buf = "";
  for (const r of rows) {
    buf += copyLine(r);
    if (buf.length >= 1 << 20) {
      yield buf;
      buf = "";
    }
  }
  if (buf.length > 0) yield buf;
}

async function stageCopy(tx: TeamSql, rows: readonly RecordRow[]): Promise<void> {
  const w = await tx.unsafe(`COPY pg_temp.pub_stage (${STAGE_NAMES}) FROM STDIN`).writable();
  await pipeline(Readable.from(copyChunks(rows)), w);
}

async function stageUnnest(tx: TeamSql, rows: readonly RecordRow[]): Promise<void> {
  const col = <K extends keyof RecordRow>(k: K) => rows.map((r) => r[k]);
  await tx`
    INSERT INTO pg_temp.pub_stage (${tx.unsafe(STAGE_NAMES)})
    SELECT k, i, o, src, role, ts, seq, tr, sub, sup, hm, t, na::int[], f, loc
    FROM unnest(${col("session_key")}::text[], ${col("record_id")}::text[],
                ${txt(col("ord"))}::text[]::int[], ${col("source")}::text[], ${
    txt(col("role"))
  }::text[]::smallint[],
                ${txt(col("ts_ms"))}::text[]::bigint[], ${txt(col("seq"))}::text[]::int[], ${
    txt(col("truncated"))
  }::text[]::boolean[],
                ${txt(col("subagent"))}::text[]::boolean[], ${
    txt(col("superseded"))
  }::text[]::boolean[],
                ${txt(col("has_marks"))}::text[]::boolean[], ${col("text")}::text[],
                ${rows.map((r) => r.nul_at === null ? null : `{${r.nul_at.join(",")}}`)}::text[],
                ${col("folded")}::text[], ${col("locator")}::text[])
      AS u(k, i, o, src, role, ts, seq, tr, sub, sup, hm, t, na, f, loc)`;
}
