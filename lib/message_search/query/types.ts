/**
 * The query core's wire and option types: what GET /api/sessions/message-search and
 * `intendant search` accept and answer, and the tuning constants behind them. Pure
 * types and constants; the behaviour lives in engine.ts (scan, budgets, paging),
 * highlight.ts (ranges, snippets) and search_cursor.ts (the signed continuation cursor).
 */
import type { Source } from "../record.ts";
import type { Manifest, ShardDamage, Store } from "../store/mod.ts";

/** Session groups per page when the request names none. */
export const DEFAULT_LIMIT = 20;
/** Largest page a request may ask for. */
export const MAX_LIMIT = 100;
/** Hits shown per session group (the most recent ones). */
export const HITS_PER_GROUP = 3;
/** Longest snippet, in UTF-8 bytes of the original text. */
export const SNIPPET_MAX_BYTES = 280;
/**
 * Highlight ranges kept per hit (the earliest ones). A 256 KiB record can hold tens of
 * thousands of matches of a short needle; without a cap a single group could outgrow
 * the response budget, and a page must always be able to carry at least one group.
 */
export const RANGES_PER_HIT_MAX = 1000;
/** @default values of {@link SearchEngineOptions}. */
export const DEFAULT_ARENA_BYTES = 192 * 1024 * 1024;
export const DEFAULT_TIME_BUDGET_MS = 150;
export const DEFAULT_RESPONSE_BUDGET_BYTES = 256 * 1024;
export const DEFAULT_FRESH_LOAD_BUDGET_BYTES = 48 * 1024 * 1024;
/**
 * The count of sessions past a full page (run_scan.ts count mode): time after the page
 * was decided (at least what the page took, at most this) and generation bytes read from
 * disk. A keystroke's count stays small (it may at most double a fast query); a one-shot
 * caller (CLI, MCP: `complete`) is waited on anyway and gets more.
 */
export const COUNT_BUDGET_MS = 40;
export const COUNT_BUDGET_COMPLETE_MS = 250;
export const COUNT_FRESH_LOAD_BYTES = 16 * 1024 * 1024;
export const COUNT_FRESH_LOAD_COMPLETE_BYTES = 64 * 1024 * 1024;
/** Degraded sessions named per page (the count is always exact). */
export const DEGRADED_LIST_MAX = 20;

/** One search request (the route's query parameters, parsed). */
export interface SearchRequest {
  /** Raw user query: words are ANDed within one message; `"…"` is one phrase needle. */
  q: string;
  /** Session groups per page, 1..MAX_LIMIT. @default DEFAULT_LIMIT */
  limit?: number;
  /** Continuation from a previous page's `cursor`. */
  cursor?: string | null;
  /** Also search superseded (rolled-back, abandoned-branch) records. @default false */
  include_superseded?: boolean;
  /** Only these sources; empty or absent means all. */
  source?: Source[];
  /** Only these roles; empty or absent means both. */
  role?: ("user" | "assistant")[];
  /** Folded substring of the session's project path. */
  project?: string;
  /** Inclusive lower bound on the hit's ts_ms (epoch ms). */
  since?: number;
  /** Inclusive upper bound on the hit's ts_ms (epoch ms). */
  until?: number;
  /**
   * Lift the time and fresh-load budgets for this request: the scan runs until the page
   * is decided, so the answer is never `partial/timeout` (the response budget still
   * applies; it carries a cursor). For one-shot callers that must be complete — the CLI,
   * the MCP server — never for the dashboard's keystroke lane. Not part of a cursor's
   * identity: both modes select the same pages. @default false
   */
  complete?: boolean;
  /**
   * Page order (issue 27): `newest` — the seed's contract, unchanged: sessions by their
   * newest hit, every needle within one message; `relevance` — a question's content words
   * scored BM25 per message and per session (query/relevance/), exact sessions first,
   * then, when they fill less than a page, related ones (some words, or all of them spread
   * over several messages, or matching only without accents / with a suffix folded), each
   * group saying which (`SearchGroup.relevance`). Part of a cursor's identity.
   * @default "newest"
   */
  sort?: SearchSort;
}

/** The two page orders of {@link SearchRequest.sort}. */
export type SearchSort = "newest" | "relevance";
export const SEARCH_SORTS: readonly SearchSort[] = ["newest", "relevance"];

/** How a group of a relevance page matched (absent on newest pages). */
export interface GroupRelevance {
  /**
   * exact: one message holds every content word (and every quoted phrase) as the seed's
   * fold matches it; related: anything less — shown only after the exact groups.
   */
  tier: "exact" | "related";
  /** Content words of the question found in the session (any message). */
  terms_matched: number;
  /** Content words of the question (stopwords and question words dropped). */
  terms_total: number;
  /** Every content word is in the session, but no one message holds them all. */
  spread: boolean;
  /** Some word matched only with accents stripped or a suffix folded. */
  loose: boolean;
  /** The session's score (larger is better; comparable within one response only). */
  score: number;
}

/** What a relevance request made of its question (absent on newest pages). */
export interface QueryTerms {
  /** The content words and phrases searched, folded. */
  kept: string[];
  /** Words dropped as stopwords or question words. */
  dropped: string[];
  /**
   * Every word was a stopword or a question word ("how did we"): nothing was searched —
   * say so instead of listing every session.
   */
  only_common: boolean;
}

/** Per-call hooks of {@link SearchEngine.search} (not part of the wire request). */
export interface SearchCallOptions {
  /** Called as the scan walks sessions (scanned so far, sessions in the plan). */
  onProgress?: (scanned: number, total: number) => void;
}

/** One matching record. */
export interface SearchHit {
  record_id: string;
  role: "user" | "assistant";
  ts_ms: number;
  seq: number | null;
  superseded: boolean;
  truncated: boolean;
  subagent: boolean;
  /**
   * Original text bytes [snippet_offset_bytes, +len), ≤ SNIPPET_MAX_BYTES, whole characters;
   * when the message is longer it starts and ends on a word edge where one lies near.
   */
  snippet: string;
  /** Where the snippet starts in the record text; > 0: the message begins before it. */
  snippet_offset_bytes: number;
  /** True when the message continues after the snippet (clients print "…"). */
  snippet_cut_end: boolean;
  /** UTF-8 byte ranges into the ORIGINAL record text, sorted, overlaps merged. */
  ranges: [number, number][];
  /** encodeLocator(record.locator): base64url, opaque to clients. */
  locator: string;
}

/** One session's hits. */
export interface SearchGroup {
  session_key: string;
  source: Source;
  session_id: string;
  /** ts_ms of the session's most recent hit: the page's sort key (descending). */
  best_ts_ms: number;
  /** Every matching record of the session after filters (not just the ones shown). */
  total_hits: number;
  source_gone: boolean;
  title: string | null;
  project: string | null;
  /**
   * At most HITS_PER_GROUP: most recent first on a newest page; best-matching first on a
   * relevance page (every matched word highlighted in `ranges`).
   */
  hits: SearchHit[];
  /** Relevance pages only: how the session matched. */
  relevance?: GroupRelevance;
}

/**
 * Why a session in a page's scope could not be searched:
 *  - damaged:     a generation of its shard failed to load during this scan (hash
 *                 mismatch, unparsable, missing); the finder reports it (onDamage) and
 *                 the daemon quarantines and re-derives it in a background sweep at once;
 *  - rebuilding:  its shard is quarantined (store/types.ts) and its sources are present:
 *                 the next sweep re-derives it;
 *  - source_gone: its shard was damaged and its source files are gone: it cannot be
 *                 re-derived, its messages are lost to the index (never retried in a loop;
 *                 it heals only if the source returns).
 */
export type DegradedReason = "damaged" | "rebuilding" | "source_gone";

/** One session a page could not search. */
export interface DegradedSession {
  session_key: string;
  source: Source;
  reason: DegradedReason;
}

/** The sessions a page could not search. */
export interface DegradedSessions {
  /** Every such session the scan met (exact). */
  count: number;
  /** Of count: reason source_gone (cannot be rebuilt); the rest are being rebuilt. */
  lost: number;
  /** The first DEGRADED_LIST_MAX of them, in scan order. */
  sessions: DegradedSession[];
}

/**
 * One page of results. The contract (reliability-plan F8): `ready` means complete — every
 * session that could hold a group of this page was searched. A scan that met a session in
 * the request's scope (source, project, time bounds, not before the cursor, not after the
 * page's early exit) that it could not search never answers `ready`: the page is
 * `partial` with partial_reason "degraded" and `degraded` names those sessions. When a
 * budget also cut the page, its reason (timeout/budget) wins and `degraded` still names
 * them. A degraded page keeps the cursor a ready page would carry: the order of what was
 * searched is exact, only the named sessions are missing. Clients say "no matches" only
 * for `ready`.
 */
export interface SearchResponse {
  /** building: nothing published yet; partial: a budget or a damaged shard cut it short. */
  state: "ready" | "building" | "partial";
  /**
   * timeout carries no cursor (unknown subset scanned); budget carries one; degraded
   * carries what ready would (see `degraded`).
   */
  partial_reason?: "timeout" | "budget" | "degraded";
  /** Present iff the scan met sessions it could not search. */
  degraded?: DegradedSessions;
  window_days: number | null;
  groups: SearchGroup[];
  cursor: string | null;
  /**
   * How many sessions the whole query matches, over every page (those before a cursor
   * included). Present only when known exactly: the scan reached the end of the request's
   * scope within its counting budget. Absent means "more than shown, how many unknown".
   */
  total_sessions?: number;
  /**
   * On an empty `ready` first page only: what a wider request would find, each counted by
   * running it (never guessed). A key is present only when its filter was set and the
   * widened search found at least one session; an absent object means nothing would help.
   */
  suggestions?: SearchSuggestions;
  /** Relevance pages only: the words searched and dropped. */
  query_terms?: QueryTerms;
  took_ms: number;
}

/** What one widening of an empty request finds (see SearchResponse.suggestions). */
export interface SearchSuggestion {
  /** Sessions found: the exact total, or at least this many when `more`. */
  sessions: number;
  /** True when there are more than `sessions` (the count stopped at a budget). */
  more: boolean;
}

/** The widenings an empty page counts. */
export interface SearchSuggestions {
  /** The same request with rewound (superseded) messages included. */
  include_superseded?: SearchSuggestion;
  /** Without the source filter. */
  all_sources?: SearchSuggestion;
  /** Without the role filter. */
  all_roles?: SearchSuggestion;
}

/** What the resident arena holds and has done (for health and tests). */
export interface ArenaStats {
  /** Resident bytes of resident segments: their buffers plus each view's fixed overhead. */
  bytes: number;
  capBytes: number;
  /** Resident generation files. */
  shards: number;
  hits: number;
  misses: number;
  evictions: number;
  /** Generation bytes read from disk since the engine started. */
  loadedBytes: number;
  /** Loads that failed because a generation was missing or corrupt (session skipped). */
  failedLoads: number;
  /** The most recent failed generations (newest last, at most 16). */
  failedGenerations: string[];
  /** Sessions whose active flags are cached. */
  activeCached: number;
  /** Bytes of the store lexicon the engine holds (0: none; set by the engine). */
  lexicon_bytes?: number;
  /** Generations whose bigram/trigram summary is resident (loaded, or the store's pack). */
  summaries: number;
  /** Bytes of those summaries (outside the arena's cap: ~2 KiB per generation). */
  summaryBytes: number;
}

/** Options for createSearchEngine. */
export interface SearchEngineOptions {
  store: Store;
  /** Retention window in days; null searches everything the store holds. */
  windowDays: number | null;
  /** HMAC-SHA256 key for cursors (the server persists one under the state root). */
  cursorKey: Uint8Array;
  /** @default DEFAULT_ARENA_BYTES */
  arenaBytes?: number;
  /** @default DEFAULT_TIME_BUDGET_MS */
  timeBudgetMs?: number;
  /** @default DEFAULT_RESPONSE_BUDGET_BYTES */
  responseBudgetBytes?: number;
  /** @default DEFAULT_FRESH_LOAD_BUDGET_BYTES */
  freshLoadBudgetBytes?: number;
  /** Wall clock for the retention window. @default Date.now */
  now?: () => number;
  /** indexer.ready; false with an empty manifest answers state "building". @default () => true */
  isReady?: () => boolean;
  /**
   * Where each query reads the manifest. store.readManifest parses and validates the
   * whole file every time (27–100 ms at 2,000 sessions); a long-running server should
   * inject a reader that re-parses only when the revision moved.
   * @default () => store.readManifest()
   */
  readManifest?: () => Promise<Manifest>;
  /**
   * Told, synchronously inside search(), of every generation that failed to load (the
   * daemon wires Indexer.reportDamage: quarantine and a background re-derivation sweep).
   * Never awaited: a query never waits on the repair it triggers.
   */
  onDamage?: (found: readonly ShardDamage[]) => void;
}

/** A search engine over one store. */
export interface SearchEngine {
  search(req: SearchRequest, o?: SearchCallOptions): Promise<SearchResponse>;
  stats(): ArenaStats;
}
