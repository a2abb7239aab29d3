/**
 * The two plans that find a team search page's session groups on the replica, and the
 * query that fetches their shown hits. Both plans answer the same thing — the first
 * limit+1 groups strictly after the cursor position, in page order (best_ts_ms DESC,
 * machine ASC, session_key ASC, strings in UTF-8 byte order), each with its exact
 * total_hits — and differ only in cost:
 *  - trigram: one aggregate `GROUP BY machine, session_key` over the GIN-narrowed rows,
 *    ordered and cut in SQL. Cost grows with the number of matching rows, so it is used
 *    only when some needle has a trigram and a capped probe finds fewer than
 *    COMMON_PROBE_CAP matching rows;
 *  - newest-first: walks intendant.sessions by newest_ts_ms DESC in batches and
 *    aggregates each batch's sessions through the (machine, session_key, ts_ms) index —
 *    the local engine's scan order and early exit (query/run_scan.ts): once the page
 *    holds limit+1 groups and no later session's newest record can beat the page's last
 *    group, the walk stops. Cost grows with the sessions walked, so common needles and
 *    needles without any trigram (2-character words, 2-character CJK) stay bounded.
 * Time budget: every statement runs under `SET LOCAL statement_timeout` = what is left
 * of the budget (0 = none for `complete`); the walk also checks the clock between
 * batches. A timeout ends the page "timeout" (the caller mints no cursor).
 *
 * Plans seen with EXPLAIN (ANALYZE) on PostgreSQL 15, 6,000 synthetic rows in 120 sessions
 * over two machines (throwaway cluster, ANALYZEd):
 *  - trigram, rare word and AND: the planner picks a Seq Scan (the table is a few hundred
 *    pages, cheaper than the GIN bitmap at this size) → Hash/GroupAggregate → top-N
 *    sort; 1.7–2.2 ms. The GIN path only wins on big tables: NOT yet verified here at
 *    530k rows (bench:team's job) — the feasibility run measured it there;
 *  - probe of a stopword ("the"): Limit over the same scan, stops at the cap (1.6 ms);
 *  - newest-first batch ("ok", 64 sessions): Seq Scan + sort of sessions (120 rows; the
 *    sessions_newest index is expected at more sessions), then per session a Bitmap
 *    Index Scan on records_session_ts and the LIKE as a filter, Aggregate; 2.4 ms.
 * The boundary regex appears only as `(NOT has_marks OR folded ~ …)` filter terms and is
 * evaluated for has_marks rows only.
 * The 530k-message figures are bench:team's job (bench/RESULTS.md).
 */
import { HITS_PER_GROUP } from "../message_search/mod.ts";
import type { TeamSql } from "./connect.ts";
import {
  hasTrigram,
  recordConditions,
  type RecordFilter,
  sessionConditions,
  SqlParams,
} from "./query_sql.ts";

/** Matching rows past which a needle is "too common" for the trigram aggregate. */
export const COMMON_PROBE_CAP = 5000;
/** Sessions per newest-first batch (the first; later ones double up to the max). */
export const WALK_BATCH_MIN = 64;
export const WALK_BATCH_MAX = 1024;

/** A page position: the group of (machine, session_key) whose best hit is `best`. */
export interface TeamPos {
  best: number;
  machine: string;
  sessionKey: string;
}

/** One matching session, before rendering. */
export interface TeamCandidate extends TeamPos {
  total: number;
}

/** How a plan ended. */
export interface TeamScan {
  stop: "done" | "timeout";
  /** Page order, at most limit+1. */
  groups: TeamCandidate[];
  plan: "trigram" | "newest";
}

/** A transaction (porsager's TransactionSql has the same unsafe()). */
type Tx = Pick<TeamSql, "unsafe">;

const enc = new TextEncoder();

/** UTF-8 byte order of two strings (= code point order; SQL COLLATE "C"). */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const x = enc.encode(a);
  const y = enc.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** True when `a` comes before `b` in page order. */
export function beforePos(a: TeamPos, b: TeamPos): boolean {
  if (a.best !== b.best) return a.best > b.best;
  const m = compareUtf8(a.machine, b.machine);
  return m !== 0 ? m < 0 : compareUtf8(a.sessionKey, b.sessionKey) < 0;
}

/** The statement-timeout guard: runs `f` with what is left of the budget. */
export interface Clock {
  /** Milliseconds left (Infinity: no budget). */
  left(): number;
}

/** Thrown inside a plan when the budget ran out (statement_timeout or the clock). */
export class BudgetSpent extends Error {
  constructor() {
    super("Team search time budget spent");
    this.name = "BudgetSpent";
  }
}

/** Runs one statement under the remaining budget; BudgetSpent when it runs out. */
export async function timed<T extends readonly unknown[]>(
  tx: Tx,
  clock: Clock,
  text: string,
  params: unknown[],
): Promise<T> {
  const left = clock.left();
  if (left <= 0) throw new BudgetSpent();
  // statement_timeout is an integer of ms; 0 disables it.
  const ms = Number.isFinite(left) ? Math.max(1, Math.ceil(left)) : 0;
  await tx.unsafe(`SET LOCAL statement_timeout = ${ms}`);
  let rows: T;
  try {
    rows = await tx.unsafe(text, params as never[]) as unknown as T;
  } catch (e) {
    // 57014 query_canceled: the statement timeout fired.
    if ((e as { code?: string })?.code === "57014") throw new BudgetSpent();
    throw e;
  }
  // The timeout is lifted again at once: left in force, it would cancel the plan's own
  // bookkeeping statements (SAVEPOINT, RELEASE) once the budget is nearly spent — an error
  // outside any BudgetSpent guard (seen in bench:team on a 2-character CJK needle).
  if (ms !== 0) await tx.unsafe(`SET LOCAL statement_timeout = 0`);
  return rows;
}

/** Which plan answers `f`: newest-first when no needle has a trigram or one is common. */
export async function choosePlan(
  tx: Tx,
  f: RecordFilter,
  { clock, cap = COMMON_PROBE_CAP }: { clock: Clock; cap?: number },
): Promise<TeamScan["plan"]> {
  if (!f.needles.some(hasTrigram)) return "newest";
  const p = new SqlParams();
  const text = `SELECT count(*)::int AS n FROM (SELECT 1 FROM intendant.records r ` +
    `WHERE ${recordConditions(f, p)} LIMIT ${cap}) s`;
  const [row] = await timed<{ n: number }[]>(tx, clock, text, p.values);
  return row!.n >= cap ? "newest" : "trigram";
}

interface GroupRow {
  machine: string;
  session_key: string;
  best: string | number;
  total: string | number;
}

function candidate(r: GroupRow): TeamCandidate {
  return {
    machine: r.machine,
    sessionKey: r.session_key,
    best: Number(r.best),
    total: Number(r.total),
  };
}

/** The trigram plan: one aggregate, ordered and cut in SQL. */
export async function trigramPlan(
  tx: Tx,
  o: { filter: RecordFilter; pos: TeamPos | null; limit: number; clock: Clock; batchMin?: number },
): Promise<TeamScan> {
  const p = new SqlParams();
  let having = "";
  if (o.pos) {
    const b = p.add(o.pos.best);
    const m = p.add(o.pos.machine);
    const k = p.add(o.pos.sessionKey);
    having = ` HAVING max(r.ts_ms) < ${b} OR (max(r.ts_ms) = ${b} AND ` +
      `(r.machine COLLATE "C" > ${m} OR (r.machine = ${m} AND r.session_key COLLATE "C" > ${k})))`;
  }
  const text = `SELECT r.machine, r.session_key, max(r.ts_ms) AS best, count(*) AS total ` +
    `FROM intendant.records r WHERE ${recordConditions(o.filter, p)} ` +
    `GROUP BY r.machine, r.session_key${having} ` +
    `ORDER BY best DESC, r.machine COLLATE "C", r.session_key COLLATE "C" LIMIT ${o.limit + 1}`;
  const rows = await timed<GroupRow[]>(tx, o.clock, text, p.values);
  return { stop: "done", groups: rows.map(candidate), plan: "trigram" };
}

/** Keeps the best `cap` candidates in page order. */
function insert(page: TeamCandidate[], c: TeamCandidate, cap: number): void {
  let at = page.length;
  while (at > 0 && beforePos(c, page[at - 1]!)) at--;
  if (at >= cap) return;
  page.splice(at, 0, c);
  if (page.length > cap) page.pop();
}

interface WalkRow extends GroupRow {
  newest: string | number;
}

/** The newest-first plan: batches of sessions, aggregated per batch, early exit. */
export async function newestFirstPlan(
  tx: Tx,
  o: { filter: RecordFilter; pos: TeamPos | null; limit: number; clock: Clock; batchMin?: number },
): Promise<TeamScan> {
  const cap = o.limit + 1;
  const page: TeamCandidate[] = [];
  // Records need only the per-record conditions: the session walk applies the rest.
  const recFilter: RecordFilter = { ...o.filter, sources: null, machines: null, project: null };
  let after: { newest: number; machine: string; key: string } | null = null;
  let batch = o.batchMin ?? WALK_BATCH_MIN;
  for (;;) {
    if (o.clock.left() <= 0) return { stop: "timeout", groups: page, plan: "newest" };
    const p = new SqlParams();
    let where = sessionConditions(o.filter, p);
    // A group's best is at least its session's oldest record: a session whose oldest is
    // newer than the cursor's best had its group on an earlier page.
    if (o.pos) where += ` AND s.oldest_ts_ms <= ${p.add(o.pos.best)}`;
    if (after) {
      // Keyset over the sessions_newest index, in the database's own collation: only a
      // total order is needed here; page order is decided in JS.
      const n = p.add(after.newest);
      where += ` AND (s.newest_ts_ms < ${n} OR (s.newest_ts_ms = ${n} AND ` +
        `(s.machine, s.session_key) > (${p.add(after.machine)}, ${p.add(after.key)})))`;
    }
    const text = `WITH b AS (SELECT s.machine, s.session_key, s.newest_ts_ms ` +
      `FROM intendant.sessions s WHERE ${where} ` +
      `ORDER BY s.newest_ts_ms DESC, s.machine, s.session_key LIMIT ${batch}) ` +
      `SELECT b.machine, b.session_key, b.newest_ts_ms AS newest, m.best, m.total FROM b ` +
      `CROSS JOIN LATERAL (SELECT max(r.ts_ms) AS best, count(*) AS total ` +
      `FROM intendant.records r WHERE r.machine = b.machine AND r.session_key = b.session_key ` +
      `AND ${recordConditions(recFilter, p)}) m ` +
      `ORDER BY b.newest_ts_ms DESC, b.machine, b.session_key`;
    let rows: WalkRow[];
    // A statement timeout aborts the transaction; the savepoint keeps it usable, so the
    // groups found so far still get their hits (a partial page, like the local scan's).
    const bounded = Number.isFinite(o.clock.left());
    if (bounded) await tx.unsafe(`SAVEPOINT walk`);
    try {
      rows = await timed<WalkRow[]>(tx, o.clock, text, p.values);
    } catch (e) {
      if (!(e instanceof BudgetSpent)) throw e;
      if (bounded) await tx.unsafe(`ROLLBACK TO SAVEPOINT walk`);
      return { stop: "timeout", groups: page, plan: "newest" };
    }
    if (bounded) await tx.unsafe(`RELEASE SAVEPOINT walk`);
    for (const r of rows) {
      if (Number(r.total) === 0) continue;
      const c = candidate(r);
      if (o.pos === null || beforePos(o.pos, c)) insert(page, c, cap);
    }
    if (rows.length < batch) return { stop: "done", groups: page, plan: "newest" };
    const last = rows.at(-1)!;
    after = { newest: Number(last.newest), machine: last.machine, key: last.session_key };
    // Every later session's newest record is ≤ after.newest, which bounds its group.
    const worst = page.at(-1);
    if (page.length >= cap && worst && after.newest < worst.best) {
      return { stop: "done", groups: page, plan: "newest" };
    }
    batch = Math.min(batch * 2, Math.max(WALK_BATCH_MAX, batch));
  }
}

/** A shown hit's row (text restored by the renderer). */
export interface HitRow {
  i: number;
  machine: string;
  session_key: string;
  source: string;
  session_id: string;
  title: string | null;
  project: string | null;
  source_gone: boolean;
  record_id: string;
  role: number;
  ts_ms: string | number;
  seq: number | null;
  superseded: boolean;
  truncated: boolean;
  subagent: boolean;
  text: string;
  nul_at: number[] | null;
  locator: string;
}

/** The ≤ HITS_PER_GROUP most recent matching records of each group, with session facts. */
export async function fetchHits(
  tx: Tx,
  o: { filter: RecordFilter; groups: readonly TeamPos[]; clock: Clock },
): Promise<HitRow[]> {
  if (o.groups.length === 0) return [];
  const p = new SqlParams();
  const ms = p.add(o.groups.map((g) => g.machine));
  const ks = p.add(o.groups.map((g) => g.sessionKey));
  const recFilter: RecordFilter = { ...o.filter, project: null };
  // LATERAL … ORDER BY ts_ms DESC, ord DESC LIMIT 3 walks records_session_ts newest
  // first and stops at the third match (a row_number() window would read every match).
  const text = `SELECT g.i::int AS i, g.machine, g.session_key, s.source, s.session_id, ` +
    `s.title, s.project, s.source_gone, h.* ` +
    `FROM unnest(${ms}::text[], ${ks}::text[]) WITH ORDINALITY AS g(machine, session_key, i) ` +
    `JOIN intendant.sessions s ON s.machine = g.machine AND s.session_key = g.session_key ` +
    `CROSS JOIN LATERAL (SELECT r.record_id, r.role, r.ts_ms, r.seq, r.superseded, ` +
    `r.truncated, r.subagent, r.text, r.nul_at, r.locator, r.ord FROM intendant.records r ` +
    `WHERE r.machine = g.machine AND r.session_key = g.session_key AND ` +
    `${recordConditions(recFilter, p)} ORDER BY r.ts_ms DESC, r.ord DESC ` +
    `LIMIT ${HITS_PER_GROUP}) h ORDER BY g.i, h.ts_ms DESC, h.ord DESC`;
  return await timed<HitRow[]>(tx, o.clock, text, p.values);
}
