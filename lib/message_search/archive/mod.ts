/**
 * Archive search's door (archive.ts has the design): the archive store and its banded
 * indexer, the cold-scan search, and the attachment to a main store. Re-exported by
 * lib/message_search/mod.ts.
 */
export {
  ARCHIVE_ARENA_BYTES,
  ARCHIVE_DIR,
  ARCHIVE_SWEEP_EVERY_MS,
  ARCHIVE_WORKERS,
  openArchive,
} from "./archive.ts";
export type { Archive, ArchiveBlock, ArchiveOptions, ArchivePage } from "./archive.ts";
export { archiveOf, attachArchive } from "./attach.ts";
export { liftArchiveTombstone } from "./archive_band.ts";
export { archiveCutoff } from "./archive_view.ts";
