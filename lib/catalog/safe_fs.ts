/**
 * The catalog's view of the one contained reader (lib/durable/contained_read.ts). Every
 * path the network can influence (locators, session.jsonl file references, Deep Search
 * cursors, the report walk, activity reads) is opened through these names and nowhere
 * else. They fix the catalog's policy and add nothing to the reader:
 *  - hard links are always refused (a hardlink may name an inode outside the directory);
 *  - `rel` has at most 8 plain components below a real root, every directory real;
 *  - readInside truncates at `maxBytes` (the rest is reported `truncated`, never read).
 * Refusals are values, not exceptions: callers degrade (stale/unavailable, skip with a
 * note). Only unexpected I/O errors (EIO, EACCES) propagate.
 */
import {
  type ContainedDirEntry,
  type ContainedFile,
  type ContainedOpen,
  type ContainedRead,
  isPlainComponent,
  isRealDir,
  listInside,
  openInside as openContainedInside,
  readInside as readContainedInside,
  type ReadRefusal,
} from "../durable/mod.ts";

export { isPlainComponent, isRealDir, listInside };

/** Why a path was not opened. */
export type Refusal = ReadRefusal;

/** An open, verified regular file. */
export type SafeFile = ContainedFile;

/** Outcome of {@link openInside}. */
export type OpenResult = ContainedOpen;

/** Outcome of {@link readInside}. */
export type ReadResult = ContainedRead;

/** A directory entry seen without following symlinks. */
export type SafeDirEntry = ContainedDirEntry;

/** Opens `root/rel` for reading under the catalog's policy (see the header). */
export function openInside(root: string, rel: string): Promise<OpenResult> {
  return openContainedInside(root, rel, { hardlinks: "refuse", maxDepth: 8 });
}

/** Reads `root/rel` from `offset`, at most `maxBytes` (the rest is reported as truncated). */
export function readInside(
  root: string,
  rel: string,
  o: { maxBytes: number; offset?: number },
): Promise<ReadResult> {
  return readContainedInside(root, rel, {
    hardlinks: "refuse",
    maxDepth: 8,
    maxBytes: o.maxBytes,
    offset: o.offset ?? 0,
    overflow: "truncate",
  });
}
