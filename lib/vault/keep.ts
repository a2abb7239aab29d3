/**
 * Keeping one file: comparing it with its last kept version and storing only what is
 * new. The rules, cheapest first:
 *  - same size and mtime as the last version: nothing read ("same");
 *  - larger, and its first HEAD_BYTES and the TAIL_BYTES before the old end hash as the
 *    version's head and tail: an append — only the bytes past the old end are read and
 *    stored, as new chunks of the same version. This is the rule the index's own
 *    cursors use to tell an append from a rewrite (an agent that rewrites a transcript
 *    rewrites its head or its end); a rewrite that keeps both windows and the size
 *    growing is taken for an append, which the next rewrite check corrects;
 *  - same size, other mtime: every chunk re-read and compared by hash ("same" when they
 *    all match: a touch; otherwise a rewrite);
 *  - anything else (smaller, or a window differs): a rewrite — a new version read whole,
 *    the old version kept.
 * A file is read as it is at its fstat: bytes an agent appends while it is read wait
 * for the next keep. Memory: one chunk (CHUNK_MAX_BYTES) at a time.
 */
import { hash16Of } from "../message_search/mod.ts";
import type { Chunk, Version } from "./catalog.ts";
import { CHUNK_MAX_BYTES, HEAD_BYTES, objectHash, TAIL_BYTES } from "./layout.ts";
import type { ObjectStore } from "./objects.ts";

/** An open source file (the contained reader's handle). */
export interface SourceFile {
  size: number;
  mtimeMs: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** What keeping a file did. */
export type KeepKind = "new" | "same" | "append" | "rewrite";

async function windows(f: SourceFile, size: number): Promise<{ head: string; tail: string }> {
  const head = hash16Of(await f.read(0, Math.min(HEAD_BYTES, size)));
  const from = Math.max(0, size - TAIL_BYTES);
  const tail = hash16Of(await f.read(from, size - from));
  return { head, tail };
}

/** Stores `f[from, to)` as chunks of at most CHUNK_MAX_BYTES; the bytes actually read. */
async function storeRange(
  objects: ObjectStore,
  f: SourceFile,
  from: number,
  to: number,
): Promise<{ chunks: Chunk[]; end: number }> {
  const chunks: Chunk[] = [];
  let at = from;
  while (at < to) {
    const piece = await f.read(at, Math.min(CHUNK_MAX_BYTES, to - at));
    if (piece.length === 0) break; // shrank while read: keep what was there
    chunks.push(await objects.put(piece));
    at += piece.length;
  }
  return { chunks, end: at };
}

/** True when the file's bytes are exactly the version's (every chunk re-hashed). */
async function sameContent(f: SourceFile, v: Version): Promise<boolean> {
  let at = 0;
  for (const c of v.chunks) {
    const piece = await f.read(at, c.n);
    if (piece.length !== c.n || objectHash(piece) !== c.o) return false;
    at += c.n;
  }
  return at === f.size;
}

/** A whole new version of `f`. */
async function wholeVersion(objects: ObjectStore, f: SourceFile, now: number): Promise<Version> {
  const { chunks, end } = await storeRange(objects, f, 0, f.size);
  const w = await windows(f, end);
  return {
    kept_ms: now,
    changed_ms: now,
    size: end,
    mtime_ms: Math.max(0, Math.round(f.mtimeMs)),
    head: w.head,
    tail: w.tail,
    chunks,
    appends: 0,
  };
}

/**
 * Keeps `f` against `last` (null: never kept). Returns what it did and the version list
 * entry to store: `replace` true when `version` replaces the last one (an append, a
 * touch), false when it is added after it (new, rewrite). An empty file is never a
 * version ("same" with no version when there was none).
 */
export async function keepFile(o: {
  objects: ObjectStore;
  file: SourceFile;
  last: Version | null;
  now: number;
}): Promise<{ kind: KeepKind; version: Version | null; replace: boolean }> {
  const { objects, file: f, last, now } = o;
  const mtime = Math.max(0, Math.round(f.mtimeMs));
  if (last === null) {
    if (f.size === 0) return { kind: "same", version: null, replace: false };
    return { kind: "new", version: await wholeVersion(objects, f, now), replace: false };
  }
  if (f.size === last.size && mtime === last.mtime_ms) {
    return { kind: "same", version: null, replace: false };
  }
  if (f.size === last.size) {
    if (await sameContent(f, last)) {
      return { kind: "same", version: { ...last, mtime_ms: mtime }, replace: true };
    }
  } else if (f.size > last.size) {
    const w = await windows(f, last.size);
    if (w.head === last.head && w.tail === last.tail) {
      const { chunks, end } = await storeRange(objects, f, last.size, f.size);
      const grown = await windows(f, end);
      return {
        kind: "append",
        version: {
          ...last,
          changed_ms: now,
          size: end,
          mtime_ms: mtime,
          head: grown.head,
          tail: grown.tail,
          chunks: [...last.chunks, ...chunks],
          appends: last.appends + 1,
        },
        replace: true,
      };
    }
  }
  if (f.size === 0) return { kind: "same", version: null, replace: false };
  return { kind: "rewrite", version: await wholeVersion(objects, f, now), replace: false };
}
