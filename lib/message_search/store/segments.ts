/**
 * Generation files: immutable, content-named shard segments under `generations/`, in the
 * binary format of segment_layout.ts (encoded by segment_encode.ts, read as a
 * SegmentView by segment_view.ts).
 * On-disk invariants:
 *  - a file's name is `<hash16>.seg`, hash16 = first 16 hex digits of sha256 over the
 *    file's exact bytes, so a reader can verify a file without any other metadata;
 *  - a file is written once through writeFileAtomic (fsync file + dir) and never modified,
 *    which is what lets an open snapshot keep reading it while newer manifests land;
 *  - only names matching GENERATION_NAME_RE are ever opened, so a hostile manifest cannot
 *    make the store read outside `generations/` (`../x`, `/etc/passwd` fail the regex).
 * Loading is one contained, capped read into one buffer plus the segment's checksums
 * (crc32, native; the scan's loads check each block when it first reads it): a cold load
 * never hashes the whole file with sha256. The startup check (verifySegment) still does,
 * against the name.
 * Errors: a missing file is NotFoundError; bytes that do not hash to their name
 * (verifySegment) or fail a checksum or do not decode (loadSegment) are
 * CorruptGenerationError (the caller quarantines the shard so the next sweep re-derives it
 * from source); I/O errors propagate unchanged.
 */
import { join } from "node:path";
import { type Fs, statOrNull, writeFileAtomic } from "../../durable/mod.ts";
import { ContainmentError, NotFoundError } from "../../errors.ts";
import { CorruptGenerationError } from "./generation_error.ts";
import { segmentName } from "./segment_encode.ts";
import { type DecodeOptions, decodeSegment, type SegmentView } from "./segment_view.ts";
import type { EncodedSegment } from "./types.ts";

export { CorruptGenerationError };

/** Folder of generation files, relative to the store root. */
export const GENERATIONS_DIR = "generations";

/**
 * Largest generation file read. A shard's records are capped at 256 KiB of text each and a
 * session's shard is split across segments; the largest bench shard (24k records) is
 * ~15 MiB, so 1 GiB is far above any real one and still bounds a planted file.
 */
export const GENERATION_MAX_BYTES = 1024 * 1024 * 1024;

/** The only generation names the store writes or opens. */
export const GENERATION_NAME_RE = /^[0-9a-f]{16}\.seg$/;

/**
 * An existing file is reused (not rewritten) only while younger than this. Reusing an old
 * unreferenced file would race a lockless GC that is about to delete it (its grace is
 * 10 min); rewriting renames a fresh inode over it, which resets the mtime.
 */
export const SEGMENT_REUSE_MAX_AGE_MS = 5 * 60_000;

/** Options for {@link writeSegment}. */
export interface WriteSegmentOptions {
  fs: Fs;
  now: () => number;
}

/**
 * Writes an encoded segment into `genDir` under its name. Content-addressed: when a file
 * with that name already holds exactly these bytes (and is young, see
 * SEGMENT_REUSE_MAX_AGE_MS) nothing is written. A same-named file with other bytes is a
 * damaged copy and is replaced. The caller has checked that the name is the bytes' hash.
 */
export async function writeSegment(
  genDir: string,
  { bytes, name }: EncodedSegment,
  { fs, now }: WriteSegmentOptions,
): Promise<string> {
  const path = join(genDir, name);
  const st = await statOrNull(fs, path);
  const young = st?.mtimeMs != null && now() - st.mtimeMs < SEGMENT_REUSE_MAX_AGE_MS;
  if (st?.isFile && st.size === bytes.length && young) {
    if (sameBytes((await fs.readFileCapped(path, bytes.length)).bytes, bytes)) {
      // The file's bytes were fsynced before its rename (every writer goes through
      // writeFileAtomic), but its directory entry may not be durable yet: the writer that
      // renamed it in may have failed its directory fsync (the publish was abandoned and
      // this one re-derives the same content) or, lockless, not reached it. A manifest
      // naming it must not land before the entry does (A3 found this under power loss).
      await fs.syncDir(genDir);
      return name;
    }
  }
  await writeFileAtomic(path, bytes, { fs });
  return name;
}

/**
 * Reads one generation and decodes it: its structure checked, and every checksum (verify
 * "all", the default) or its blocks' as they are read ("lazy", segment_view.ts).
 */
export async function loadSegment(
  fs: Fs,
  genDir: string,
  name: string,
  o: DecodeOptions = {},
): Promise<SegmentView> {
  return decodeSegment(await readGeneration(fs, genDir, name), name, o);
}

/** Reads one generation and checks its bytes hash to its name (startup verification). */
export async function verifySegment(fs: Fs, genDir: string, name: string): Promise<void> {
  const bytes = await readGeneration(fs, genDir, name);
  const actual = segmentName(bytes);
  if (actual !== name) {
    throw new CorruptGenerationError(name, `content hashes to "${actual}"`);
  }
}

async function readGeneration(fs: Fs, genDir: string, name: string): Promise<Uint8Array> {
  if (!GENERATION_NAME_RE.test(name)) {
    throw new TypeError(`Invalid generation name "${name}": expected 16 lowercase hex + ".seg"`);
  }
  try {
    // Contained and capped like every store read (F5): a symlink, FIFO or device planted
    // at a generation's name is refused, never followed or waited on.
    return (await fs.readFileCapped(join(genDir, name), GENERATION_MAX_BYTES)).bytes;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new NotFoundError(`Generation "${name}" does not exist`, { cause: err });
    }
    if (err instanceof ContainmentError) {
      throw new CorruptGenerationError(name, err.message, { cause: err });
    }
    throw err;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
