/**
 * The production edge of message search: builds the store, the extractors and the
 * indexer from a ResolvedConfig. The only place that decides which roots are swept (the
 * extractors themselves take paths). Roots are re-resolved at every sweep, so a lease
 * registered or released while the daemon runs is picked up without a restart.
 */
import type { ResolvedConfig } from "../config.ts";
import { openStore, type Store } from "./store/mod.ts";
import { Indexer, type SweepProgress } from "./indexer.ts";
import { createIntendantExtractor, INTENDANT_PARSER_VERSION } from "./extract/intendant.ts";
import { CODEX_PARSER_VERSION, createCodexExtractor } from "./extract/codex.ts";
import { createPiExtractor, PI_PARSER_VERSION } from "./extract/pi.ts";
import { createKimiExtractor, KIMI_PARSER_VERSION } from "./extract/kimi.ts";
import { CLAUDE_PARSER_VERSION, createClaudeExtractor } from "./extract/claude.ts";
import { join } from "node:path";
import type { Extractor } from "./extract/types.ts";
import { type ExternalSource, resolveSourceRoots, type SourceRoots } from "./roots.ts";

/**
 * The store-wide parser version. Each extractor's version only ever increases, so their
 * sum does too: any extractor change rebuilds the index (never an older parser clobbering).
 */
export const PARSER_VERSION = INTENDANT_PARSER_VERSION + CODEX_PARSER_VERSION + PI_PARSER_VERSION +
  KIMI_PARSER_VERSION + CLAUDE_PARSER_VERSION;

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
}

function homesOf(roots: SourceRoots, source: ExternalSource): string[] {
  return roots.homes.filter((h) => h.source === source).map((h) => h.path);
}

/** Builds the extractors for one set of roots. */
export function buildExtractors(roots: SourceRoots): Extractor[] {
  return [
    createIntendantExtractor({ logsDir: roots.logsDir }),
    createCodexExtractor({ homes: homesOf(roots, "codex") }),
    // Claude homes are CLAUDE_CONFIG_DIR roots (or staged entries holding projects/).
    createClaudeExtractor({
      projectRoots: homesOf(roots, "claude-code").map((h) => join(h, "projects")),
    }),
    createKimiExtractor({ homes: homesOf(roots, "kimi") }),
    createPiExtractor({ agentDirs: homesOf(roots, "pi") }),
  ];
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
  });
  return { store, indexer };
}
