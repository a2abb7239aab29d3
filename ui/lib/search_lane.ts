/**
 * The message lane's controller, free of the DOM so its races are unit-testable: input
 * is debounced (DEBOUNCE_MS), a query needs a searchable term (2+ characters, or one
 * Han/Hiragana/Katakana/Hangul character, as the server reads them: fold.ts), every
 * request goes through one LatestGate (a new request aborts the in-flight one, and a
 * response whose ticket is no longer current is dropped), so the state never shows an
 * older query's results as the answer to a newer one.
 *
 * Server answers it reacts to:
 *  - 410 cursor_expired on "load more": the index published a new revision since page 1.
 *    The cursor and results are dropped, page 1 is re-run, and a notice says so.
 *  - partial_reason "timeout": a page cut by the time budget carries no cursor (an
 *    unknown subset was scanned). The first query after a daemon starts meets a cold
 *    arena and usually times out; every attempt warms it. So the lane shows what has
 *    arrived and retries at once, transparently, while the answer is still timeout-
 *    partial and less than TIMEOUT_RETRY_WINDOW_MS have passed since the query was sent;
 *    only a page still partial after that gets the "ran out of time" notice (with Retry).
 *  - partial_reason "budget": the page is honest but short; its cursor continues it.
 *  - `degraded` (F8): some sessions could not be searched because their index data is
 *    damaged. The notice says plainly how many, and whether they are being rebuilt (the
 *    daemon started a sweep when the search met the damage) or are lost (sources gone).
 *    A first page with sessions being rebuilt is asked again after DEGRADED_RETRY_MS, up
 *    to DEGRADED_RETRIES_MAX times, so the lane heals without a keystroke; it is never
 *    described as complete ("No messages match") while anything is degraded.
 *  - 429 busy: retried after Retry-After while the query is still the latest.
 *  - `total_sessions` (when the server knows it exactly) is kept across "load more" pages,
 *    so the lane can say "20 of 57 sessions"; `suggestions` (an empty first page only:
 *    what a wider request would really find) are kept for the empty state to offer.
 *  - `query_terms` (relevance pages only, issue 27): what the question was reduced to;
 *    `only_common` means nothing was searched. A query with `sort: "relevance"` has its
 *    own key; a newest query's key (and request) is exactly what it was before the switch.
 */
import {
  ApiError,
  type DegradedSessions,
  type QueryTerms,
  type SearchGroup,
  type SearchPage,
  type SearchParams,
  type SearchSuggestions,
  type Source,
} from "../api_client.ts";
import { queryTerms } from "./fold.ts";
import { createLatestGate, isAbort } from "./latest.ts";

export const DEBOUNCE_MS = 225;
/** How long timeout-partial pages are retried before the lane says the answer is partial. */
export const TIMEOUT_RETRY_WINDOW_MS = 2_000;
const BUSY_RETRY_MS = 400;
const BUSY_RETRIES_MAX = 5;
const RESTARTS_MAX = 3;
/** When a page with sessions being rebuilt is asked again (a repair sweep takes ~1 s). */
export const DEGRADED_RETRY_MS = 1_500;
export const DEGRADED_RETRIES_MAX = 3;

/** What the user asked for. */
export interface LaneQuery {
  q: string;
  includeSuperseded: boolean;
  source: readonly Source[];
  role: readonly ("user" | "assistant")[];
  /**
   * "team": the team database; "archive": sessions older than the window; absent: this
   * machine (the key stays the local one).
   */
  scope?: "team" | "archive";
  /** Team scope: only these machines. */
  machines?: readonly string[];
  /** "relevance": Best match order (absent: newest, and the key stays the newest one). */
  sort?: "relevance";
}

/** What the lane shows. */
export interface LaneState {
  /** idle: nothing to search; loading: a request for the latest query is pending. */
  status: "idle" | "loading" | "ready" | "error";
  /** The query the shown groups answer (null when none are shown). */
  shownQuery: LaneQuery | null;
  /** True while the shown groups answer an older query than the one typed. */
  stale: boolean;
  groups: SearchGroup[];
  cursor: string | null;
  loadingMore: boolean;
  partial: "timeout" | "budget" | "degraded" | null;
  /** Sessions the shown page could not search (damaged index data), or null. */
  degraded: DegradedSessions | null;
  building: boolean;
  notice: string | null;
  error: string | null;
  tookMs: number | null;
  /** Sessions the whole query matches over every page, when the server knows it exactly. */
  totalSessions: number | null;
  /** An empty first page's widenings that would find something (null: none, or not said). */
  suggestions: SearchSuggestions | null;
  /** A relevance page's words searched and dropped (null: a newest page). */
  queryTerms: QueryTerms | null;
}

/** Dependencies (the real ones in the hook, fakes in tests). */
export interface LaneOptions {
  search(p: SearchParams, signal: AbortSignal): Promise<SearchPage>;
  onChange(s: LaneState): void;
  /** Session groups per page. */
  limit: number;
  /** @default DEBOUNCE_MS */
  debounceMs?: number;
  /** @default TIMEOUT_RETRY_WINDOW_MS */
  timeoutRetryWindowMs?: number;
  /** @default DEGRADED_RETRY_MS */
  degradedRetryMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** The controller. */
export interface SearchLane {
  set(query: LaneQuery | null): void;
  loadMore(): void;
  retry(): void;
  dispose(): void;
}

/** Stable identity of a query (filters included). */
export function laneKey(q: LaneQuery | null): string {
  if (!q) return "";
  const local = [q.q.trim(), q.includeSuperseded, [...q.source].sort(), [...q.role].sort()];
  // Team queries append their scope and machines, relevance queries their order: a local
  // newest key is unchanged.
  const key: unknown[] = q.scope === "team"
    ? [...local, "team", [...q.machines ?? []].sort()]
    : q.scope === "archive"
    ? [...local, "archive"]
    : local;
  return JSON.stringify(q.sort === "relevance" ? [...key, "sort", "relevance"] : key);
}

/** True when the query has a term the server will search for. */
export function searchable(q: string): boolean {
  return queryTerms(q).length > 0;
}

export const IDLE: LaneState = {
  status: "idle",
  shownQuery: null,
  stale: false,
  groups: [],
  cursor: null,
  loadingMore: false,
  partial: null,
  degraded: null,
  building: false,
  notice: null,
  error: null,
  tookMs: null,
  totalSessions: null,
  suggestions: null,
  queryTerms: null,
};

function sessions(n: number): string {
  return `${n} session${n === 1 ? "" : "s"}`;
}

/** The plain statement of what a degraded page could not search. */
export function degradedNotice(d: DegradedSessions, retrying: boolean): string {
  const rebuilding = d.count - d.lost;
  const parts: string[] = [];
  if (rebuilding > 0) {
    parts.push(
      `${sessions(rebuilding)} could not be searched: ${
        rebuilding === 1 ? "its" : "their"
      } index data was damaged and is being rebuilt${
        retrying ? " — searching again shortly." : ". Retry in a moment."
      }`,
    );
  }
  if (d.lost > 0) {
    parts.push(
      `${sessions(d.lost)} could not be searched and cannot be rebuilt: ${
        d.lost === 1 ? "its" : "their"
      } index data was damaged and the source files are gone.`,
    );
  }
  return parts.join(" ");
}

type Mode = "first" | "more" | "restart";

/** How one request came about (see run). */
interface RunState {
  busyTries?: number;
  base?: SearchGroup[] | null;
  retrying?: boolean;
  /** Degraded first pages asked again so far (see DEGRADED_RETRY_MS). */
  degradedTries?: number;
}

/** Creates a lane. */
export function createSearchLane(o: LaneOptions): SearchLane {
  const gate = createLatestGate();
  const debounceMs = o.debounceMs ?? DEBOUNCE_MS;
  const retryWindowMs = o.timeoutRetryWindowMs ?? TIMEOUT_RETRY_WINDOW_MS;
  const degradedRetryMs = o.degradedRetryMs ?? DEGRADED_RETRY_MS;
  const now = o.now ?? Date.now;
  let state: LaneState = IDLE;
  let query: LaneQuery | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** When the current page was first asked for: timeout retries stop RETRY_WINDOW after it. */
  let askedAt = 0;
  let restarts = 0;
  const emit = (patch: Partial<LaneState>) => {
    state = { ...state, ...patch };
    o.onChange(state);
  };
  const clearTimer = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };

  /**
   * One request. A timeout retry keeps its mode and the time the page was first asked
   * for; `base` is, for a retried "load more" page, the groups shown before that page (the
   * retry replaces only the page it retries).
   */
  async function run(mode: Mode, cursor: string | null, r: RunState = {}): Promise<void> {
    const { busyTries = 0, base = null, retrying = false, degradedTries = 0 } = r;
    const q = query;
    if (!q) return;
    const t = gate.begin();
    if (!retrying) askedAt = now();
    if (mode === "more") emit({ loadingMore: true });
    else emit({ status: "loading", error: null });
    let page: SearchPage;
    try {
      page = await o.search({
        q: q.q.trim(),
        limit: o.limit,
        cursor,
        includeSuperseded: q.includeSuperseded,
        source: q.source,
        role: q.role,
        ...(q.scope === "team" ? { scope: "team" as const, machines: q.machines ?? [] } : {}),
        ...(q.scope === "archive" ? { scope: "archive" as const } : {}),
        ...(q.sort === "relevance" ? { sort: "relevance" as const } : {}),
      }, t.signal);
    } catch (err) {
      if (isAbort(err) || !t.current()) return;
      if (err instanceof ApiError && err.status === 410 && restarts < RESTARTS_MAX) {
        restarts++;
        emit({
          groups: [],
          cursor: null,
          shownQuery: null,
          loadingMore: false,
          partial: null,
          degraded: null,
          totalSessions: null,
          suggestions: null,
          queryTerms: null,
          notice: "The index changed while paging — results restarted from the top.",
        });
        return run("restart", null);
      }
      if (err instanceof ApiError && err.status === 429 && busyTries < BUSY_RETRIES_MAX) {
        timer = setTimeout(() => {
          if (t.current()) void run(mode, cursor, { ...r, busyTries: busyTries + 1 });
        }, err.retryAfterMs ?? BUSY_RETRY_MS);
        return;
      }
      emit({
        status: "error",
        loadingMore: false,
        stale: false,
        groups: mode === "more" ? state.groups : [],
        shownQuery: mode === "more" ? state.shownQuery : null,
        queryTerms: mode === "more" ? state.queryTerms : null,
        error: (err as Error).message,
      });
      return;
    }
    if (!t.current()) return; // a newer request owns the lane
    const before = base ?? (mode === "more" ? state.groups : null);
    const groups = before ? appendGroups(before, page.groups) : page.groups;
    const partial = page.state === "partial" ? page.partial_reason ?? "timeout" : null;
    let notice = mode === "restart" ? state.notice : mode === "more" ? state.notice : null;
    if (partial === "timeout" && now() - askedAt < retryWindowMs) {
      // Show what has arrived (it is real, just not yet all) and ask again at once: the
      // attempt just made warmed the arena, so the next one gets further.
      emit({
        status: "loading",
        groups,
        shownQuery: q,
        stale: false,
        cursor: null,
        partial: null,
        loadingMore: mode === "more",
        notice,
        building: page.state === "building",
        queryTerms: page.query_terms ?? (mode === "more" ? state.queryTerms : null),
      });
      return run(mode, cursor, { base: before, retrying: true });
    }
    if (partial === "timeout") notice = "Partial results: the search ran out of time.";
    else if (partial === "budget") {
      notice = "Partial page: the response budget was reached — load more to continue.";
    }
    const degraded = page.degraded ?? null;
    // A first page missing sessions that are being rebuilt is asked again shortly: the
    // search that met the damage started the repair sweep.
    const again = degraded !== null && degraded.count > degraded.lost && mode !== "more" &&
      degradedTries < DEGRADED_RETRIES_MAX;
    if (degraded) {
      const what = degradedNotice(degraded, again);
      // A degraded-only page's notice is this statement (a later page's replaces page
      // 1's); beside a timeout/budget notice it is appended.
      notice = partial !== "degraded" && notice ? `${notice} ${what}` : what;
    }
    if (mode !== "restart") restarts = 0;
    if (again) {
      timer = setTimeout(() => {
        timer = null;
        if (t.current()) void run(mode, null, { degradedTries: degradedTries + 1 });
      }, degradedRetryMs);
    }
    emit({
      status: "ready",
      groups,
      shownQuery: q,
      stale: false,
      cursor: page.cursor,
      loadingMore: false,
      partial,
      degraded,
      building: page.state === "building",
      notice,
      error: null,
      tookMs: page.took_ms,
      // Every page of one query answers the same total; a page without one keeps page 1's.
      totalSessions: page.total_sessions ?? (mode === "more" ? state.totalSessions : null),
      suggestions: mode !== "more" && groups.length === 0 ? usefulSuggestions(page) : null,
      queryTerms: page.query_terms ?? (mode === "more" ? state.queryTerms : null),
    });
  }

  return {
    set(next) {
      const same = laneKey(next) === laneKey(query) && (state.status !== "idle" || !next);
      if (same) return;
      clearTimer();
      query = next && searchable(next.q) ? next : null;
      if (!query) {
        gate.cancel();
        emit(IDLE);
        return;
      }
      gate.cancel(); // the in-flight request answers a query that is no longer typed
      emit({ status: "loading", stale: state.groups.length > 0, loadingMore: false });
      timer = setTimeout(() => {
        timer = null;
        restarts = 0;
        void run("first", null);
      }, debounceMs);
    },
    loadMore() {
      if (state.status !== "ready" || !state.cursor || state.loadingMore) return;
      void run("more", state.cursor);
    },
    retry() {
      if (!query) return;
      clearTimer();
      void run("first", null);
    },
    dispose() {
      clearTimer();
      gate.cancel();
    },
  };
}

/** The page's suggestions that would find at least one session, or null. */
function usefulSuggestions(page: SearchPage): SearchSuggestions | null {
  const s = page.suggestions;
  if (!s || page.state !== "ready") return null;
  const kept = Object.fromEntries(
    Object.entries(s).filter(([, v]) => v !== undefined && v.sessions > 0),
  ) as SearchSuggestions;
  return Object.keys(kept).length ? kept : null;
}

/** Appends a page's groups, skipping sessions already shown. */
function appendGroups(have: readonly SearchGroup[], more: readonly SearchGroup[]): SearchGroup[] {
  const seen = new Set(have.map((g) => g.session_key));
  return [...have, ...more.filter((g) => !seen.has(g.session_key))];
}
