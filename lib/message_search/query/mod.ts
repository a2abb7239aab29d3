/**
 * The message search query core's door: the engine, its wire types and errors, and the
 * matching fold. lib/message_search/mod.ts re-exports this file; nothing outside query/
 * imports its other files.
 */
export { createSearchEngine, CURSOR_KEY_MIN_BYTES } from "./engine.ts";
export { CursorExpiredError, InvalidCursorError } from "./errors.ts";
export { fold, foldChar, foldWithMap, toByteRange } from "./fold.ts";
export type { FoldMap } from "./fold.ts";
export { MIN_NEEDLE_CHARS, NEEDLES_MAX, parseQuery, QUERY_MAX_CHARS } from "./parse_query.ts";
/** Validates a request without running it (the server checks before it sweeps). */
export { normalizeRequest } from "./normalize_request.ts";
export type { ParsedQuery } from "./parse_query.ts";
export { CURSOR_MAX_CHARS, fingerprintOf, mintCursor, openCursor } from "./search_cursor.ts";
export type { CursorPosition, CursorState } from "./search_cursor.ts";
/** Ranges and snippet of one hit (the team engine highlights replica rows with it). */
export { highlight } from "./highlight.ts";
/** What would find something when a page is empty (the team engine answers the same rule). */
export { suggestWidenings } from "./suggest.ts";
export type { Highlight } from "./highlight.ts";
export type { NormalizedRequest } from "./normalize_request.ts";
export { ROLE_ASSISTANT, ROLE_USER } from "./normalize_request.ts";
export {
  DEFAULT_ARENA_BYTES,
  DEFAULT_FRESH_LOAD_BUDGET_BYTES,
  DEFAULT_LIMIT,
  DEFAULT_RESPONSE_BUDGET_BYTES,
  DEFAULT_TIME_BUDGET_MS,
  DEGRADED_LIST_MAX,
  HITS_PER_GROUP,
  MAX_LIMIT,
  RANGES_PER_HIT_MAX,
  SEARCH_SORTS,
  SNIPPET_MAX_BYTES,
} from "./types.ts";
export type {
  ArenaStats,
  DegradedReason,
  DegradedSession,
  DegradedSessions,
  GroupRelevance,
  QueryTerms,
  SearchCallOptions,
  SearchEngine,
  SearchEngineOptions,
  SearchGroup,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchSort,
  SearchSuggestion,
  SearchSuggestions,
} from "./types.ts";
export { onlyCommonLine, relevanceLabel } from "./relevance_label.ts";
