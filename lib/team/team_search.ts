/**
 * Team search: the local engine's contract (lib/message_search/query — fold, AND,
 * phrases, filters, newest-first session groups with ≤ 3 hits, byte-exact highlights,
 * budgets, cursors) answered from the shared PostgreSQL replica, plus a `machine` filter
 * and the machine on every group. A search:
 *  1. validates the request with the local normalizeRequest (same errors, same folded
 *     needles) plus the machine list; the cursor identity is the local identity plus
 *     the scope "team" and the sorted machine filter, so neither a local cursor nor a
 *     cursor of another machine set opens here (InvalidCursorError);
 *  2. runs in ONE read-only REPEATABLE READ transaction (one snapshot for the revision,
 *     the expiry check, the plan and the hits): page 1 reads team_state.revision R (its
 *     snapshot shows exactly the rows of batches ≤ R); a cursor carries R and every query
 *     of a cursor page keeps, per machine, rows with rev_added ≤ that machine's revision at
 *     R (asOfVector, from intendant.batches), so later publishes neither
 *     appear in nor disturb its pages. Expiry (CursorExpiredError, 410) only when a machine
 *     in scope made a destructive change after R (max(destructive_rev) > R);
 *  3. picks a plan (team_plan.ts) and fetches the shown hits; renders (team_render.ts).
 * Retention: only records with ts_ms ≥ now − windowDays count (windowDays null: all).
 * State "building": the team has no publish yet (revision 0). Never logs and never puts
 * q into an error message.
 */
import {
  CURSOR_KEY_MIN_BYTES,
  CursorExpiredError,
  DAY_MS,
  DEFAULT_RESPONSE_BUDGET_BYTES,
  DEFAULT_TIME_BUDGET_MS,
  fingerprintOf,
  InvalidCursorError,
  mintCursor,
  normalizeRequest,
  openCursor,
  type SearchRequest,
  type SearchResponse,
  suggestWidenings,
} from "../message_search/mod.ts";
import type { TeamDb, TeamSql } from "./connect.ts";
import { MACHINE_NAME_MAX } from "./machine_name.ts";
import { hasTrigram, type RecordFilter } from "./query_sql.ts";
import {
  BudgetSpent,
  type Clock,
  COMMON_PROBE_CAP,
  fetchHits,
  isStatementTimeout,
  newestFirstPlan,
  type TeamPos,
  type TeamScan,
  trigramPlan,
  WALK_BATCH_MIN,
} from "./team_plan.ts";
import { parsePosKey, posKey, renderTeamPage, type TeamSearchGroup } from "./team_render.ts";

export type { TeamSearchGroup } from "./team_render.ts";

/** A team search request: the local request plus a machine filter. */
export interface TeamSearchRequest extends SearchRequest {
  /** Only these machines; empty or absent means all. */
  machine?: string[];
}

/** One page of team results. */
export interface TeamSearchResponse extends Omit<SearchResponse, "groups"> {
  scope: "team";
  groups: TeamSearchGroup[];
  /** The team revision the page was computed "as of". */
  revision: number;
}

/** Options of {@link createTeamSearch}. */
export interface TeamSearchOptions {
  db: TeamDb;
  /** HMAC-SHA256 key for cursors (≥ CURSOR_KEY_MIN_BYTES). */
  cursorKey: Uint8Array;
  /** Retention window in days; null searches everything the replica holds. */
  windowDays: number | null;
  /** @default DEFAULT_TIME_BUDGET_MS */
  timeBudgetMs?: number;
  /** @default DEFAULT_RESPONSE_BUDGET_BYTES */
  responseBudgetBytes?: number;
  /** Wall clock for the retention window. @default Date.now */
  now?: () => number;
  /**
   * Plan tuning, for tests and the bench (both plans give the same answers):
   * `probeCap` @default COMMON_PROBE_CAP, `walkBatchMin` @default WALK_BATCH_MIN.
   */
  tuning?: { probeCap?: number; walkBatchMin?: number };
}

/** A team search over one replica. */
export interface TeamSearch {
  search(req: TeamSearchRequest): Promise<TeamSearchResponse>;
}

const MACHINE_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** The machine filter: de-duplicated and sorted, null for absent or empty (= all). */
function machinesOf(v: unknown): string[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) throw new TypeError(`"machine" must be a list`);
  for (const m of v) {
    if (typeof m !== "string" || !MACHINE_RE.test(m) || m.length > MACHINE_NAME_MAX) {
      throw new RangeError(`Unknown machine name "${String(m).slice(0, 80)}"`);
    }
  }
  return v.length === 0 ? null : [...new Set(v as string[])].sort();
}

function positive(name: string, v: number, allowZero: boolean): number {
  if (!Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw new RangeError(
      `"${name}" must be a ${allowZero ? "non-negative" : "positive"} number: got "${v}"`,
    );
  }
  return v;
}

/** Creates a team search over `o.db`. */
export function createTeamSearch(o: TeamSearchOptions): TeamSearch {
  const { db, windowDays, now = Date.now } = o;
  if (!db || typeof db.sql !== "function") throw new TypeError("Team search needs a team database");
  if (windowDays !== null && !(Number.isFinite(windowDays) && windowDays > 0)) {
    throw new RangeError(`Retention window must be positive days or null: got "${windowDays}"`);
  }
  if (!(o.cursorKey instanceof Uint8Array) || o.cursorKey.length < CURSOR_KEY_MIN_BYTES) {
    throw new RangeError(`Cursor key must be at least ${CURSOR_KEY_MIN_BYTES} bytes`);
  }
  const key = new Uint8Array(o.cursorKey);
  const timeBudgetMs = positive("timeBudgetMs", o.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS, true);
  const budgetBytes = positive(
    "responseBudgetBytes",
    o.responseBudgetBytes ?? DEFAULT_RESPONSE_BUDGET_BYTES,
    false,
  );

  const probeCap = o.tuning?.probeCap ?? COMMON_PROBE_CAP;
  const walkBatchMin = o.tuning?.walkBatchMin ?? WALK_BATCH_MIN;
  if (
    !(Number.isInteger(probeCap) && probeCap > 0 && Number.isInteger(walkBatchMin) &&
      walkBatchMin > 0)
  ) {
    throw new RangeError(`Team search tuning must be positive integers`);
  }

  async function search(req: TeamSearchRequest): Promise<TeamSearchResponse> {
    const res = await searchOnce(req);
    // The local engine's rule (query/suggest.ts): an empty first page says what would help.
    const suggestions = await suggestWidenings(req, res, searchOnce);
    if (suggestions) res.suggestions = suggestions;
    return res;
  }

  async function searchOnce(req: TeamSearchRequest): Promise<TeamSearchResponse> {
    const startedAt = performance.now();
    const took = () => Math.round((performance.now() - startedAt) * 100) / 100;
    const nreq = normalizeRequest(req);
    const machines = machinesOf(req.machine);
    const fp = fingerprintOf(key, JSON.stringify(["team", nreq.identity, machines]));
    let cur: { rev: number; pos: TeamPos | null; seen: number | null } | null = null;
    if (nreq.cursor !== null) {
      const c = openCursor(key, nreq.cursor);
      if (c.fp !== fp) {
        throw new InvalidCursorError("Cursor was minted for another query or filter set");
      }
      let pos: TeamPos | null = null;
      if (c.pos) {
        const k = parsePosKey(c.pos.key);
        if (!k) throw new InvalidCursorError("Cursor position is not a team position");
        pos = { best: c.pos.best, ...k };
      }
      cur = { rev: c.rev, pos, seen: c.seen };
    }
    const budget = nreq.complete ? Infinity : timeBudgetMs;
    const clock: Clock = { left: () => budget - (performance.now() - startedAt) };
    const cutoff = windowDays === null ? null : now() - windowDays * DAY_MS;
    const from = Math.max(nreq.since ?? -Infinity, cutoff ?? -Infinity);

    const out = await db.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
      const [st] = await tx.unsafe<{ revision: string }[]>(
        `SELECT revision FROM intendant.team_state`,
      );
      const latest = Number(st!.revision);
      const rev = cur ? cur.rev : latest;
      let asOf: RecordFilter["asOf"] = null;
      if (cur) {
        const [d] = await tx.unsafe<{ d: string | null; p: string | null }[]>(
          `SELECT max(destructive_rev) AS d, max(pruned_rev) AS p FROM intendant.machines` +
            (machines ? ` WHERE name = ANY($1::text[])` : ""),
          machines ? [machines] : [],
        );
        const destructive = Number(d?.d ?? 0);
        if (destructive > cur.rev) {
          throw new CursorExpiredError(
            `Cursor expired: a machine in scope changed published rows at revision ` +
              `${destructive}, after the cursor's revision ${cur.rev}`,
          );
        }
        // The batch history that says what "as of" the cursor's revision means was pruned
        // (older than a day): such a cursor can no longer page exactly.
        if (Number(d?.p ?? 0) > cur.rev) {
          throw new CursorExpiredError(
            `Cursor expired: revision ${cur.rev} is older than the team's batch history`,
          );
        }
        if (cur.rev > latest) throw new InvalidCursorError("Cursor names a future revision");
        asOf = await asOfVector(tx as unknown as TeamSql, { rev: cur.rev, machines });
      }
      if (latest === 0) return { rev, building: true as const };
      const filter: RecordFilter = {
        needles: nreq.needles,
        roleMask: nreq.roleMask,
        sources: nreq.sources,
        machines,
        from: Number.isFinite(from) ? from : null,
        to: nreq.until,
        includeSuperseded: nreq.includeSuperseded,
        project: nreq.project,
        asOf,
      };
      const pos = cur?.pos ?? null;
      let scan: TeamScan;
      try {
        const x = { filter, pos, limit: nreq.limit, clock, batchMin: walkBatchMin };
        // Needles with a trigram try the trigram plan, which gives up (null) on a common
        // needle; trigram-less needles (2 characters, 2-character CJK) walk newest-first.
        const tri = filter.needles.some(hasTrigram)
          ? await trigramPlan(tx, { ...x, cap: probeCap })
          : null;
        scan = tri ?? await newestFirstPlan(tx, x);
        const plan = scan.plan;
        const shown = scan.groups.slice(0, nreq.limit);
        // The hits of a page are owed once its groups are known: a complete budget for them.
        const rows = await fetchHits(tx, {
          filter,
          groups: shown,
          clock: { left: () => Infinity },
          shape: plan === "trigram" ? "tid" : "lateral",
        });
        return { rev, scan, rows, pos };
      } catch (e) {
        // Any statement the budget's timeout cancelled (a plan's own bookkeeping included)
        // means the budget is spent: a partial page, never an error.
        if (!(e instanceof BudgetSpent) && !isStatementTimeout(e)) throw e;
        return {
          rev,
          scan: { stop: "timeout", groups: [], plan: "trigram", after: null } as TeamScan,
          rows: [],
          pos,
        };
      }
    });
    const base = { scope: "team" as const, window_days: windowDays, revision: out.rev };
    if ("building" in out) {
      return { ...base, state: "building", groups: [], cursor: null, took_ms: took() };
    }
    const page = renderTeamPage(out.scan, out.rows, {
      needles: nreq.needles,
      limit: nreq.limit,
      budgetBytes,
      from: out.pos,
    });
    // Groups shown before this page (a first page: none; an old cursor: unknown).
    const seen = cur ? cur.seen : 0;
    const cursor = page.next === undefined ? null : mintCursor(key, {
      fp,
      rev: out.rev,
      pos: page.next === null ? null : { best: page.next.best, key: posKey(page.next) },
      seen: seen === null ? null : seen + page.groups.length,
    });
    const res: TeamSearchResponse = {
      ...base,
      state: page.state,
      groups: page.groups,
      cursor,
      took_ms: 0,
    };
    if (page.partial_reason) res.partial_reason = page.partial_reason;
    if (out.scan.stop === "done" && out.scan.after !== null && seen !== null) {
      res.total_sessions = seen + out.scan.after;
    }
    res.took_ms = took();
    return res;
  }

  return { search };
}

/**
 * What "as of team revision `rev`" means per machine: the machine revision of its last
 * batch at or before `rev` (intendant.batches). Batches commit in team-revision order
 * (publish_batch.ts), so every row a machine wrote up to that machine revision was
 * visible at `rev` — and nothing after it.
 */
async function asOfVector(
  tx: TeamSql,
  o: { rev: number; machines: readonly string[] | null },
): Promise<{ machines: string[]; revs: number[] }> {
  const rows = await tx.unsafe<{ machine: string; mrev: string }[]>(
    `SELECT machine, max(machine_rev) AS mrev FROM intendant.batches WHERE team_rev <= $1` +
      (o.machines ? ` AND machine = ANY($2::text[])` : "") + ` GROUP BY machine`,
    o.machines ? [o.rev, [...o.machines]] : [o.rev],
  );
  return { machines: rows.map((r) => r.machine), revs: rows.map((r) => Number(r.mrev)) };
}
