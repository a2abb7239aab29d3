/**
 * The two plans that find a team search page's session groups on the replica, and the
 * query that fetches their shown hits. Both plans answer the same thing — the first
 * limit+1 groups strictly after the cursor position, in page order (best_ts_ms DESC,
 * machine ASC, session_key ASC, strings in UTF-8 byte order), each with its exact
 * total_hits — and differ only in cost:
 *  - trigram: the matching rows (GIN-narrowed), read once and capped at COMMON_PROBE_CAP,
 *    aggregated `GROUP BY machine, session_key`, ordered and cut in SQL; when the cap is
 *    reached the needle is common and the page goes to the walk instead (trigramPlan);
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
 * Measured on the 530k-message bench replica (10 machines, PostgreSQL 15, ANALYZEd;
 * bench:team, bench/RESULTS.md): a rare word is a Bitmap Index Scan on records_folded_trgm
 * (16 rows) → GroupAggregate → top-N, 0.3 ms in the server, ≈ 6 ms a page with its hits;
 * the boundary regex (≈ 1 KB) costs one compile per connection and needle (≈ 25 ms the
 * first time, then cached by the backend) and runs on has_marks rows only; hits of
 * trigram pages are fetched by the positions the plan kept (fetchHits "tid"), those of walked pages
 * newest-first through records_session_ts (fetchHits "lateral").
 */
import { HITS_PER_GROUP } from "../message_search/mod.ts";
import type postgres from "postgres";

/** porsager's transaction handle (what sql.begin hands its callback). */
type TeamTx = postgres.TransactionSql<Record<string, never>>;
import { recordConditions, type RecordFilter, sessionConditions, SqlParams } from "./query_sql.ts";
import {
  capped,
  ID_CAP_CHARS,
  PROJECT_CAP_CHARS,
  TEXT_CAP_CHARS,
  TITLE_CAP_CHARS,
} from "./read_caps.ts";

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
  /**
   * The trigram plan's: the row positions (ctid) of the group's ≤ HITS_PER_GROUP most
   * recent matches, in hit order, valid inside the transaction that found them.
   */
  tids?: string[];
}

/** How a plan ended. */
export interface TeamScan {
  stop: "done" | "timeout";
  /** Page order, at most limit+1. */
  groups: TeamCandidate[];
  plan: "trigram" | "newest";
  /**
   * Matching sessions strictly after the position, over the whole scope (this page and
   * later ones), or null when the plan stopped before seeing them all (the walk's early
   * exit, a timeout). The trigram plan always knows it (it aggregates every match).
   */
  after: number | null;
}

/** A transaction: statements, and savepoints for the budgeted ones (timed). */
type Tx = Pick<TeamTx, "unsafe" | "savepoint">;

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

/**
 * Runs one statement under the remaining budget; BudgetSpent when it runs out. A bounded
 * statement runs inside its own savepoint (porsager's `tx.savepoint`): a statement the
 * timeout cancels rolls back to it, leaving the transaction usable for what the page still
 * needs (its hits) — and porsager rethrows, at COMMIT, the first error of any statement of
 * a transaction that was not run in a savepoint scope, even one the caller caught (seen in
 * bench:team: a caught timeout of the walk resurfaced as the search's error). The SET LOCAL
 * inside the savepoint ends with it (rolled back) or is lifted before its release, so the
 * timeout never outlives the statement.
 */
export async function timed<T extends readonly unknown[]>(
  tx: Tx,
  clock: Clock,
  text: string,
  params: unknown[],
): Promise<T> {
  const left = clock.left();
  if (left <= 0) throw new BudgetSpent();
  if (!Number.isFinite(left)) return await tx.unsafe(text, params as never[]) as unknown as T;
  // statement_timeout is an integer of ms; 0 would disable it.
  const ms = Math.max(1, Math.ceil(left));
  try {
    return await tx.savepoint(async (sp) => {
      await sp.unsafe(`SET LOCAL statement_timeout = ${ms}`);
      const rows = await sp.unsafe(text, params as never[]);
      await sp.unsafe(`SET LOCAL statement_timeout = 0`);
      return rows;
    }) as unknown as T;
  } catch (e) {
    if (isStatementTimeout(e)) throw new BudgetSpent();
    throw e;
  }
}

/** True for PostgreSQL's query_canceled (57014): what a statement timeout raises. */
export function isStatementTimeout(e: unknown): boolean {
  return (e as { code?: string })?.code === "57014";
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

/**
 * The trigram plan, probe and answer in ONE pass: the matching rows (found through the
 * trigram index) are read once, at most `cap` of them; when fewer than `cap` match, their
 * per-session aggregate IS the page (ordered and cut in SQL); when `cap` rows match the
 * needle is common and null says "use the newest-first plan" (which stops as soon as the
 * page is decided instead of aggregating every match). A separate count-then-aggregate
 * read the same rows twice (measured: 10 + 14 ms for a mid-frequency word on the
 * 530k-message bench replica).
 */
export async function trigramPlan(
  tx: Tx,
  o: { filter: RecordFilter; pos: TeamPos | null; limit: number; clock: Clock; cap?: number },
): Promise<TeamScan | null> {
  const cap = o.cap ?? COMMON_PROBE_CAP;
  const p = new SqlParams();
  const conds = recordConditions(o.filter, p);
  let having = "";
  if (o.pos) {
    const b = p.add(o.pos.best);
    const m = p.add(o.pos.machine);
    const k = p.add(o.pos.sessionKey);
    having = ` HAVING max(ts_ms) < ${b} OR (max(ts_ms) = ${b} AND ` +
      `(machine COLLATE "C" > ${m} OR (machine = ${m} AND session_key COLLATE "C" > ${k})))`;
  }
  // m: every matching row, once (with its position); g: the page's groups; h: each
  // group's newest HITS_PER_GROUP matches by position — the hits need no second index pass
  // (fetchHits "tid").
  const text = `WITH m AS MATERIALIZED (SELECT r.ctid AS tid, r.machine, r.session_key, ` +
    `r.ts_ms, r.ord FROM intendant.records r WHERE ${conds} LIMIT ${cap}), ` +
    `ga AS (SELECT machine, session_key, max(ts_ms) AS best, count(*) AS total FROM m ` +
    `GROUP BY machine, session_key${having}), ` +
    `g AS (SELECT * FROM ga ` +
    `ORDER BY best DESC, machine COLLATE "C", session_key COLLATE "C" LIMIT ${o.limit + 1}), ` +
    `h AS (SELECT x.machine, x.session_key, ` +
    `array_agg(x.tid::text ORDER BY x.ts_ms DESC, x.ord DESC) AS tids FROM ` +
    `(SELECT m.*, row_number() OVER (PARTITION BY m.machine, m.session_key ` +
    `ORDER BY m.ts_ms DESC, m.ord DESC) AS rn FROM m JOIN g USING (machine, session_key)) x ` +
    `WHERE x.rn <= ${HITS_PER_GROUP} GROUP BY x.machine, x.session_key) ` +
    `SELECT (SELECT count(*) FROM m)::int AS matched, (SELECT count(*) FROM ga)::int AS after, ` +
    `g.*, h.tids FROM (SELECT 1) one ` +
    `LEFT JOIN g ON true LEFT JOIN h ON h.machine = g.machine AND h.session_key = g.session_key ` +
    `ORDER BY g.best DESC NULLS LAST, g.machine COLLATE "C", g.session_key COLLATE "C"`;
  const rows = await timed<
    (GroupRow & { matched: number; after: number; tids: string[] | null })[]
  >(
    tx,
    o.clock,
    text,
    p.values,
  );
  if ((rows[0]?.matched ?? 0) >= cap) return null;
  const groups = rows.filter((r) => r.machine !== null).map((r) => ({
    ...candidate(r),
    tids: r.tids ?? [],
  }));
  return { stop: "done", groups, plan: "trigram", after: rows[0]?.after ?? 0 };
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
  let keyset: { newest: number; machine: string; key: string } | null = null;
  let batch = o.batchMin ?? WALK_BATCH_MIN;
  // Matching sessions after the position met so far: the whole scope's once the walk ends.
  let after = 0;
  const end = (stop: TeamScan["stop"], complete: boolean): TeamScan => ({
    stop,
    groups: page,
    plan: "newest",
    after: complete ? after : null,
  });
  for (;;) {
    if (o.clock.left() <= 0) return end("timeout", false);
    const p = new SqlParams();
    let where = sessionConditions(o.filter, p);
    // A group's best is at least its session's oldest record: a session whose oldest is
    // newer than the cursor's best had its group on an earlier page.
    if (o.pos) where += ` AND s.oldest_ts_ms <= ${p.add(o.pos.best)}`;
    if (keyset) {
      // Keyset over the sessions_newest index, in the database's own collation: only a
      // total order is needed here; page order is decided in JS.
      const n = p.add(keyset.newest);
      where += ` AND (s.newest_ts_ms < ${n} OR (s.newest_ts_ms = ${n} AND ` +
        `(s.machine, s.session_key) > (${p.add(keyset.machine)}, ${p.add(keyset.key)})))`;
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
    try {
      rows = await timed<WalkRow[]>(tx, o.clock, text, p.values);
    } catch (e) {
      // The timed statement rolled back to its own savepoint: the groups found so far still
      // get their hits (a partial page, like the local scan's).
      if (!(e instanceof BudgetSpent)) throw e;
      return end("timeout", false);
    }
    for (const r of rows) {
      if (Number(r.total) === 0) continue;
      const c = candidate(r);
      if (o.pos === null || beforePos(o.pos, c)) {
        after++;
        insert(page, c, cap);
      }
    }
    if (rows.length < batch) return end("done", true);
    const last = rows.at(-1)!;
    keyset = { newest: Number(last.newest), machine: last.machine, key: last.session_key };
    // Every later session's newest record is ≤ keyset.newest, which bounds its group.
    const worst = page.at(-1);
    if (page.length >= cap && worst && keyset.newest < worst.best) return end("done", false);
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

/**
 * The ≤ HITS_PER_GROUP most recent matching records of each group, with session facts.
 * Two shapes, one per plan, because each plan's needles make the other shape slow:
 *  - "lateral" (the newest-first plan: common or trigram-less needles): per group,
 *    `LATERAL … ORDER BY ts_ms DESC, ord DESC LIMIT 3` walks records_session_ts newest
 *    first and stops at the third match — matches are dense, so it stops early;
 *  - "tid" (the trigram plan: selective needles): the plan already read every match once
 *    and kept each group's newest three positions, so exactly those rows are fetched. The
 *    lateral walk would read every record of each session to find its one or two matches
 *    (measured on the 530k-message bench replica: 50 ms for 15 groups of a rare word), a
 *    second pass through the trigram index the match set again (10–20 ms for a
 *    mid-frequency word); by position: ≈ 3 ms.
 */
export async function fetchHits(
  tx: Tx,
  o: {
    filter: RecordFilter;
    groups: readonly TeamPos[];
    clock: Clock;
    shape?: "lateral" | "tid";
  },
): Promise<HitRow[]> {
  if (o.groups.length === 0) return [];
  const p = new SqlParams();
  const ms = p.add(o.groups.map((g) => g.machine));
  const ks = p.add(o.groups.map((g) => g.sessionKey));
  const recFilter: RecordFilter = { ...o.filter, project: null };
  // Never a column whole: at most one character past each cap crosses the wire (H6,
  // read_caps.ts); team_render.ts cuts to the local caps and marks what it cut.
  const cols = `${capped("r.record_id", ID_CAP_CHARS, "record_id")}, r.role, r.ts_ms, r.seq, ` +
    `r.superseded, r.truncated, r.subagent, ${capped("r.text", TEXT_CAP_CHARS, "text")}, ` +
    `r.nul_at, ${capped("r.locator", ID_CAP_CHARS, "locator")}, r.ord`;
  const facts = `s.source, ${capped("s.session_id", ID_CAP_CHARS, "session_id")}, ` +
    `${capped("s.title", TITLE_CAP_CHARS, "title")}, ` +
    `${capped("s.project", PROJECT_CAP_CHARS, "project")}, s.source_gone`;
  const groups =
    `unnest(${ms}::text[], ${ks}::text[]) WITH ORDINALITY AS g(machine, session_key, i)`;
  if (o.shape === "tid") {
    // The trigram plan found the hits' positions: fetch exactly those rows (a TID scan).
    const tids: string[] = [];
    const idx: number[] = [];
    o.groups.forEach((g, i) => {
      for (const t of (g as TeamCandidate).tids ?? []) {
        tids.push(t);
        idx.push(i + 1);
      }
    });
    if (tids.length === 0) return [];
    const q = new SqlParams();
    const tidP = q.add(tids);
    const idxP = q.add(idx.map(String));
    const sqlText = `SELECT t.i::int AS i, r.machine, r.session_key, ${facts}, ${cols} ` +
      `FROM unnest(${tidP}::tid[], ${idxP}::text[]::int[]) AS t(tid, i) ` +
      `JOIN intendant.records r ON r.ctid = t.tid ` +
      `JOIN intendant.sessions s ON s.machine = r.machine AND s.session_key = r.session_key ` +
      `ORDER BY t.i, r.ts_ms DESC, r.ord DESC`;
    return await timed<HitRow[]>(tx, o.clock, sqlText, q.values);
  }
  const text = `SELECT g.i::int AS i, g.machine, g.session_key, ${facts}, h.* FROM ${groups} ` +
    `JOIN intendant.sessions s ON s.machine = g.machine AND s.session_key = g.session_key ` +
    `CROSS JOIN LATERAL (SELECT ${cols} FROM intendant.records r ` +
    `WHERE r.machine = g.machine AND r.session_key = g.session_key AND ` +
    `${recordConditions(recFilter, p)} ORDER BY r.ts_ms DESC, r.ord DESC ` +
    `LIMIT ${HITS_PER_GROUP}) h ORDER BY g.i, h.ts_ms DESC, h.ord DESC`;
  return await timed<HitRow[]>(tx, o.clock, text, p.values);
}
