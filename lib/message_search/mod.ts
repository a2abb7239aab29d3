/**
 * Message search: the rolling message index over this machine's agent conversations.
 * Records and marks (record.ts), locators, cursors, the crash-safe shard store, the
 * extractors, the indexer and coverage. The only public door of lib/message_search/.
 */
export * from "./record.ts";
export * from "./locator.ts";
export type { CursorClass, FileCursor } from "./cursor_types.ts";
export * from "./store/mod.ts";
export * from "./store/types.ts";
export { Indexer } from "./indexer.ts";
export type {
  IndexerOptions,
  SourceSweep,
  SweepProgress,
  SweepReport,
  SweepScope,
} from "./indexer.ts";
export * from "./freshness/mod.ts";
export { type WatchTarget, watchTargetsOf } from "./extractor_set.ts";
export {
  buildCoverage,
  COVERAGE_DEGRADED_MAX,
  indexerCoverage,
  LEGACY_MATRIX,
} from "./coverage.ts";
export type {
  Coverage,
  DegradedCoverage,
  DegradedShard,
  IndexerState,
  SourceCoverage,
} from "./coverage.ts";
export {
  CLAUDE_PARSER_VERSION,
  closeSharedSnapshots,
  CODEX_PARSER_VERSION,
  COPILOT_PARSER_VERSION,
  createClaudeExtractor,
  createCodexExtractor,
  createCopilotExtractor,
  createCursorExtractor,
  createDroidExtractor,
  createGeminiExtractor,
  createGooseExtractor,
  createIntendantExtractor,
  createKimiExtractor,
  createOpenCodeExtractor,
  createPiExtractor,
  createQwenExtractor,
  CURSOR_PARSER_VERSION,
  DROID_PARSER_VERSION,
  EXPORT_FORMAT,
  exportSessionRows,
  exportStoreSession,
  GEMINI_PARSER_VERSION,
  GOOSE_PARSER_VERSION,
  INTENDANT_PARSER_VERSION,
  KIMI_PARSER_VERSION,
  KIMI_WIRE_MAX_RECORD_BYTES,
  OPENCODE_PARSER_VERSION,
  PI_PARSER_VERSION,
  QWEN_PARSER_VERSION,
  SPAN_HASH_MAX_BYTES,
  SQLITE_EXPORTS,
  storeStampMs,
  WIRED_SOURCES,
} from "./extract/mod.ts";
export type {
  Discovery,
  Extractor,
  ExtractOutcome,
  PriorShard,
  ResumeFacts,
  SessionExport,
  SessionUnit,
  ShardContent,
  SourceRow,
  SqliteExportSpec,
} from "./extract/mod.ts";
export { buildExtractors, createMessageIndex, PARSER_VERSION } from "./wiring.ts";
export { poolSpecOf, registerPoolable, SQLITE_SNAPSHOT_DIR } from "./extractor_set.ts";
export type { PoolSpec } from "./extractor_set.ts";
export type { ExtractionReport } from "./pool/mod.ts";
export type { MessageIndex, MessageIndexOptions } from "./wiring.ts";
export { resolveSourceRoots } from "./roots.ts";
export { SOURCE_TABLE, sourceRow } from "./source_table.ts";
export { sourceLocations } from "./source_locations.ts";
export type { SourceLocation } from "./source_locations.ts";
export { sourceIoStats } from "./io_stats.ts";
export type { ExternalSource, SourceHome, SourceRoots } from "./roots.ts";
export { registerLeasedHome, releaseLeasedHome, TRANSCRIPT_SUBDIRS } from "./lease.ts";
export type { ReleaseReport } from "./lease.ts";
export * from "./query/mod.ts";
export * from "./archive/mod.ts";
export type { SweepBand, SweepFollower } from "./indexer.ts";
