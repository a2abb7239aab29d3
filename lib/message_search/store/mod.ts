/**
 * The shard store's door: open a store, publish shard updates, read manifests and
 * segments, retention/GC, and the writer lock. The message_search subsystem's mod.ts
 * re-exports from here; nothing outside store/ imports its other files.
 */
export type { Store, StoreOptions } from "./store.ts";
export { DEFAULT_LOCK_WAIT_MS, openStore } from "./store.ts";
export { slicePause } from "./slice_pause.ts";
export { COMPACT_MAX_SEGMENTS } from "./_apply_update.ts";
export type { GcReport } from "./gc.ts";
export { DAY_MS, GC_GRACE_MS } from "./gc.ts";
export { JOURNAL_FILE } from "./journal.ts";
export { JOURNAL_MIN_BYTES, JOURNAL_ROOM_FACTOR } from "./manifest_state.ts";
export type { ManifestRead } from "./manifest_io.ts";
export {
  emptyManifest,
  MANIFEST_FILE,
  MANIFEST_MAX_BYTES,
  parseManifestBytes,
  QUARANTINE_KEEP,
} from "./manifest_io.ts";
export { CorruptGenerationError, GENERATION_NAME_RE, GENERATIONS_DIR } from "./segments.ts";
export { encodeSegment } from "./segment_encode.ts";
export { decodeRecords, decodeSegment, SegmentView } from "./segment_view.ts";
export type { DecodeOptions, RecordTail } from "./segment_view.ts";
export type { TermsView } from "./segment_terms.ts";
export { FLAG_ASSISTANT, FLAG_SUBAGENT, FLAG_TRUNCATED, FLAG_USER } from "./segment_layout.ts";
export type { Summaries } from "./summary_pack.ts";
export { LEXICON_FILE, LexiconView } from "./lexicon_pack.ts";
export type { LexiconRead } from "./lexicon_pack.ts";
export type { LexiconRefresh } from "./lexicon_refresh.ts";
export { SUMMARY_PACK_FILE } from "./summary_pack.ts";
export type { HoldLockOptions, LockHandle } from "./writer_lock.ts";
export { holdLock, LOCK_FILE } from "./writer_lock.ts";
export type {
  EncodedSegment,
  EntryMeta,
  Manifest,
  ManifestEntry,
  PublishResult,
  ShardDamage,
  ShardSegment,
  ShardUpdate,
} from "./types.ts";
export {
  EntryMetaSchema,
  MANIFEST_SCHEMA,
  ManifestEntrySchema,
  ManifestSchema,
  SEGMENT_SCHEMA,
  sessionKey,
} from "./types.ts";
