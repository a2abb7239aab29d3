/**
 * A small LRU of parsed source files, so paging through a long external session does not
 * re-parse its transcripts for every page. Keyed by file identity as the open handle saw
 * it (source, dev, ino, size, mtime, bytes read): an append, a rewrite or a replacement
 * changes the key, so a stale parse is never served — it just ages out.
 * Bound: at most ACTIVITY_CACHE_MAX_FILES entries and ACTIVITY_CACHE_MAX_BYTES of
 * estimated retained size (FileActivity.bytes: excerpts and inputs are already capped, so
 * one file's parse is a few KiB per call); a parse larger than the whole budget is not
 * kept. Least recently used goes first. One process-wide instance; tests make their own.
 */
import type { FileActivity } from "./types.ts";

/** Most files kept. */
export const ACTIVITY_CACHE_MAX_FILES = 32;
/** Most estimated bytes kept. */
export const ACTIVITY_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** The LRU. */
export class ActivityCache {
  #map = new Map<string, FileActivity>();
  #bytes = 0;
  readonly maxFiles: number;
  readonly maxBytes: number;

  constructor(o: { maxFiles?: number; maxBytes?: number } = {}) {
    const { maxFiles = ACTIVITY_CACHE_MAX_FILES, maxBytes = ACTIVITY_CACHE_MAX_BYTES } = o;
    if (!Number.isSafeInteger(maxFiles) || maxFiles < 0) {
      throw new RangeError(`Invalid maxFiles "${maxFiles}": expected a non-negative integer`);
    }
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`Invalid maxBytes "${maxBytes}": expected a non-negative integer`);
    }
    this.maxFiles = maxFiles;
    this.maxBytes = maxBytes;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The cached parse for `key` (now the most recently used), or undefined. */
  get(key: string): FileActivity | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  /** Keeps `value` under `key`, evicting the least recently used to stay in bounds. */
  set(key: string, value: FileActivity): void {
    const old = this.#map.get(key);
    if (old !== undefined) {
      this.#map.delete(key);
      this.#bytes -= old.bytes;
    }
    if (value.bytes > this.maxBytes || this.maxFiles === 0) return;
    while (
      this.#map.size >= this.maxFiles || this.#bytes + value.bytes > this.maxBytes
    ) {
      const [k, v] = this.#map.entries().next().value!;
      this.#map.delete(k);
      this.#bytes -= v.bytes;
    }
    this.#map.set(key, value);
    this.#bytes += value.bytes;
  }
}

/** The process-wide cache the detail route uses. */
export const ACTIVITY_CACHE = new ActivityCache();
