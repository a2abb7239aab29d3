/**
 * One contained, bounded read of an external session's source file for the activity
 * view. The file is opened ONLY through safe_fs.ts openInside (plain components, real
 * directories, O_NOFOLLOW, one link, the handle's dev+ino re-checked), so a symlink,
 * hardlink, FIFO or swapped path is refused, never followed. At most `budget` bytes are
 * read: a longer plain file is read from its head and reported `truncated` (its cut last
 * line counts as torn). A `.jsonl.zst` rollout is immutable and read whole or not at all
 * (compressed and decompressed both within the budget; node:zlib, as the Codex extractor
 * does); it costs its compressed size. The parse is cached by the open handle's identity
 * (cache.ts); a hit costs the same budget as a miss, so results never depend on the cache.
 * Fail-closed: a refusal, a corrupt or oversized zst, or an I/O error becomes a reason;
 * nothing here throws, so the detail still renders from the shard.
 * Memory (issue 15 F4): a miss reads and parses its file under SOURCE_READS, a process-
 * wide mutex, so however many detail requests run, at most one source file (≤ the 64 MiB
 * session budget) and its parse are in memory besides the cache; a request that waited
 * finds the file another one just parsed in the cache.
 */
import { zstdDecompressSync } from "node:zlib";
import { Mutex } from "../locks.ts";
import { openInside, type SafeFile } from "../safe_fs.ts";
import type { ActivityCache } from "./cache.ts";
import type { FileActivity } from "./types.ts";

/** One source read and parse at a time, process-wide (see the header). */
const SOURCE_READS = new Mutex();

/** Where a source file is, for a contained open. */
export interface SourceFile {
  /** The directory the open is contained in: the granted read root holding the file (attach.ts). */
  root: string;
  /** The path under `root`: plain components only. */
  rel: string;
}

/** How one file read came out; `used` is what it cost of the session's budget. */
export type FileRead =
  | { ok: true; activity: FileActivity; truncated: boolean; used: number }
  | { ok: false; reason: string; used: number };

/** Options for {@link readSource}. */
export interface ReadSourceOptions {
  /** Turns the file's (decompressed) bytes into activity. */
  parse: (bytes: Uint8Array) => FileActivity;
  /** Names the parser in cache keys (one file may be parsed by one source only). */
  parserId: string;
  /** Bytes this read may still use. */
  budget: number;
  cache: ActivityCache;
}

/** Reads and parses `f` under the options' bounds. */
export async function readSource(f: SourceFile, o: ReadSourceOptions): Promise<FileRead> {
  try {
    return await readOnce(f, o);
  } catch (err) {
    // EACCES, EIO, …: this file's activity is unavailable; the page still renders.
    if (!(err instanceof Error)) throw err;
    return { ok: false, reason: `read_error: ${err.name}`, used: 0 };
  }
}

async function readOnce(f: SourceFile, o: ReadSourceOptions): Promise<FileRead> {
  const opened = await openInside(f.root, f.rel);
  if (!opened.ok) return { ok: false, reason: opened.reason, used: 0 };
  const { file } = opened;
  try {
    const zst = f.rel.endsWith(".zst");
    if (zst && file.size > o.budget) return { ok: false, reason: "too_large", used: 0 };
    const want = zst ? file.size : Math.min(file.size, o.budget);
    const key = [o.parserId, file.dev, file.ino, file.size, file.mtimeMs, want].join(":");
    const cached = () => {
      const hit = o.cache.get(key);
      return hit
        ? { ok: true as const, activity: hit, truncated: want < file.size, used: want }
        : null;
    };
    const hit = cached();
    if (hit) return hit;
    const release = await SOURCE_READS.lock();
    try {
      return cached() ?? await parseOnce(file, o, { zst, want, key });
    } finally {
      release();
    }
  } finally {
    await file.close();
  }
}

async function parseOnce(
  file: SafeFile,
  o: ReadSourceOptions,
  p: { zst: boolean; want: number; key: string },
): Promise<FileRead> {
  const { zst, want, key } = p;
  let bytes: Uint8Array = await file.read(0, want);
  if (zst) {
    try {
      bytes = zstdDecompressSync(bytes, { maxOutputLength: Math.max(1, o.budget) });
    } catch (err) {
      // RangeError: past maxOutputLength; any other Error: not a zstd frame.
      if (!(err instanceof Error)) throw err;
      return { ok: false, reason: err instanceof RangeError ? "too_large" : "corrupt", used: 0 };
    }
  }
  const activity = o.parse(bytes);
  o.cache.set(key, activity);
  return { ok: true, activity, truncated: want < file.size, used: want };
}
