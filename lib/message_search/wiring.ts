/**
 * The production edge of message search: builds the store, the extractors and the
 * indexer from a ResolvedConfig. The only place that decides which roots are swept (the
 * extractors themselves take paths). Roots are re-resolved at every sweep, so a lease
 * registered or released while the daemon runs is picked up without a restart.
 * Extraction runs on a worker pool (pool/), one worker per core unless
 * INTENDANT_INDEX_WORKERS says otherwise; the extractors themselves are built in
 * extractor_set.ts so a worker can rebuild them from the same roots.
 */
import type { ResolvedConfig } from "../config.ts";
import { openStore, type Store } from "./store/mod.ts";
import { Indexer, type SweepProgress } from "./indexer.ts";
import { buildExtractors, PARSER_VERSION } from "./extractor_set.ts";
import { resolveSourceRoots } from "./roots.ts";

export { buildExtractors, PARSER_VERSION };

/** A wired index. */
export interface MessageIndex {
  store: Store;
  indexer: Indexer;
}

/** Options for {@link createMessageIndex}. */
export interface MessageIndexOptions {
  now?: () => number;
  logger?: (line: string) => void;
  onProgress?: (p: SweepProgress) => void;
  intervalMs?: number;
  /** Extraction workers; overrides the configuration's (INTENDANT_INDEX_WORKERS). */
  workers?: number;
  /** Keep lexicon.pack current after sweeps (IndexerOptions.lexicon: the daemon). */
  lexicon?: boolean;
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
  const indexer = new Indexer({
    store,
    extractors: async () => buildExtractors(await resolveSourceRoots(cfg)),
    staging: async () => {
      const roots = await resolveSourceRoots(cfg);
      return [...new Set(roots.homes.filter((h) => h.stagingEntry).map((h) => h.stagingEntry!))];
    },
    windowDays: cfg.messageSearch.windowDays,
    now: o.now,
    logger: o.logger,
    onProgress: o.onProgress,
    intervalMs: o.intervalMs,
    lexicon: o.lexicon,
    // One per core unless configured; the pool itself falls back to this thread where
    // workers cannot start (pool/extract_pool.ts).
    workers: o.workers ?? cfg.messageSearch.workers ?? undefined,
  });
  return { store, indexer };
}
