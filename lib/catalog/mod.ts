/**
 * The session catalog used by the HTTP API and the CLI: listing (native + external,
 * names overlaid, paged), the paged session detail with jump-to-hit (`locate`), Deep
 * Search over full native logs, the session report zip, and native deletion. The only
 * public door of lib/catalog/. Ids, locators and cursors come from the network: each is
 * validated before any file is touched, and every file read goes through the contained
 * reader (safe_fs.ts).
 */
export type {
  CatalogDeps,
  DeepHit,
  DeepSearchResult,
  DetailEntry,
  LocateResult,
  SessionDetail,
  SessionSummary,
} from "./types.ts";
export {
  DETAIL_DEFAULT_LIMIT,
  DETAIL_MAX_LIMIT,
  ENTRY_TEXT_CAP_BYTES,
  EXCERPT_CAP_BYTES,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  MalformedLocatorError,
} from "./types.ts";
export { listSessions } from "./list_sessions.ts";
export type { ListOptions, SessionList } from "./list_sessions.ts";
export { KEY_MAX_CHARS, parseSessionKey, resolveSessionKey } from "./resolve_key.ts";
export type { ParsedKey, ResolvedKey } from "./resolve_key.ts";
export { parseLocate, sessionDetail } from "./session_detail.ts";
export type { DetailOptions } from "./session_detail.ts";
export {
  DEEP_DEFAULT_LIMIT,
  DEEP_DEFAULT_MAX_BYTES,
  DEEP_MAX_LIMIT,
  deepSearch,
} from "./deep_search.ts";
export type { DeepSearchOptions } from "./deep_search.ts";
export { REPORT_MAX_TOTAL_BYTES, sessionReportZip } from "./report_zip.ts";
export type { ReportOptions } from "./report_zip.ts";
export { resumeCommand, shellQuote } from "./resume.ts";
export { deleteNativeSession } from "./delete_session.ts";
export { openInside } from "./safe_fs.ts";
export type { OpenResult, Refusal, SafeFile } from "./safe_fs.ts";
