/**
 * What every benchmark phase shares: the production wiring of store + indexer + engine
 * over a corpus (exactly createMessageIndex's, plus a byte-counting Fs under the store),
 * process memory and I/O counters from /proc, and percentiles.
 * Bytes written are measured two ways: `storeBytes` sums the bytes of every file the
 * store writes through its Fs (exact, store files only); `/proc/self/io` write_bytes is
 * the kernel's count for the whole process (a cross-check; the phase subtracts what it
 * wrote to the corpus itself).
 */
import {
  buildExtractors,
  createSearchEngine,
  Indexer,
  type IndexerOptions,
  openStore,
  PARSER_VERSION,
  type SearchEngine,
  type SourceRoots,
  type Store,
} from "../lib/message_search/mod.ts";
import { type CappedRead, type Fs, type FsWriteHandle, realFs } from "../lib/durable/mod.ts";
import type { Corpus } from "./corpus/mod.ts";

/** realFs that counts what the store writes and reads. */
export class CountingFs implements Fs {
  written = 0;
  /** Bytes written per store file kind (journal appends and resets, snapshots, segments). */
  byKind = { journal: 0, snapshot: 0, generation: 0, other: 0 };
  filesWritten = 0;
  reads = 0;
  bytesRead = 0;
  createNew(path: string, mode: number): Promise<FsWriteHandle> {
    return realFs.createNew(path, mode).then((h) => this.#count(h, path));
  }
  openAppend(path: string): Promise<FsWriteHandle> {
    return realFs.openAppend(path).then((h) => this.#count(h, path));
  }
  #count(h: FsWriteHandle, path: string): FsWriteHandle {
    this.filesWritten++;
    const kind = path.includes("/generations/")
      ? "generation"
      : path.includes("manifest.journal")
      ? "journal"
      : path.includes("manifest.json")
      ? "snapshot"
      : "other";
    return {
      writeAll: (b: Uint8Array) => {
        this.written += b.length;
        this.byKind[kind] += b.length;
        return h.writeAll(b);
      },
      sync: () => h.sync(),
      close: () => h.close(),
    };
  }
  async readFile(path: string): Promise<Uint8Array> {
    const b = await realFs.readFile(path);
    this.reads++;
    this.bytesRead += b.length;
    return b;
  }
  async readFileCapped(path: string, maxBytes: number): Promise<CappedRead> {
    const r = await realFs.readFileCapped(path, maxBytes);
    this.reads++;
    this.bytesRead += r.bytes.length;
    return r;
  }
  rename = realFs.rename.bind(realFs);
  remove = realFs.remove.bind(realFs);
  stat = realFs.stat.bind(realFs);
  lstat = realFs.lstat.bind(realFs);
  readDir = realFs.readDir.bind(realFs);
  mkdir = realFs.mkdir.bind(realFs);
  syncDir = realFs.syncDir.bind(realFs);
}

/**
 * The sweep roots of a corpus (every home "global", as on a user's machine), each the
 * path the source's plugin is built over: the `.gemini` folder, Qwen's runtime base, the
 * Copilot / Cursor / Factory homes, OpenCode's and Goose's data dirs. A home of a source
 * that has no plugin (yet) is ignored by buildExtractors.
 */
export function rootsOf(c: Corpus): SourceRoots {
  const h = c.homes;
  return {
    logsDir: h.logsDir,
    homes: [
      { source: "codex", path: h.codex, origin: "global" },
      { source: "claude-code", path: h.claude, origin: "global" },
      { source: "kimi", path: h.kimi, origin: "global" },
      { source: "pi", path: h.pi, origin: "global" },
      { source: "gemini", path: h.gemini, origin: "global" },
      { source: "qwen", path: h.qwen, origin: "global" },
      { source: "copilot", path: h.copilot, origin: "global" },
      { source: "cursor", path: h.cursor, origin: "global" },
      { source: "droid", path: h.droid, origin: "global" },
      { source: "opencode", path: h.opencode, origin: "global" },
      { source: "goose", path: h.goose, origin: "global" },
    ],
  };
}

/**
 * The roots of one source alone: the other homes are left out, and the Intendant logs
 * directory is an empty one unless `source` is "intendant".
 */
export function rootsOfOne(c: Corpus, source: string, emptyDir: string): SourceRoots {
  const all = rootsOf(c);
  return {
    logsDir: source === "intendant" ? all.logsDir : emptyDir,
    homes: all.homes.filter((h) => h.source === source),
  };
}

/** A wired index over `c` with its store at `storeRoot`. */
export interface Wired {
  store: Store;
  indexer: Indexer;
  fs: CountingFs;
  engine: () => SearchEngine;
  /**
   * An engine over the same store that never sees lexicon.pack (loadLexicon answers
   * null): the same-run baseline of what the lexicon buys (issue 27).
   */
  bareEngine: () => SearchEngine;
}

/** createMessageIndex's wiring (cacheReads on), plus the counting Fs and an engine maker. */
export async function wire(
  c: Corpus,
  storeRoot: string,
  nowMs = Date.now,
  roots: SourceRoots = rootsOf(c),
  o: { onListed?: IndexerOptions["onListed"] } = {},
): Promise<Wired> {
  const fs = new CountingFs();
  const store = await openStore({
    root: storeRoot,
    fs,
    parserVersion: PARSER_VERSION,
    windowDays: 14,
    now: nowMs,
    cacheReads: true,
  });
  const indexer = new Indexer({
    store,
    extractors: () => Promise.resolve(buildExtractors(roots)),
    windowDays: 14,
    now: nowMs,
    onListed: o.onListed,
  });
  const key = new Uint8Array(32).fill(7);
  const engine = () =>
    createSearchEngine({ store, windowDays: 14, cursorKey: key, isReady: () => indexer.ready });
  const noLexicon: Store = new Proxy(store, {
    get(t, p) {
      if (p === "loadLexicon") return () => Promise.resolve(null);
      const v = Reflect.get(t, p);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
  const bareEngine = () =>
    createSearchEngine({
      store: noLexicon,
      windowDays: 14,
      cursorKey: key,
      isReady: () => indexer.ready,
    });
  return { store, indexer, fs, engine, bareEngine };
}

/** Resident and peak RSS in bytes (/proc/self/status VmRSS, VmHWM). */
export function memory(): { rss: number; peak: number } {
  const s = Deno.readTextFileSync("/proc/self/status");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** The kernel's write_bytes for this process (/proc/self/io). */
export function ioWriteBytes(): number {
  const s = Deno.readTextFileSync("/proc/self/io");
  return Number(/write_bytes: (\d+)/.exec(s)?.[1] ?? 0);
}

/** Runs a full GC when the process was started with --expose-gc. */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** p-th percentile (nearest rank) of `xs`. */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** Summary of timings in ms, rounded to 0.01. */
export function stats(xs: number[]): { p50: number; p95: number; max: number; n: number } {
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(pct(xs, 50)), p95: r(pct(xs, 95)), max: r(Math.max(...xs)), n: xs.length };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
