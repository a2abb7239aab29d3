/**
 * Parallel extraction (issue 16 §4): the worker pool, the unit job both threads run, and
 * the ordered window the indexer consumes results through. The only door of pool/.
 */
export {
  defaultPoolSize,
  ExtractPool,
  PoolUnavailableError,
  workerSource,
} from "./extract_pool.ts";
export type { ExtractPoolOptions, PoolStats, WorkerSource } from "./extract_pool.ts";
export { OrderedWindow } from "./ordered_window.ts";
export type { Settled } from "./ordered_window.ts";
export { runUnitJob, summarize } from "./unit_job.ts";
export type {
  ContentSummary,
  EncodeSpec,
  PreparedContent,
  UnitJob,
  UnitResult,
} from "./unit_job.ts";
export { POOL_MIN_UNIT_BYTES, POOL_START_BYTES, UnitRouter } from "./unit_router.ts";
export type { ExtractionReport, UnitRouterOptions } from "./unit_router.ts";
export { STORE_TAKES_ENCODED } from "./encode.ts";
export type { EncodedSegment } from "./encode.ts";
