/**
 * The production edge of message search: builds the store, the extractors and the
 * indexer from a ResolvedConfig. The only place that decides which roots are swept
 * (the extractors themselves take paths).
 */
import type { ResolvedConfig } from "../config.ts";
import { openStore, type Store } from "./store/mod.ts";
import { Indexer, type SweepProgress } from "./indexer.ts";
import { createIntendantExtractor, INTENDANT_PARSER_VERSION } from "./extract/intendant.ts";
import type { Extractor } from "./extract/types.ts";

/** The store-wide parser version: bumped when any extractor's output changes. */
export const PARSER_VERSION = INTENDANT_PARSER_VERSION;

/** A wired index. */
export interface MessageIndex {
  store: Store;
  indexer: Indexer;
  extractors: Extractor[];
}

/** Options for {@link createMessageIndex}. */
export interface MessageIndexOptions {
  now?: () => number;
  logger?: (line: string) => void;
  onProgress?: (p: SweepProgress) => void;
  intervalMs?: number;
}

/** Builds the extractor list for the configured roots. */
export function buildExtractors(cfg: ResolvedConfig): Extractor[] {
  return [createIntendantExtractor({ logsDir: cfg.logsDir })];
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
  });
  const extractors = buildExtractors(cfg);
  const indexer = new Indexer({
    store,
    extractors,
    windowDays: cfg.messageSearch.windowDays,
    now: o.now,
    logger: o.logger,
    onProgress: o.onProgress,
    intervalMs: o.intervalMs,
  });
  return { store, indexer, extractors };
}
