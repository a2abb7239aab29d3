/**
 * The session catalog used by the HTTP API and the CLI: listing (native + external,
 * names overlaid, paged), the paged session detail with jump-to-hit (`locate`), Deep
 * Search over full native logs, the session report zip, and native deletion into the
 * trash (restore, listing, GC: trash_layout.ts is the trash's spec). The only
 * public door of lib/catalog/. Ids, locators and cursors come from the network: each is
 * validated before any file is touched, and every file read goes through the contained
 * reader (safe_fs.ts).
 */
export type {
  ActivityStatus,
  CatalogDeps,
  DeepHit,
  DeepScanned,
  DeepSearchResult,
  DeepSourceTally,
  DetailEntry,
  KeptCopy,
  LocateResult,
  PendingQuestion,
  SessionDetail,
  SessionSummary,
  ToolCallEntry,
  ToolOutput,
} from "./types.ts";
export {
  DETAIL_DEFAULT_LIMIT,
  DETAIL_MAX_LIMIT,
  ENTRY_TEXT_CAP_BYTES,
  EXCERPT_CAP_BYTES,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  MalformedLocatorError,
  TOOL_INPUT_CAP_BYTES,
} from "./types.ts";
export { listSessions } from "./list_sessions.ts";
export type { ListOptions, SessionList } from "./list_sessions.ts";
export { KEY_MAX_CHARS, parseSessionKey, resolveSessionKey } from "./resolve_key.ts";
export type { ParsedKey, ResolvedKey } from "./resolve_key.ts";
export { parseLocate, sessionDetail } from "./session_detail.ts";
export { DamagedSessionError } from "./external_detail.ts";
export type { DetailOptions } from "./session_detail.ts";
export {
  DEEP_DEFAULT_LIMIT,
  DEEP_DEFAULT_MAX_BYTES,
  DEEP_MAX_LIMIT,
  deepSearch,
} from "./deep_search.ts";
export type { DeepSearchOptions } from "./deep_search.ts";
export { addDeepScanned, describeDeepScan, emptyDeepScanned } from "./deep_tally.ts";
export { REPORT_MAX_TOTAL_BYTES, sessionReportStream, sessionReportZip } from "./report_zip.ts";
export type { ReportOptions, ReportStream } from "./report_zip.ts";
export { nativeReplay, REPLAY_PAGE_MAX_BYTES } from "./native_replay.ts";
export type { ReplayPage } from "./native_replay.ts";
export {
  SPINE_BUILDS_MAX,
  SPINE_CACHE,
  SPINE_CACHE_MAX_BYTES,
  SPINE_CACHE_MAX_ENTRIES,
  SPINE_INDEX_MAX_ENTRIES,
  SpineCache,
} from "./spine_cache.ts";
export { resumeCommand, shellQuote } from "./resume.ts";
export {
  deleteNativeSession,
  MIN_PREFIX_CHARS,
  pickSessionId,
  resolveNativeForDelete,
  ShortPrefixError,
} from "./delete_session.ts";
export type { TrashedSession } from "./delete_session.ts";
export { restoreNativeSession } from "./trash_restore.ts";
export type { RestoredSession } from "./trash_restore.ts";
export { listTrash } from "./trash_list.ts";
export type { TrashEntry } from "./trash_list.ts";
export { gcTrash } from "./trash_gc.ts";
export { finishInterruptedDeletes } from "./trash_recover.ts";
export type { TrashGcOptions, TrashGcReport } from "./trash_gc.ts";
export { messageCount, sessionFacts } from "./trash_facts.ts";
export type { SessionFacts } from "./trash_facts.ts";
export { TRASH_DIR, TRASH_KEEP_DAYS, TRASH_KEEP_MS, trashDirOf } from "./trash_layout.ts";
export type { TrashDeps } from "./trash_layout.ts";
export { openInside, readInside } from "./safe_fs.ts";
export type { OpenResult, ReadResult, Refusal, SafeFile } from "./safe_fs.ts";
export {
  isLiveStatus,
  PENDING_QUESTION_MAX_BYTES,
  readPendingQuestion,
  readSessionStatus,
} from "./pending_question.ts";
