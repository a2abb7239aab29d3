/**
 * The production edge of message search: builds the store, the extractors and the
 * indexer from a ResolvedConfig. The only place that decides which roots are swept (the
 * extractors themselves take paths). Roots are re-resolved at every sweep, so a lease
 * registered or released while the daemon runs is picked up without a restart.
 * Extraction runs on a worker pool (pool/), one worker per core unless
 * INTENDANT_INDEX_WORKERS says otherwise; the extractors themselves are built in
 * extractor_set.ts so a worker can rebuild them from the same roots, and so are the watch
 * targets a daemon's freshness scheduler arms (the same roots, so what is watched is
 * exactly what is swept). The archive (archive/) is opened here too, over the same roots,
 * and attached to the main store; in a long-lived process (`lexicon`, the daemon's signal
 * for "keep background caches current") it follows the main indexer's full sweeps. It
 * reads the transcript vault's copies of gone sessions too (archive/archive_vault.ts),
 * with extractors built over the same roots mirrored under a private directory.
 */
import type { ResolvedConfig } from "../config.ts";
import { openStore, type Store } from "./store/mod.ts";
import { Indexer, type IndexerOptions, type SweepProgress } from "./indexer.ts";
import {
  buildExtractors,
  PARSER_VERSION,
  type WatchTarget,
  watchTargetsOf,
} from "./extractor_set.ts";
import { LEASED_ACTIVE_DIR, resolveSourceRoots, type SourceRoots, STAGING_DIR } from "./roots.ts";
import { join } from "node:path";
import { type Archive, attachArchive, openArchive } from "./archive/mod.ts";

export { buildExtractors, PARSER_VERSION };

/** A wired index. */
export interface MessageIndex {
  store: Store;
  indexer: Indexer;
  /** Sessions older than the window, searched on request (archive/). */
  archive: Archive;
  /**
   * What a daemon watches (freshness/): every root a sweep reads, re-resolved per call,
   * plus the lease and staging directories of the state root as targets of no source (a
   * change there changes the roots themselves).
   */
  watchTargets: () => Promise<WatchTarget[]>;
}

/** Options for {@link createMessageIndex}. */
export interface MessageIndexOptions {
  now?: () => number;
  logger?: (line: string) => void;
  onProgress?: (p: SweepProgress) => void;
  /** Extraction workers; overrides the configuration's (INTENDANT_INDEX_WORKERS). */
  workers?: number;
  /** Keep lexicon.pack current after sweeps (IndexerOptions.lexicon: the daemon). */
  lexicon?: boolean;
  /** Told what each sweep listed (IndexerOptions.onListed: the vault's Keeper). */
  onListed?: IndexerOptions["onListed"];
  /** Build the archive behind the main's full sweeps. @default the `lexicon` option */
  archiveInBackground?: boolean;
}

/** Opens the store and wires the indexer for `cfg`. */
export async function createMessageIndex(
  cfg: ResolvedConfig,
  o: MessageIndexOptions = {},
): Promise<MessageIndex> {
  const store = await openStore({
    root: cfg.messageSearch.storeRoot,
    parserVersion: PARSER_VERSION,
    windowDays: cfg.messageSearch.windowDays,
    now: o.now,
    cacheReads: true,
  });
  const extractors = async () => buildExtractors(await resolveSourceRoots(cfg));
  const archive = await openArchive({
    cacheRoot: cfg.messageSearch.cacheRoot,
    main: store,
    windowDays: cfg.messageSearch.windowDays,
    extractors,
    parserVersion: PARSER_VERSION,
    background: o.archiveInBackground ?? o.lexicon ?? false,
    workers: Math.min(2, o.workers ?? cfg.messageSearch.workers ?? 2),
    now: o.now,
    logger: o.logger,
    onMainDamage: (found) => indexer.reportDamage(found),
    vault: cfg.vault.enabled
      ? {
        // Imported when first read: lib/vault imports this folder's mod.ts, so a static
        // import here would close a module cycle through the barrel.
        open: async () => new (await import("../vault/mod.ts")).Vault({ dir: cfg.vault.dir }),
        extractorsUnder: async (mirror) =>
          buildExtractors(mirrorRoots(await resolveSourceRoots(cfg), mirror)),
      }
      : null,
  });
  attachArchive(store, archive);
  const indexer: Indexer = new Indexer({
    store,
    extractors,
    follower: archive,
    staging: async () => {
      const roots = await resolveSourceRoots(cfg);
      return [...new Set(roots.homes.filter((h) => h.stagingEntry).map((h) => h.stagingEntry!))];
    },
    windowDays: cfg.messageSearch.windowDays,
    now: o.now,
    logger: o.logger,
    onProgress: o.onProgress,
    lexicon: o.lexicon,
    onListed: o.onListed,
    // One per core unless configured; the pool itself falls back to this thread where
    // workers cannot start (pool/extract_pool.ts).
    workers: o.workers ?? cfg.messageSearch.workers ?? undefined,
  });
  const cacheRoot = cfg.messageSearch.cacheRoot;
  const watchTargets = async (): Promise<WatchTarget[]> => [
    ...watchTargetsOf(await resolveSourceRoots(cfg)),
    { path: join(cacheRoot, LEASED_ACTIVE_DIR), recursive: false, sources: [] },
    { path: join(cacheRoot, STAGING_DIR), recursive: false, sources: [] },
  ];
  return { store, indexer, archive, watchTargets };
}

/**
 * `roots` as they lie under `mirror` (each path appended below it): what a source's
 * extractor discovers in a mirror of kept files written at their original paths. Files
 * named by a variable (a database) are not mirrored: the vault keeps only file sources.
 */
export function mirrorRoots(roots: SourceRoots, mirror: string): SourceRoots {
  const under = (p: string) => join(mirror, p);
  return {
    logsDir: under(roots.logsDir),
    homes: roots.homes.map((h) => ({ source: h.source, path: under(h.path), origin: h.origin })),
    files: {},
    snapshotDir: under("sqlite-snapshots"),
  };
}
