/**
 * The extractors (extract/mod.ts `SOURCE_PLUGINS`) built from one set of roots, and the
 * store-wide parser version.
 * Split from wiring.ts so the extraction worker (pool/worker_main.ts) can rebuild exactly
 * the extractors the main thread uses without importing the store, the indexer or the
 * configuration: a worker receives plain, serializable roots and calls the same
 * {@link buildExtractors}.
 *
 * Every extractor built here whose plugin does not opt out (`pooled: false`, the SQLite
 * sources) is registered with its roots ({@link poolSpecOf}): that is what lets the
 * indexer hand its extract calls to a worker, which rebuilds the same extractor from the
 * same roots. An extractor built any other way (a test double) or opted out has no spec
 * and always runs in the indexer's thread.
 */
import { dirname, join } from "node:path";
import { type Extractor, SOURCE_PLUGINS } from "./extract/mod.ts";
import type { ExternalSource, SourceRoots } from "./roots.ts";
import type { Source } from "./record.ts";
import { SEGMENT_SCHEMA } from "./store/types.ts";

/**
 * The store-wide parser version: what a shard is derived by — each extractor's rules and
 * the segment format (SEGMENT_SCHEMA: 2 since issue 16's binary segments, 3 since issue
 * 27's term dictionary, 4 since its compact layout). Each term only ever increases, so their sum does too: any change rebuilds the index (never an older
 * parser clobbering).
 */
export const PARSER_VERSION = SOURCE_PLUGINS.reduce((n, p) => n + p.parserVersion, 0) +
  SEGMENT_SCHEMA;

/**
 * How a worker rebuilds an extractor: the roots it was built from, and the module whose
 * `buildExtractors(roots)` builds it (null = this module's). Plain data (structured-clone
 * safe). A factory URL is how tests put a fault-injecting extractor on the pool; the
 * production wiring never sets one.
 */
export interface PoolSpec {
  roots: SourceRoots;
  factory: string | null;
}

const SPECS = new WeakMap<Extractor, PoolSpec>();

/** Marks `extractors` as rebuildable in a worker from `spec`; returns them. */
export function registerPoolable(extractors: Extractor[], spec: PoolSpec): Extractor[] {
  for (const ex of extractors) SPECS.set(ex, spec);
  return extractors;
}

/** The spec a worker rebuilds `ex` from, or null when it must run in this thread. */
export function poolSpecOf(ex: Extractor): PoolSpec | null {
  return SPECS.get(ex) ?? null;
}

function homesOf(roots: SourceRoots, source: ExternalSource): string[] {
  return roots.homes.filter((h) => h.source === source).map((h) => h.path);
}

/** The snapshot directory of SQLite sources, under the message-search cache root. */
export const SQLITE_SNAPSHOT_DIR = "sqlite-snapshots";

/**
 * The snapshot directory of `roots`: the one the configuration named, else the cache
 * root's beside the logs (`<state-root>/logs` → `<state-root>/cache/message_search/…`),
 * so roots assembled by hand (tests, the bench) still keep copies inside the state root.
 */
function snapshotDirOf(roots: SourceRoots): string {
  return roots.snapshotDir ??
    join(roots.logsDir, "..", "cache", "message_search", SQLITE_SNAPSHOT_DIR);
}

/** Builds the extractors for one set of roots (one per registered source, in sweep order). */
export function buildExtractors(roots: SourceRoots): Extractor[] {
  const spec: PoolSpec = { roots: structuredClone(roots), factory: null };
  return SOURCE_PLUGINS.map((p) => {
    const external = p.source === "intendant" ? null : p.source;
    const ex = p.build({
      logsDir: roots.logsDir,
      homes: external ? homesOf(roots, external) : [],
      files: external ? [...roots.files?.[external] ?? []] : [],
      snapshotDir: snapshotDirOf(roots),
    });
    return p.pooled === false ? ex : registerPoolable([ex], spec)[0]!;
  });
}

/** One path a daemon watches, and the sources whose units live under it. */
export interface WatchTarget {
  path: string;
  /** Subdirectories too (a home), or only the entries of this directory (a database's). */
  recursive: boolean;
  sources: Source[];
}

/**
 * What a daemon watches for one set of roots: each plugin's watched directories
 * (SourcePlugin.watchDirs) recursively, and the directory of each file a variable names,
 * flat. A path two sources share (a leased home seen twice) is one target naming both;
 * a path inside another recursive target of the same sources adds nothing and is dropped.
 */
export function watchTargetsOf(roots: SourceRoots): WatchTarget[] {
  const byPath = new Map<string, WatchTarget>();
  const add = (path: string, recursive: boolean, source: Source) => {
    const t = byPath.get(path);
    if (!t) byPath.set(path, { path, recursive, sources: [source] });
    else {
      t.recursive ||= recursive;
      if (!t.sources.includes(source)) t.sources.push(source);
    }
  };
  for (const p of SOURCE_PLUGINS) {
    const external = p.source === "intendant" ? null : p.source;
    const r = {
      logsDir: roots.logsDir,
      homes: external ? homesOf(roots, external) : [],
      files: external ? [...roots.files?.[external] ?? []] : [],
    };
    const dirs = p.watchDirs?.(r) ?? (external ? r.homes : [roots.logsDir]);
    for (const d of dirs) add(d, true, p.source);
    for (const f of r.files) add(dirname(f), false, p.source);
  }
  const all = [...byPath.values()];
  return all.filter((t) =>
    !all.some((o) =>
      o !== t && o.recursive && t.path.startsWith(o.path + "/") &&
      t.sources.every((s) => o.sources.includes(s))
    )
  );
}
