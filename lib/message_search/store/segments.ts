/**
 * Generation files: immutable, content-named shard segments under `generations/`.
 * On-disk invariants:
 *  - a file's name is `<hash16>.json`, hash16 = first 16 hex digits of sha256 over the
 *    file's exact bytes, so a reader can verify a file without any other metadata;
 *  - a file is written once through writeFileAtomic (fsync file + dir) and never modified,
 *    which is what lets an open snapshot keep reading it while newer manifests land;
 *  - only names matching GENERATION_NAME_RE are ever opened, so a hostile manifest cannot
 *    make the store read outside `generations/` (`../x`, `/etc/passwd` fail the regex).
 * Errors: a missing file is NotFoundError; bytes that do not hash to their name or do not
 * parse as a ShardSegment are CorruptGenerationError (the caller drops the entry so the
 * next sweep re-derives it from source); I/O errors propagate unchanged.
 */
import { join } from "node:path";
import { type Fs, statOrNull, writeFileAtomic } from "../../durable/mod.ts";
import { ContainmentError, NotFoundError } from "../../errors.ts";
import { hash16Of } from "../locator.ts";
import { isExactSegment } from "./segment_check.ts";
import { type ShardSegment, ShardSegmentSchema } from "./types.ts";

/** Folder of generation files, relative to the store root. */
export const GENERATIONS_DIR = "generations";

/**
 * Largest generation file read. A shard's records are capped at 256 KiB of text each and a
 * session's shard is split across segments; the largest bench shard (24k records) is
 * ~60 MiB, so 1 GiB is far above any real one and still bounds a planted file.
 */
export const GENERATION_MAX_BYTES = 1024 * 1024 * 1024;

/** The only generation names the store writes or opens. */
export const GENERATION_NAME_RE = /^[0-9a-f]{16}\.json$/;

/**
 * An existing file is reused (not rewritten) only while younger than this. Reusing an old
 * unreferenced file would race a lockless GC that is about to delete it (its grace is
 * 10 min); rewriting renames a fresh inode over it, which resets the mtime.
 */
export const SEGMENT_REUSE_MAX_AGE_MS = 5 * 60_000;

/** A referenced generation is damaged: its bytes do not match its name or do not parse. */
export class CorruptGenerationError extends Error {
  /** The generation file name (`<hash16>.json`). */
  readonly generation: string;
  constructor(generation: string, detail: string, options?: ErrorOptions) {
    super(`Generation "${generation}" is corrupt: ${detail}`, options);
    this.name = "CorruptGenerationError";
    this.generation = generation;
  }
}

/** The exact bytes of a segment file (fixed field order, compact JSON). */
export function encodeSegment(segment: ShardSegment): Uint8Array {
  const { schema, parser_version, key, records, marks } = segment;
  return new TextEncoder().encode(JSON.stringify({ schema, parser_version, key, records, marks }));
}

/** Options for {@link writeSegment}. */
export interface WriteSegmentOptions {
  fs: Fs;
  now: () => number;
}

/**
 * Writes `segment` into `genDir` and returns its name. Content-addressed: when a file
 * with that name already holds exactly these bytes (and is young, see
 * SEGMENT_REUSE_MAX_AGE_MS) nothing is written. A same-named file with other bytes is a
 * damaged copy and is replaced.
 */
export async function writeSegment(
  genDir: string,
  segment: ShardSegment,
  { fs, now }: WriteSegmentOptions,
): Promise<string> {
  const bytes = encodeSegment(segment);
  const name = `${hash16Of(bytes)}.json`;
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

/** Reads, hash-verifies and parses one generation. */
export async function loadSegment(fs: Fs, genDir: string, name: string): Promise<ShardSegment> {
  const bytes = await readVerified(fs, genDir, name);
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new CorruptGenerationError(name, "not UTF-8 JSON", { cause: err });
  }
  if (isExactSegment(raw)) {
    // Records need no copy (see segment_check.ts); the few marks go through zod.
    const seg = raw as ShardSegment;
    const marks = ShardSegmentSchema.shape.marks.safeParse(seg.marks);
    if (marks.success) return { ...seg, marks: marks.data };
  }
  const parsed = ShardSegmentSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CorruptGenerationError(name, "not a shard segment", { cause: parsed.error });
  }
  return parsed.data;
}

/** Reads one generation and checks its hash only (cheap startup verification). */
export async function verifySegment(fs: Fs, genDir: string, name: string): Promise<void> {
  await readVerified(fs, genDir, name);
}

async function readVerified(fs: Fs, genDir: string, name: string): Promise<Uint8Array> {
  if (!GENERATION_NAME_RE.test(name)) {
    throw new TypeError(`Invalid generation name "${name}": expected 16 lowercase hex + ".json"`);
  }
  let bytes: Uint8Array;
  try {
    // Contained and capped like every store read (F5): a symlink, FIFO or device planted
    // at a generation's name is refused, never followed or waited on.
    bytes = (await fs.readFileCapped(join(genDir, name), GENERATION_MAX_BYTES)).bytes;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new NotFoundError(`Generation "${name}" does not exist`, { cause: err });
    }
    if (err instanceof ContainmentError) {
      throw new CorruptGenerationError(name, err.message, { cause: err });
    }
    throw err;
  }
  const actual = `${hash16Of(bytes)}.json`;
  if (actual !== name) {
    throw new CorruptGenerationError(name, `content hashes to "${actual}"`);
  }
  return bytes;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
