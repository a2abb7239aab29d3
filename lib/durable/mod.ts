/**
 * Durability primitives shared by every writer: the injectable file-system interface,
 * the one atomic replace helper, the shared JSONL line splitter, creation hygiene and
 * the one contained reader (contained_open.ts: every untrusted file is opened there).
 */
export type { FileIdentity } from "./flock_holder.ts";
export { flockHolder, identityOf } from "./flock_holder.ts";
export type { CappedRead, Fs, FsDirEntry, FsStat, FsWriteHandle } from "./fs.ts";
export { readFileOrNull, realFs, statOrNull, toFsStat } from "./fs.ts";
export type { AppendDurableOptions } from "./append_durable.ts";
export { appendDurable } from "./append_durable.ts";
export type { AtomicWriteOptions, OrphanCleanupOptions } from "./atomic_write.ts";
export { isPidAlive, parseTempName, removeOrphanTemps, writeFileAtomic } from "./atomic_write.ts";
export type { NoClobberOptions } from "./no_clobber_write.ts";
export { writeFileNoClobber } from "./no_clobber_write.ts";
export type { LineSpan, SplitResult } from "./lines.ts";
export { lineText, parseJsonLines, splitCompleteLines } from "./lines.ts";
export type { CreateNewOptions, OpenRegularOptions } from "./safe_create.ts";
export {
  assertPlainName,
  assertRealDirInside,
  createNewFileSync,
  ensurePrivateDirSync,
  isInside,
  openRegularFileSync,
  removeIfExists,
  writeAllSync,
} from "./safe_create.ts";
export type {
  ContainedFile,
  ContainedFileInfo,
  ContainedFileSync,
  ContainedOpen,
  ContainedOpenOptions,
  ContainedOpenSync,
  ReadRefusal,
} from "./contained_open.ts";
export {
  ContainedReadError,
  openContained,
  openContainedSync,
  READ_REFUSALS,
  refusalError,
  refusalOf,
} from "./contained_open.ts";
export type {
  BoundedReadOptions,
  ContainedDirEntry,
  ContainedRead,
  InsideOptions,
} from "./contained_read.ts";
export {
  isPlainComponent,
  isRealDir,
  listInside,
  openInside,
  openInsideSync,
  readContained,
  readContainedSync,
  readInside,
  readInsideSync,
} from "./contained_read.ts";
