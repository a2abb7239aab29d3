/**
 * The scan loop: walks the plan's sessions newest-first, skipping by manifest facts alone
 * (source, project, time bounds, cursor position) before loading anything, and matches
 * the rest through the arena. It keeps the best limit+1 groups (the extra one says
 * whether a next page exists) and stops:
 *  - "done"    at the end, or early once the page is full and the next session's newest
 *              record cannot beat the page's last group (broad terms are limit-bounded);
 *  - "timeout" when the time budget is spent (checked before each segment, once at least
 *              one session was matched, so a query always makes progress), or when a
 *              session was skipped because loading it could not end inside the budget
 *              (arena.loadCostMs; a load cannot be interrupted once started): the scan
 *              goes on past it, but the page covers an unknown subset;
 *  - "budget"  before loading a session from disk once this query's fresh generation
 *              bytes reached the fresh-load budget. Only the groups that no unscanned
 *              session could precede are returned then (a prefix of the page), so the
 *              continuation cursor never skips a session; while that prefix is empty the
 *              scan goes on (the time budget still bounds it), so every page advances.
 * Skipping by content before a load: the store's lexicon (lexicon_filter.ts) where it
 * covers every generation of the session, then the generations' summaries; both only
 * ever skip sessions that cannot hold a match.
 * Sessions it cannot search are never skipped silently (F8, the contract in types.ts):
 * a missing or corrupt generation (a failed checksum — at its load, or of a block the
 * match reads — or a file holding another session's key) skips its session for this
 * query and is returned as
 * `damage` (for the indexer to quarantine and re-derive) and in `degraded` (reason
 * damaged, or source_gone when its sources are gone), and a quarantined shard met in the
 * request's scope is in `degraded` as rebuilding / source_gone. Sessions the early exit
 * never reaches, and sessions outside the filters or before the cursor, are not reported:
 * they could not have placed a group on this page. Any other load error propagates.
 * Counting (issue 25: "20 of 57 sessions", never a count that does not settle): every
 * matching session after the cursor is counted, whether it stays on the page or not; when
 * the early exit stops the page, the walk goes on in count mode over the rest of the
 * scope — a session is only asked whether anything in it matches (sessionMatches), under
 * a count budget of its own (time and fresh bytes, x.count). The count is exact only when
 * the whole scope was walked with nothing skipped (no timeout, deferral, fresh-load cut or
 * unsearchable session, in the page's walk or the count's); otherwise it is null and the
 * page says "more than shown". Counting never changes the page, its state or its cursor.
 */
import { NotFoundError } from "../../errors.ts";
import {
  CorruptGenerationError,
  type SegmentView,
  type ShardDamage,
  type Store,
} from "../store/mod.ts";
import type { Arena } from "./arena.ts";
import type { NormalizedRequest } from "./normalize_request.ts";
import {
  before,
  type Candidate,
  PageBuffer,
  type PlanSession,
  type ScanPlan,
} from "./scan_plan.ts";
import type { CursorPosition } from "./search_cursor.ts";
import { matchSession, type SessionFilter, sessionMatches } from "./session_scan.ts";
import { bloomMayContain, needleSummaryHashes, needleTrigrams } from "./trigram.ts";
import type { LexiconFilter } from "./lexicon_filter.ts";
import type { DegradedSession } from "./types.ts";

/** True when every generation has a summary and none of them can hold one of the needles. */
export function summaryRulesOut(
  arena: Arena,
  gens: readonly string[],
  hashes: readonly (Uint32Array | null)[],
): boolean {
  for (const h of hashes) {
    if (h === null) continue;
    let possible = false;
    for (const g of gens) {
      const s = arena.summaryOf(g);
      if (s === undefined || bloomMayContain(s, h)) {
        possible = true;
        break;
      }
    }
    if (!possible) return true;
  }
  return false;
}

/**
 * Milliseconds kept free at the end of the time budget for what follows the scan
 * (rendering a page highlights at most limit × HITS_PER_GROUP records: ~1 ms).
 */
const RENDER_RESERVE_MS = 2;

/**
 * True when loading generation `g` (`records` in `files` generation files still on disk
 * for its session) is predicted to end past the time budget. A load cannot be
 * interrupted once started, so it is not started; the session is skipped and the page
 * ends as a timeout. Never refused: the first load of a query (`fresh` = 0) and a
 * generation refused before (arena.defer), so a session too big to ever fit the budget
 * is loaded by the next query that reaches it and retries always make progress.
 */
function loadWouldOverrun(
  x: Pick<ScanInput, "arena" | "startedAt" | "timeBudgetMs">,
  { g, fresh, records, files }: { g: string; fresh: number; records: number; files: number },
): boolean {
  if (fresh === 0 || x.arena.wasDeferred(g)) return false;
  const end = performance.now() - x.startedAt + x.arena.loadCostMs(records, files);
  return end + RENDER_RESERVE_MS > x.timeBudgetMs;
}

/** Everything one scan needs. */
export interface ScanInput {
  store: Store;
  arena: Arena;
  plan: ScanPlan;
  req: NormalizedRequest;
  /** Resume strictly after this position (null: from the top). */
  pos: CursorPosition | null;
  /** Oldest ts_ms inside the retention window, or null. */
  cutoff: number | null;
  /** performance.now() when the query started. */
  startedAt: number;
  /** Infinity: no time budget (a `complete` request). */
  timeBudgetMs: number;
  /** Infinity: no fresh-load budget. */
  freshLoadBudgetBytes: number;
  /** Progress: sessions walked so far, sessions in the plan. */
  onProgress?: (scanned: number, total: number) => void;
  /** What the count of the sessions past the page may spend (see the header). */
  count: CountBudget;
  /** The store lexicon's verdicts for this query's needles (lexicon_filter.ts), or null. */
  lexicon: LexiconFilter | null;
}

/** The count mode's own budget. */
export interface CountBudget {
  /** Wall time after the page was decided (at most). */
  ms: number;
  /**
   * Also at most what the page itself took (but COUNT_MIN_MS): a keystroke's count may at
   * most double its latency. A one-shot caller waits for the whole answer anyway.
   */
  scaleWithPage: boolean;
  /** Generation bytes it may read from disk. */
  freshBytes: number;
}

/** How the scan ended and what it found (in page order; at most limit+1 when "done"). */
export interface ScanOutcome {
  stop: "done" | "timeout" | "budget";
  groups: Candidate[];
  /** Sessions in scope the scan could not search, in scan order (uncapped). */
  degraded: DegradedSession[];
  /** Generations that failed to load during this scan (one per session). */
  damage: ShardDamage[];
  /**
   * Matching sessions strictly after the cursor position over the whole scope (on this
   * page or later ones), or null when the walk could not be complete (see the header).
   */
  after: number | null;
}

/** True when nothing of session `s` can be on this page (filters, bounds, cursor). */
export function outOfScope(
  s: PlanSession,
  { req: r, pos, to }: { req: NormalizedRequest; pos: CursorPosition | null; to: number },
): boolean {
  const e = s.entry;
  if (e.oldest_ts_ms > to) return true;
  if (r.sources && !r.sources.has(e.source)) return true;
  if (r.project !== null && (s.project === null || !s.project.includes(r.project))) return true;
  // A group's best hit is at least as new as the session's oldest record, so when even
  // (oldest, key) is not after the cursor, the group was on an earlier page.
  return pos !== null && !before(pos, { best: e.oldest_ts_ms, key: s.key });
}

/** Per-query load state: bytes read from disk, and whether any session was matched. */
export interface LoadState {
  fresh: number;
  matched: boolean;
  /** The scan's number (Arena.beginScan): its loads follow the arena's scan rule. */
  scan?: number;
}

/**
 * Loads session `s`'s segments through the arena: its entries; `{ failed }` naming the
 * segment that is missing or corrupt (noted in the arena); "timeout" when the budget is
 * spent; "deferred" when a segment load could not end inside the budget (see overBudget).
 */
export async function loadSession(
  x: Pick<ScanInput, "arena" | "store" | "startedAt" | "timeBudgetMs">,
  s: PlanSession,
  st: LoadState,
): Promise<SegmentView[] | { failed: string } | "timeout" | "deferred"> {
  const { arena } = x;
  const gens = s.entry.generations;
  const entries: SegmentView[] = [];
  // Records and files of this session still on disk: what its remaining loads will cost.
  let unloaded = s.entry.records;
  let files = 0;
  for (const g of gens) {
    unloaded -= arena.residentRecords(g);
    if (!arena.has(g)) files++;
  }
  for (const g of gens) {
    // Checked per segment, not per session: a cold session can hold many segments, and
    // what was loaded before the cut stays resident, so the retry is cheaper.
    if (st.matched) {
      if (performance.now() - x.startedAt + RENDER_RESERVE_MS > x.timeBudgetMs) return "timeout";
      const load = { g, fresh: st.fresh, records: unloaded, files };
      if (!arena.has(g) && loadWouldOverrun(x, load)) {
        arena.defer(g);
        return "deferred";
      }
    }
    try {
      const r = await arena.load(x.store, g, st.scan);
      st.fresh += r.freshBytes;
      if (r.freshBytes > 0) {
        unloaded -= r.entry.count;
        files--;
      }
      // Content-named files hold their session's key: another key means a file was
      // swapped in under this name, whose records must not be served as this session's.
      if (r.entry.key !== s.key) {
        throw new CorruptGenerationError(g, `holds session "${r.entry.key}"`);
      }
      entries.push(r.entry);
    } catch (err) {
      if (!(err instanceof CorruptGenerationError || err instanceof NotFoundError)) throw err;
      arena.noteFailure(g);
      return { failed: g };
    }
  }
  return entries;
}

/** Runs one scan. */
export async function runScan(x: ScanInput): Promise<ScanOutcome> {
  const { req, arena, pos } = x;
  const filter: SessionFilter = {
    needles: req.scanNeedles,
    trigrams: req.scanNeedles.map(needleTrigrams),
    roleMask: req.roleMask,
    from: Math.max(req.since ?? -Infinity, x.cutoff ?? -Infinity),
    to: req.until ?? Infinity,
    includeSuperseded: req.includeSuperseded,
  };
  const summaryHashes = req.scanNeedles.map(needleSummaryHashes);
  const page = new PageBuffer(req.limit + 1);
  const st: LoadState = { fresh: 0, matched: false, scan: arena.beginScan() };
  // A session was skipped for time: the page covers an unknown subset, so whatever ends
  // the scan, it ends as a timeout (no cursor may be minted past the skipped session).
  let deferred = false;
  const degraded: DegradedSession[] = [];
  const damage: ShardDamage[] = [];
  /** Session `s` could not be searched: generation `g` is missing or corrupt. */
  const damaged = (s: PlanSession, g: string) => {
    const reason = s.entry.source_gone ? "source_gone" : "damaged";
    degraded.push({ session_key: s.key, source: s.entry.source, reason });
    damage.push({ key: s.key, generation: g });
  };
  // Matching sessions after the cursor met by the page's walk (kept on the page or not).
  let after = 0;
  const end = (stop: ScanOutcome["stop"], rest: number | null = 0): ScanOutcome => {
    const exact = stop === "done" && !deferred && degraded.length === 0 && rest !== null;
    return {
      stop: deferred ? "timeout" : stop,
      groups: page.items,
      degraded,
      damage,
      after: exact ? after + rest : null,
    };
  };
  const total = x.plan.sessions.length;
  let walked = 0;
  const pageDecidedAt = () => performance.now() - x.startedAt;
  // Sessions the page's walk loaded and matched: the count's cost model.
  let searched = 0;
  for (const [at, s] of x.plan.sessions.entries()) {
    x.onProgress?.(walked++, total);
    const e = s.entry;
    // Scan order is newest-first: nothing after this can reach the lower bound.
    if (e.newest_ts_ms < filter.from) break;
    const last = page.last;
    // The session's newest record bounds its group's position from above.
    const bound = { best: e.newest_ts_ms, key: s.key };
    if (page.full && last && !before(bound, last.pos)) {
      if (deferred || degraded.length > 0) return end("done", null);
      return end(
        "done",
        await countRest(x, { from: at, filter, summaryHashes }, {
          ms: pageDecidedAt(),
          searched,
        }),
      );
    }
    const scope = { req, pos, to: filter.to };
    if (e.quarantined_at_ms !== undefined) {
      // Quarantined: no generations to load, and its messages are not in the index now.
      if (!outOfScope(s, scope)) {
        const reason = e.source_gone ? "source_gone" : "rebuilding";
        degraded.push({ session_key: s.key, source: e.source, reason });
      }
      continue;
    }
    if (e.records === 0 || outOfScope(s, scope)) continue;
    // No generation can hold some needle: no record of the session can match, whatever
    // its marks say, so it is skipped without a load (summaries exist once loaded).
    if (
      x.lexicon?.rulesOut(e.generations) || summaryRulesOut(arena, e.generations, summaryHashes)
    ) {
      continue;
    }
    if (st.fresh >= x.freshLoadBudgetBytes && e.generations.some((g) => !arena.has(g))) {
      // A skipped session may precede the safe prefix: no cursor can be minted.
      if (deferred) return end("timeout");
      const safe = page.items.filter((c) => before(c.pos, bound));
      // Never cut to an empty page: its cursor could not move, and an arena smaller than
      // the sessions between two results would make every retry reload the same ones.
      if (safe.length > 0) return { stop: "budget", groups: safe, degraded, damage, after: null };
    }
    const entries = await loadSession(x, s, st);
    if (entries === "timeout") return end("timeout");
    if (entries === "deferred") {
      deferred = true;
      continue;
    }
    if (!Array.isArray(entries)) {
      damaged(s, entries.failed);
      continue;
    }
    st.matched = true;
    searched++;
    let m;
    try {
      const active = arena.activeFor(s.key, { gens: e.generations, entries });
      m = matchSession(entries, active, filter);
    } catch (err) {
      // A block of a resident segment failed its checksum when first read.
      if (!(err instanceof CorruptGenerationError)) throw err;
      arena.noteFailure(err.generation);
      damaged(s, err.generation);
      continue;
    }
    if (!m) continue;
    const place = { best: m.best, key: s.key };
    if (pos === null || before(pos, place)) {
      after++;
      page.insert({ session: s, match: m, pos: place });
    }
  }
  return end("done");
}

/** Where count mode starts and what it shares with the page's walk. */
interface CountFrom {
  /** Index in the plan of the first session not walked. */
  from: number;
  filter: SessionFilter;
  summaryHashes: readonly (Uint32Array | null)[];
}

/**
 * Count mode: how many sessions from `c.from` on hold a match, or null when it cannot be
 * told within the budget or a session in scope could not be searched. Every session past
 * the early exit lies after the page's last group, hence after the cursor: no position is
 * needed. Two passes: the first keeps the sessions in scope that their summaries do not
 * rule out (bloom checks, nothing loaded); for a keystroke, when matching that many would
 * not fit the budget at the page's own cost per searched session, the count gives up at
 * once — a common word is never counted only to learn it cannot be. `page` is what the page took
 * and how many sessions it searched (see CountBudget.scaleWithPage).
 */
async function countRest(
  x: ScanInput,
  c: CountFrom,
  page: { ms: number; searched: number },
): Promise<number | null> {
  const { arena, req, pos } = x;
  const ms = x.count.scaleWithPage
    ? Math.min(x.count.ms, Math.max(page.ms, COUNT_MIN_MS))
    : x.count.ms;
  const deadline = performance.now() + ms;
  const scope = { req, pos, to: c.filter.to };
  const candidates: PlanSession[] = [];
  const sessions = x.plan.sessions;
  for (let j = c.from; j < sessions.length; j++) {
    const s = sessions[j]!;
    const e = s.entry;
    if (e.newest_ts_ms < c.filter.from) break;
    if (e.quarantined_at_ms !== undefined) {
      if (!outOfScope(s, scope)) return null;
      continue;
    }
    if (e.records === 0 || outOfScope(s, scope)) continue;
    if (x.lexicon?.rulesOut(e.generations)) continue;
    if (!summaryRulesOut(arena, e.generations, c.summaryHashes)) candidates.push(s);
  }
  // A keystroke's count never starts what it cannot finish; a one-shot caller waits for the
  // answer anyway, so its count runs to its deadline (a cold page's cost per session, disk
  // loads included, would predict too much for a warm arena).
  const perSession = page.ms / Math.max(page.searched, 1);
  if (x.count.scaleWithPage && candidates.length * perSession > deadline - performance.now()) {
    return null;
  }
  let fresh = 0;
  let n = 0;
  const scan = arena.beginScan();
  for (const s of candidates) {
    const e = s.entry;
    if (performance.now() > deadline) return null;
    const entries: SegmentView[] = [];
    for (const g of e.generations) {
      if (!arena.has(g) && fresh >= x.count.freshBytes) return null;
      try {
        const r = await arena.load(x.store, g, scan);
        fresh += r.freshBytes;
        if (r.entry.key !== s.key) {
          throw new CorruptGenerationError(g, `holds session "${r.entry.key}"`);
        }
        entries.push(r.entry);
      } catch (err) {
        // Not reported: damage past the early exit is the business of the page that
        // reaches it (the F8 contract); the count just stops being exact.
        if (!(err instanceof CorruptGenerationError || err instanceof NotFoundError)) throw err;
        return null;
      }
    }
    try {
      const active = arena.activeFor(s.key, { gens: e.generations, entries });
      if (sessionMatches(entries, active, c.filter)) n++;
    } catch (err) {
      if (!(err instanceof CorruptGenerationError)) throw err;
      return null;
    }
  }
  return n;
}

/** The least time count mode gets, however fast the page was. */
const COUNT_MIN_MS = 5;
