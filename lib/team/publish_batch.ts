/**
 * One publish batch = one PostgreSQL transaction (issue 19). Either everything of the
 * batch is visible, or nothing: a crash or kill -9 anywhere before COMMIT leaves the
 * server as it was, and the next publish re-diffs against it (publish_diff.ts).
 *
 * Order inside the transaction, and why:
 *  1. CAS on machines.publish_seq (`… WHERE publish_seq = $seen`), in the same statement
 *     bumping the machine's own `revision`: 0 rows ⇒ another publisher of this machine
 *     committed since we read the server state ⇒ StalePublishError, nothing written. It
 *     row-locks the machine (two publishers of one machine serialize here) and yields the
 *     machine revision every row of the batch carries as rev_added — known before any row
 *     is written, with no team-wide lock.
 *  2. Deletes (sessions — their records explicitly first, to count them — then records),
 *     session upserts, the record inserts (one INSERT … SELECT FROM unnest(column arrays):
 *     no staging table; COPY FROM is refused by PostgreSQL for a role subject to RLS, and
 *     porsager 3.4.9's COPY stream never settles when the server errors mid-COPY — a
 *     publish hung forever, reproduced), superseded flips. This is the heavy part (the GIN
 *     trigram index is maintained per row) and it runs concurrently across machines.
 *  3. LAST, the team revision and the batch's row in intendant.batches (team revision →
 *     machine revision), both through `intendant.commit_batch` (the only door to that
 *     shared state: schema_v2.ts), then tombstones and the
 *     machine row's bookkeeping (destructive_rev is a team revision). The team_state row
 *     lock is held from here to COMMIT only, so commits are serialized (team revision T
 *     committed ⇒ every revision ≤ T committed: what cursors rely on) but inserts are not.
 *     Measured before this order (lock taken before the inserts): 10 machines published no
 *     faster than one (bench/RESULTS.md).
 * Writes go through RLS for a machine role: a row of another machine is refused by the
 * server (WITH CHECK) and the whole batch rolls back.
 */
import { StalePublishError } from "../errors.ts";
import type { TeamSql } from "./connect.ts";
import type { SessionDelete, SessionRow } from "./publish_diff.ts";
import type { RecordRow } from "./record_row.ts";

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

/** A batch that writes nothing yet (the publisher fills it; tests name what they need). */
export function emptyBatchPlan(
  o: { machine: string; binaryVersion: string; seenSeq: number },
): BatchPlan {
  return {
    ...o,
    sessionDeletes: [],
    recordDeletes: [],
    flips: [],
    sessions: [],
    newSessions: [],
    inserts: [],
    localRevision: null,
    destructive: false,
  };
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

/**
 * Test seam: runs inside the transaction after the rows are written, before the team
 * revision and the commit (a throw rolls everything back).
 */
export type AfterStageHook = () => void | Promise<void>;

const RECORD_NAMES = "session_key, record_id, ord, source, role, ts_ms, seq, truncated, " +
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
  o: { afterStage?: AfterStageHook } = {},
): Promise<BatchResult> {
  const m = b.machine;
  return await sql.begin(async (tx) => {
    const t = tx as unknown as TeamSql;
    const cas = await tx<{ revision: string }[]>`
      UPDATE intendant.machines SET publish_seq = publish_seq + 1, revision = revision + 1
      WHERE name = ${m} AND publish_seq = ${b.seenSeq}
      RETURNING revision`;
    if (cas.length === 0) throw stale(m, b.seenSeq);
    const mrev = Number(cas[0]!.revision);
    let deleted = 0;
    let sessionsDeleted = 0;
    const sessionKeys = b.sessionDeletes.map((d) => d.key);
    if (sessionKeys.length > 0) {
      const r = await tx`DELETE FROM intendant.records
                         WHERE machine = ${m} AND session_key = ANY(${sessionKeys}::text[])`;
      deleted += r.count;
      const s = await tx`DELETE FROM intendant.sessions
                         WHERE machine = ${m} AND session_key = ANY(${sessionKeys}::text[])`;
      sessionsDeleted = s.count;
    }
    if (b.recordDeletes.length > 0) {
      const r = await tx`
        DELETE FROM intendant.records r
        USING unnest(${b.recordDeletes.map((d) => d.key)}::text[],
                     ${b.recordDeletes.map((d) => d.id)}::text[]) AS d(k, i)
        WHERE r.machine = ${m} AND r.session_key = d.k AND r.record_id = d.i`;
      deleted += r.count;
    }
    const sessionsInserted = await upsertSessions(t, m, mrev, b.sessions);
    if (b.newSessions.length > 0) {
      await tx`DELETE FROM intendant.tombstones
               WHERE machine = ${m} AND session_key = ANY(${b.newSessions}::text[])`;
    }
    const inserted = b.inserts.length > 0
      ? await insertRows(t, { machine: m, rev: mrev, rows: b.inserts })
      : 0;
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
    await pruneBatches(t, m);
    await o.afterStage?.();
    // From here to COMMIT the team_state row is locked: keep it short (see the header).
    // The team revision and the batch row through the one checked door (schema_v2.ts).
    const [st] = await tx<{ revision: string }[]>`
      SELECT intendant.commit_batch(${m}, ${mrev}) AS revision`;
    const rev = Number(st!.revision);
    const tomb = b.sessionDeletes.filter((d) => d.tombstone).map((d) => d.key);
    if (tomb.length > 0) {
      await tx`INSERT INTO intendant.tombstones (machine, session_key, rev)
               SELECT ${m}, k, ${rev} FROM unnest(${tomb}::text[]) AS k
               ON CONFLICT (machine, session_key)
               DO UPDATE SET rev = EXCLUDED.rev, deleted_at = now()`;
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

/** How long a machine's batch history is kept (cursors older than it answer 410). */
export const BATCHES_KEEP_HOURS = 24;

/**
 * Drops this machine's batch rows older than BATCHES_KEEP_HOURS except the newest of them
 * (it still answers "as of" any later revision), and records that row's team revision as
 * machines.pruned_rev: a cursor pinned before it cannot be answered exactly (410).
 */
async function pruneBatches(tx: TeamSql, m: string): Promise<void> {
  const [f] = await tx<{ floor: string | null }[]>`
    SELECT max(team_rev) AS floor FROM intendant.batches
    WHERE machine = ${m} AND at < now() - make_interval(hours => ${BATCHES_KEEP_HOURS})`;
  if (f?.floor === null || f?.floor === undefined) return;
  const gone = await tx`DELETE FROM intendant.batches
                        WHERE machine = ${m} AND team_rev < ${f.floor}`;
  if (gone.count > 0) {
    await tx`UPDATE intendant.machines SET pruned_rev = ${f.floor} WHERE name = ${m}`;
  }
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

/** The rows' columns as parameter arrays, in RECORD_NAMES order (text[] for non-text). */
function columnArrays(rows: readonly RecordRow[]) {
  const col = <K extends keyof RecordRow>(k: K) => rows.map((r) => r[k]);
  return [
    col("session_key"),
    col("record_id"),
    txt(col("ord")),
    col("source"),
    txt(col("role")),
    txt(col("ts_ms")),
    txt(col("seq")),
    txt(col("truncated")),
    txt(col("subagent")),
    txt(col("superseded")),
    txt(col("has_marks")),
    col("text"),
    rows.map((r) => r.nul_at === null ? null : `{${r.nul_at.join(",")}}`),
    col("folded"),
    col("locator"),
  ];
}

const UNNEST_SELECT = `SELECT $1, k, i, o::int, src, role::smallint, ts::bigint, seq::int,
    tr::boolean, sub::boolean, sup::boolean, hm::boolean, t, na::int[], f, loc, $2
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
              $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
              $15::text[], $16::text[], $17::text[])
    AS u(k, i, o, src, role, ts, seq, tr, sub, sup, hm, t, na, f, loc)`;

/** Inserts `rows` into intendant.records with rev_added = rev; returns the count. */
async function insertRows(
  tx: TeamSql,
  o: { machine: string; rev: number; rows: readonly RecordRow[] },
): Promise<number> {
  const r = await tx.unsafe(
    `INSERT INTO intendant.records (machine, ${RECORD_NAMES}, rev_added) ${UNNEST_SELECT}`,
    [o.machine, o.rev, ...columnArrays(o.rows)] as never[],
  );
  return r.count;
}
