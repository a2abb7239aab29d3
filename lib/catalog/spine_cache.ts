/**
 * The spine indexes of recently viewed native sessions (spine_index.ts), so a detail page,
 * a jump or a replay page reads only the lines it serves. An index is built once per
 * spine identity — dev, ino, size and mtime as the contained open (safe_fs.ts) saw them,
 * plus the meta fields rows depend on (created_at, task) — and EXTENDED when the spine only
 * grew (a live session appends): same inode, larger, and the last indexed bytes unchanged
 * (the 4 KiB before the indexed end are compared by digest). Anything else rebuilds it.
 *
 * Bounds (whatever the number of requests): an index covers at most SPINE_MAX_BYTES of
 * the spine and SPINE_INDEX_MAX_ENTRIES events and rows (a longer spine ends in the
 * `log_truncated` row); the cache keeps at most SPINE_CACHE_MAX_ENTRIES indexes and
 * SPINE_CACHE_MAX_BYTES of their estimated size, least recently used out first (an index
 * larger than the whole budget serves its request and is dropped); at most
 * SPINE_BUILDS_MAX builds or extensions read a spine at a time in the process.
 * Concurrency: one reader-writer lock per session directory. Readers (pages, jumps, hit
 * scans) share the index; a build or extension waits for them and holds it alone, so a
 * reader never sees rows move under it. Every reader reads lines through its own open
 * handle, whose inode the index was checked against.
 */
import { createHash } from "node:crypto";
import { SESSION_JSONL } from "../session_log/mod.ts";
import { RwLock, Semaphore } from "./locks.ts";
import { openInside, type OpenResult, type Refusal, type SafeFile } from "./safe_fs.ts";
import { SpineIndex } from "./spine_index.ts";
import { type BuildInputs, type EraFacts, SpineIndexBuilder } from "./spine_index_build.ts";
import { parseLogLine, SPINE_MAX_BYTES, streamLines } from "./spine_read.ts";
import { correlateLegacy } from "./spine_correlate.ts";

/** Most events, and most rows, one index holds (~12 and ~31 bytes each). */
export const SPINE_INDEX_MAX_ENTRIES = 1 << 20;
/** Indexes kept. */
export const SPINE_CACHE_MAX_ENTRIES = 8;
/** Estimated bytes of the indexes kept (a 120 MB spine's index is a few MiB). */
export const SPINE_CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** Builds and extensions reading a spine at once, process-wide. */
export const SPINE_BUILDS_MAX = 2;

const TAIL_CHECK_BYTES = 4096;

/** An index as the cache keeps it. */
export interface SpineEntry {
  index: SpineIndex;
  builder: SpineIndexBuilder;
  inputs: BuildInputs;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  nextLineNo: number;
  tail: string;
  correlated: boolean;
}

/** What a reader gets: the index, and the handle its lines are read through. */
export interface SpineHandle {
  /** Null when the spine could not be opened (`refused` says why). */
  file: SafeFile | null;
  refused: Refusal | null;
  entry: SpineEntry | null;
}

/** The LRU of indexes, with the per-directory locks. */
export class SpineCache {
  #map = new Map<string, { entry: SpineEntry; bytes: number }>();
  #bytes = 0;
  #locks = new Map<string, RwLock>();
  readonly #builds = new Semaphore(SPINE_BUILDS_MAX);
  /** Builds and extensions done (tests: a cached page reads no spine). */
  builds = 0;
  extensions = 0;

  constructor(
    readonly maxEntries = SPINE_CACHE_MAX_ENTRIES,
    readonly maxBytes = SPINE_CACHE_MAX_BYTES,
  ) {}

  get size(): number {
    return this.#map.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Runs `fn` with the fresh index of `dir`'s spine (built or extended first when needed)
   * under the directory's read lock; the handle is closed afterwards.
   */
  async with<T>(
    dir: string,
    inputs: BuildInputs,
    fn: (h: SpineHandle) => Promise<T>,
  ): Promise<T> {
    let lock = this.#locks.get(dir);
    if (!lock) this.#locks.set(dir, lock = new RwLock());
    await lock.read();
    let file: SafeFile | null = null;
    try {
      let opened = await openInside(dir, SESSION_JSONL);
      let entry = opened.ok ? this.#fresh(dir, opened.file, inputs) : null;
      if (opened.ok && !entry) {
        // Stale or absent: reopened under the write lock, so the stat the update is checked
        // against is no older than any other request's.
        await opened.file.close();
        lock.release();
        await lock.write();
        let again: OpenResult | null = null;
        try {
          opened = again = await openInside(dir, SESSION_JSONL);
          if (again.ok) {
            entry = this.#fresh(dir, again.file, inputs) ??
              await this.#update(dir, again.file, inputs);
          }
        } catch (err) {
          if (again?.ok) await again.file.close();
          throw err;
        } finally {
          lock.downgrade();
        }
      }
      if (!opened.ok) return await fn({ file: null, refused: opened.reason, entry: null });
      file = opened.file;
      return await fn({ file, refused: null, entry });
    } finally {
      lock.release();
      if (lock.idle) this.#locks.delete(dir);
      await file?.close();
    }
  }

  /** The cached entry when it is current for `file` (now the most recently used). */
  #fresh(dir: string, file: SafeFile, inputs: BuildInputs): SpineEntry | null {
    const hit = this.#map.get(dir);
    if (!hit) return null;
    const e = hit.entry;
    const current = e.dev === file.dev && e.ino === file.ino && sameInputs(e.inputs, inputs) &&
      e.size === file.size && e.mtimeMs === file.mtimeMs;
    if (!current) return null;
    this.#map.delete(dir);
    this.#map.set(dir, hit);
    return e;
  }

  async #update(dir: string, file: SafeFile, inputs: BuildInputs): Promise<SpineEntry> {
    const release = await this.#builds.take();
    try {
      return await this.#updateNow(dir, file, inputs);
    } catch (err) {
      // An extension that failed half-way leaves an index that matches no file: drop it.
      this.#drop(dir);
      throw err;
    } finally {
      release();
    }
  }

  async #updateNow(dir: string, file: SafeFile, inputs: BuildInputs): Promise<SpineEntry> {
    const old = this.#map.get(dir)?.entry;
    let entry: SpineEntry;
    if (old && await grewOnly(old, file, inputs)) {
      this.extensions++;
      entry = await extend(old, file);
    } else {
      this.builds++;
      entry = await build(file, inputs, { epoch: null, canonical: false });
      // A built index holds exactly what it uses; an extended one keeps its growth slack
      // (at most half again), so a live session's appends do not copy it every time.
      entry.index.trim();
    }
    // The epoch marker's mapping gives legacy rows their seq once a cut needs them.
    const { index, builder } = entry;
    if (
      index.epochEv >= 0 && index.cutRows > 0 && (!entry.correlated || builder.correlationDirty)
    ) {
      index.corrSeq = await correlateLegacy(dir, file, entry);
      entry.correlated = true;
      builder.correlationDirty = false;
    }
    this.#keep(dir, entry);
    return entry;
  }

  #drop(dir: string): void {
    const old = this.#map.get(dir);
    if (!old) return;
    this.#map.delete(dir);
    this.#bytes -= old.bytes;
  }

  #keep(dir: string, entry: SpineEntry): void {
    this.#drop(dir);
    const bytes = entry.index.bytes + entry.builder.bytes;
    if (bytes > this.maxBytes || this.maxEntries === 0) return;
    while (this.#map.size >= this.maxEntries || this.#bytes + bytes > this.maxBytes) {
      const [k, v] = this.#map.entries().next().value!;
      this.#map.delete(k);
      this.#bytes -= v.bytes;
    }
    this.#map.set(dir, { entry, bytes });
    this.#bytes += bytes;
  }
}

/** The process-wide cache the detail and replay routes use. */
export const SPINE_CACHE = new SpineCache();

function sameInputs(a: BuildInputs, b: BuildInputs): boolean {
  return a.sessionId === b.sessionId && a.createdAtMs === b.createdAtMs &&
    a.metaTask === b.metaTask;
}

async function tailDigest(file: SafeFile, end: number): Promise<string> {
  const start = Math.max(0, end - TAIL_CHECK_BYTES);
  const bytes = await file.read(start, end - start);
  return createHash("sha256").update(bytes).digest("base64");
}

/** True when `file` is `old`'s spine with lines appended (nothing before rewritten). */
async function grewOnly(old: SpineEntry, file: SafeFile, inputs: BuildInputs): Promise<boolean> {
  if (old.dev !== file.dev || old.ino !== file.ino || !sameInputs(old.inputs, inputs)) return false;
  if (file.size <= old.size) return false;
  return await tailDigest(file, old.index.indexed) === old.tail;
}

async function build(file: SafeFile, inputs: BuildInputs, era: EraFacts): Promise<SpineEntry> {
  for (;;) {
    const index = new SpineIndex();
    const entry: SpineEntry = {
      index,
      builder: new SpineIndexBuilder(index, inputs, era),
      inputs,
      dev: file.dev,
      ino: file.ino,
      size: file.size,
      mtimeMs: file.mtimeMs,
      nextLineNo: 1,
      tail: "",
      correlated: false,
    };
    const r = await index_(entry, file);
    if (r === "ok") return entry;
    era = entry.builder.era;
  }
}

async function extend(old: SpineEntry, file: SafeFile): Promise<SpineEntry> {
  const entry = { ...old, size: file.size, mtimeMs: file.mtimeMs };
  if ((await index_(entry, file)) === "ok") return entry;
  return await build(file, old.inputs, entry.builder.era);
}

/** Indexes `file` from where `entry` stopped; "restart" when the era changed (see builder). */
async function index_(entry: SpineEntry, file: SafeFile): Promise<"ok" | "restart"> {
  const { index, builder } = entry;
  if (index.stopped === "entries") return "ok";
  const end = Math.min(file.size, SPINE_MAX_BYTES);
  let restart = false;
  let stopAt = -1;
  const r = await streamLines(file, {
    from: index.indexed,
    firstLineNo: entry.nextLineNo,
    end,
  }, (line) => {
    if (index.events >= SPINE_INDEX_MAX_ENTRIES || index.physicalRows >= SPINE_INDEX_MAX_ENTRIES) {
      index.stopped = "entries";
      stopAt = line.offset;
      return false;
    }
    index.lineCount++;
    const ev = line.bytes === null ? null : parseLogLine(line.bytes);
    if (ev === null) {
      if (line.length > 0) index.skipped++;
      return true;
    }
    if (builder.feed(ev, line.lineNo, line.offset, line.length) === "restart") {
      restart = true;
      return false;
    }
    return true;
  });
  if (restart) return "restart";
  // A line the entry caps stopped at is not indexed: the index ends before it.
  index.indexed = stopAt >= 0 ? stopAt : r.consumed;
  entry.nextLineNo = index.lineCount + 1;
  if (index.stopped === null && file.size > SPINE_MAX_BYTES) index.stopped = "bytes";
  entry.tail = await tailDigest(file, index.indexed);
  return "ok";
}
