/**
 * The message search engine: the pure core behind GET /api/sessions/message-search and
 * `intendant search`. One engine per store; it owns the resident arena and the scan
 * order of the latest manifest revision. A search:
 *  1. validates the request (RangeError/TypeError → 400) and reads the manifest;
 *  2. verifies a cursor: bad MAC, malformed, oversized or minted for another request →
 *     InvalidCursorError (400); minted against another manifest revision →
 *     CursorExpiredError (410) — any publish between pages expires every cursor, so a
 *     page can never silently skip or repeat a session that moved;
 *  3. scans (run_scan.ts) under the time and fresh-load budgets and renders the page
 *     (render.ts) under the response budget; a cold engine (or one that met a revision
 *     naming many generations it has no summary of) first takes the store's summaries
 *     pack, so it rules generations out without opening them, and an exact search
 *     consults the store's lexicon (re-read when its file changed) so a rare word skips
 *     every session that cannot hold it (lexicon_filter.ts);
 *  4. hands every generation that failed to load to `onDamage` (the daemon's indexer
 *     quarantines and re-derives it in the background) — the page itself is never
 *     `ready` then: it names the sessions it could not search (types.ts, F8).
 * A page also says how many sessions the whole query matches when the scan could count
 * them within its count budget (`total_sessions`; the cursor carries the groups already
 * shown), and an empty first page says which wider request would find something
 * (suggest.ts). Never logs and never puts q into an error message. Concurrent searches share the
 * arena (and its in-flight loads); nothing else is mutable across calls.
 */
import { DAY_MS } from "../store/mod.ts";
import { Arena } from "./arena.ts";
import { LexiconCache } from "./lexicon_filter.ts";
import { CursorExpiredError, InvalidCursorError } from "./errors.ts";
import { normalizeRequest } from "./normalize_request.ts";
import { renderPage } from "./render.ts";
import { RANK_KEY, renderRelevancePage } from "./relevance_page.ts";
import { runRelevanceScan } from "./relevance_scan.ts";
import { type CountBudget, runScan } from "./run_scan.ts";
import { suggestWidenings } from "./suggest.ts";
import { buildPlan, type ScanPlan } from "./scan_plan.ts";
import { type CursorPosition, fingerprintOf, mintCursor, openCursor } from "./search_cursor.ts";
import {
  COUNT_BUDGET_COMPLETE_MS,
  COUNT_BUDGET_MS,
  COUNT_FRESH_LOAD_BYTES,
  COUNT_FRESH_LOAD_COMPLETE_BYTES,
  DEFAULT_ARENA_BYTES,
  DEFAULT_FRESH_LOAD_BUDGET_BYTES,
  DEFAULT_RESPONSE_BUDGET_BYTES,
  DEFAULT_TIME_BUDGET_MS,
  type SearchCallOptions,
  type SearchEngine,
  type SearchEngineOptions,
  type SearchRequest,
  type SearchResponse,
} from "./types.ts";

/** Shortest cursor key accepted, in bytes. */
export const CURSOR_KEY_MIN_BYTES = 16;
/**
 * Generations without a known summary past which a new revision re-reads the summaries
 * pack (one read of a few MiB) instead of loading them one by one: an append's one new
 * segment is cheaper to load, a backfill's batch is not.
 */
const PACK_RELOAD_MIN = 16;
/**
 * How often a query checks whether lexicon.pack was rebuilt (one stat): the indexer
 * writes it after the sweeps that published, so a new manifest revision alone does not
 * say it changed.
 */
const LEXICON_CHECK_MS = 1000;

/** The count's budgets (run_scan.ts): a keystroke's, and a one-shot caller's. */
const COUNT_INTERACTIVE: CountBudget = {
  ms: COUNT_BUDGET_MS,
  freshBytes: COUNT_FRESH_LOAD_BYTES,
  scaleWithPage: true,
};
const COUNT_COMPLETE: CountBudget = {
  ms: COUNT_BUDGET_COMPLETE_MS,
  freshBytes: COUNT_FRESH_LOAD_COMPLETE_BYTES,
  scaleWithPage: false,
};

type NumericOption = "arenaBytes" | "timeBudgetMs" | "responseBudgetBytes" | "freshLoadBudgetBytes";

/** `o[name]` or its default, checked: positive (the time budget may be 0). */
function numeric(o: SearchEngineOptions, { name, dflt }: { name: NumericOption; dflt: number }) {
  const v = o[name] ?? dflt;
  const allowZero = name === "timeBudgetMs";
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw new RangeError(
      `"${name}" must be a ${allowZero ? "non-negative" : "positive"} number: got "${v}"`,
    );
  }
  return v;
}

/** Creates a search engine over `o.store`. */
export function createSearchEngine(o: SearchEngineOptions): SearchEngine {
  const { store, windowDays, cursorKey, now = Date.now, isReady = () => true, onDamage } = o;
  if (!store || typeof store.readManifest !== "function") {
    throw new TypeError("Search engine needs a store");
  }
  const readManifest = o.readManifest ?? (() => store.readManifest());
  if (windowDays !== null && !(Number.isFinite(windowDays) && windowDays > 0)) {
    throw new RangeError(`Retention window must be positive days or null: got "${windowDays}"`);
  }
  if (!(cursorKey instanceof Uint8Array) || cursorKey.length < CURSOR_KEY_MIN_BYTES) {
    throw new RangeError(`Cursor key must be at least ${CURSOR_KEY_MIN_BYTES} bytes`);
  }
  const key = new Uint8Array(cursorKey);
  const timeBudgetMs = numeric(o, { name: "timeBudgetMs", dflt: DEFAULT_TIME_BUDGET_MS });
  const responseBudgetBytes = numeric(o, {
    name: "responseBudgetBytes",
    dflt: DEFAULT_RESPONSE_BUDGET_BYTES,
  });
  const freshLoadBudgetBytes = numeric(o, {
    name: "freshLoadBudgetBytes",
    dflt: DEFAULT_FRESH_LOAD_BUDGET_BYTES,
  });
  const arena = new Arena(numeric(o, { name: "arenaBytes", dflt: DEFAULT_ARENA_BYTES }));
  let plan: ScanPlan | null = null;
  const lexicon = new LexiconCache();
  let lexiconCheckedAt = -Infinity;
  /** Re-reads lexicon.pack when its file changed (at most every LEXICON_CHECK_MS). */
  const checkLexicon = async () => {
    const t = performance.now();
    if (t - lexiconCheckedAt < LEXICON_CHECK_MS) return;
    lexiconCheckedAt = t;
    const read = await store.loadLexicon(lexicon.id);
    if (read !== "unchanged") lexicon.adopt(read);
  };

  // Segments load with lazy block checks (a cold query pays for what it scans); the blocks
  // a query did not read are checked after it, one segment a tick, off every query's path,
  // so a resident copy of damaged bytes is found, dropped and reported (onDamage) before a
  // repair rewrites its file under the same name. Unref'd: a one-shot process exits
  // without waiting for it.
  let verifying = false;
  const verifyLater = () => {
    if (verifying || !arena.hasUnverified()) return;
    verifying = true;
    const tick = () => {
      const found = arena.verifyNext();
      if (found) onDamage?.([found]);
      if (arena.hasUnverified()) Deno.unrefTimer(setTimeout(tick, 0));
      else verifying = false;
    };
    Deno.unrefTimer(setTimeout(tick, 0));
  };

  async function search(req: SearchRequest, call: SearchCallOptions = {}): Promise<SearchResponse> {
    try {
      const res = await searchOnce(req, call);
      const suggestions = await suggestWidenings(req, res, (r) => searchOnce(r, {}));
      if (suggestions) res.suggestions = suggestions;
      return res;
    } finally {
      verifyLater();
    }
  }

  async function searchOnce(req: SearchRequest, call: SearchCallOptions): Promise<SearchResponse> {
    const startedAt = performance.now();
    const took = () => Math.round((performance.now() - startedAt) * 100) / 100;
    const nreq = normalizeRequest(req);
    const fp = fingerprintOf(key, nreq.identity);
    const manifest = await readManifest();
    let pos: CursorPosition | null = null;
    // Groups on the pages before this one (a first page has none; null: not known).
    let seen: number | null = 0;
    if (nreq.cursor !== null) {
      const c = openCursor(key, nreq.cursor);
      if (c.fp !== fp) {
        throw new InvalidCursorError("Cursor was minted for another query or filter set");
      }
      if (c.rev !== manifest.revision) {
        throw new CursorExpiredError(
          `Cursor expired: the index moved from revision ${c.rev} to ${manifest.revision}`,
        );
      }
      pos = c.pos;
      seen = c.seen;
    }
    // This query's plan: another query may install a newer one while this one awaits.
    let current = plan;
    if (current?.revision !== manifest.revision) {
      current = plan = buildPlan(manifest);
      const live = new Set(current.sessions.flatMap((s) => s.entry.generations));
      arena.pruneActive(current.keys);
      if (arena.unsummarized(live) > PACK_RELOAD_MIN) arena.adoptPack(await store.loadSummaries());
      arena.pruneSummaries(live);
    }
    const base = { window_days: windowDays, groups: [], cursor: null };
    const q = nreq.question;
    const queryTerms = q
      ? {
        query_terms: {
          kept: q.terms.map((t) => t.text),
          dropped: q.dropped,
          only_common: q.onlyCommon,
        },
      }
      : {};
    if (current.sessions.length === 0) {
      return { state: isReady() ? "ready" : "building", ...base, ...queryTerms, took_ms: took() };
    }
    if (q) {
      // Only common words: nothing is searched (never every session of the index).
      if (q.onlyCommon) return { state: "ready", ...base, ...queryTerms, took_ms: took() };
      if (pos !== null && pos.key !== RANK_KEY) {
        throw new InvalidCursorError("Cursor was minted for another query or filter set");
      }
      const offset = pos === null ? 0 : pos.best;
      await checkLexicon();
      const scan = await runRelevanceScan({
        ...lexicon.relevanceFilters(q),
        store,
        arena,
        plan: current,
        req: nreq,
        question: q,
        cutoff: windowDays === null ? null : now() - windowDays * DAY_MS,
        startedAt,
        timeBudgetMs: nreq.complete ? Infinity : timeBudgetMs,
        now: now(),
        pageEnd: offset + nreq.limit,
      });
      if (scan.damage.length > 0) onDamage?.(scan.damage);
      const page = renderRelevancePage(scan, {
        question: q,
        offset,
        limit: nreq.limit,
        budgetBytes: responseBudgetBytes,
      });
      const res: SearchResponse = {
        state: page.state,
        window_days: windowDays,
        groups: page.groups,
        cursor: page.next === undefined
          ? null
          : mintCursor(key, { fp, rev: manifest.revision, pos: page.next, seen: page.next.best }),
        ...queryTerms,
        took_ms: 0,
      };
      if (page.partial_reason) res.partial_reason = page.partial_reason;
      if (page.degraded) res.degraded = page.degraded;
      if (scan.stop === "done" && scan.degraded.length === 0) {
        res.total_sessions = scan.ranked.length;
      }
      res.took_ms = took();
      return res;
    }
    await checkLexicon();
    const scan = await runScan({
      store,
      arena,
      plan: current,
      req: nreq,
      pos,
      cutoff: windowDays === null ? null : now() - windowDays * DAY_MS,
      startedAt,
      // A complete request has no budget but the page itself (see SearchRequest.complete).
      timeBudgetMs: nreq.complete ? Infinity : timeBudgetMs,
      freshLoadBudgetBytes: nreq.complete ? Infinity : freshLoadBudgetBytes,
      onProgress: call.onProgress,
      count: nreq.complete ? COUNT_COMPLETE : COUNT_INTERACTIVE,
      lexicon: lexicon.filterFor(nreq.scanNeedles),
    });
    if (scan.damage.length > 0) onDamage?.(scan.damage);
    const page = renderPage(scan, {
      needles: nreq.needles,
      limit: nreq.limit,
      budgetBytes: responseBudgetBytes,
      from: pos,
    });
    const cursor = page.next === undefined ? null : mintCursor(key, {
      fp,
      rev: manifest.revision,
      pos: page.next,
      seen: seen === null ? null : seen + page.groups.length,
    });
    const res: SearchResponse = {
      state: page.state,
      window_days: windowDays,
      groups: page.groups,
      cursor,
      took_ms: 0,
    };
    if (page.partial_reason) res.partial_reason = page.partial_reason;
    if (page.degraded) res.degraded = page.degraded;
    if (seen !== null && scan.after !== null) res.total_sessions = seen + scan.after;
    res.took_ms = took();
    return res;
  }

  return { search, stats: () => ({ ...arena.stats(), lexicon_bytes: lexicon.bytes }) };
}
