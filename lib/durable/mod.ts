/**
 * Durability primitives shared by every writer: the injectable file-system interface,
 * the one atomic replace helper, the shared JSONL line splitter and creation hygiene.
 */
export type { Fs, FsDirEntry, FsStat, FsWriteHandle } from "./fs.ts";
export { readFileOrNull, realFs, statOrNull, toFsStat } from "./fs.ts";
export type { AppendDurableOptions } from "./append_durable.ts";
export { appendDurable } from "./append_durable.ts";
export type { AtomicWriteOptions, OrphanCleanupOptions } from "./atomic_write.ts";
export { isPidAlive, parseTempName, removeOrphanTemps, writeFileAtomic } from "./atomic_write.ts";
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
