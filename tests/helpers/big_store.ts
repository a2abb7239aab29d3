/**
 * A large store for completeness tests: thousands of small sessions written by the bench
 * corpus generator in the real Codex and Claude Code formats, indexed by the real indexer
 * and extractors into a real store. Only the fsyncs are skipped while it is built (an Fs
 * whose sync is a no-op): durability is not what these tests exercise, and 5,000 sessions
 * × (segment + journal + directory) fsyncs took minutes on a shared disk. What is read
 * back afterwards is an ordinary store that any process opens as usual.
 */
import { ensureCorpus, PRESETS } from "../../bench/corpus/mod.ts";
import type { Corpus } from "../../bench/corpus/mod.ts";
import { rootsOf } from "../../bench/harness.ts";
import { type Fs, type FsWriteHandle, realFs } from "../../lib/durable/mod.ts";
import {
  buildExtractors,
  Indexer,
  openStore,
  PARSER_VERSION,
} from "../../lib/message_search/mod.ts";
import { hermeticEnv } from "./temp.ts";

/** A built big store and the environment that points the program at it. */
export interface BigStore {
  corpus: Corpus;
  /** Hermetic env: HOME in the temp dir, agent homes and the state root at the corpus. */
  env: Record<string, string>;
  storeRoot: string;
}

function noSync(h: FsWriteHandle): FsWriteHandle {
  return { writeAll: (b) => h.writeAll(b), close: () => h.close(), sync: () => Promise.resolve() };
}

/** realFs with every fsync skipped (fixture building only). */
const FAST_FS: Fs = {
  ...realFs,
  createNew: (path, mode) => realFs.createNew(path, mode).then(noSync),
  openAppend: (path) => realFs.openAppend(path).then(noSync),
  syncDir: () => Promise.resolve(),
};

/** Writes `sessions` small sessions under `root` and indexes them. */
export async function buildBigStore(
  root: string,
  o: { sessions: number; messages: number; seed?: number },
): Promise<BigStore> {
  const corpus = await ensureCorpus({
    dir: `${root}/corpus`,
    preset: {
      ...PRESETS.small!,
      name: `big-${o.sessions}`,
      sessions: o.sessions,
      messages: o.messages,
      huge: [],
      // The two single-file formats: the cheapest to write, and the two largest sources.
      shares: { "claude-code": 0.5, codex: 0.5, intendant: 0, kimi: 0, pi: 0 },
    },
    seed: o.seed ?? 7,
  });
  const h = corpus.homes;
  const storeRoot = `${h.stateRoot}/cache/message_search/v2`;
  const store = await openStore({
    root: storeRoot,
    fs: FAST_FS,
    parserVersion: PARSER_VERSION,
    windowDays: 14,
    cacheReads: true,
  });
  const indexer = new Indexer({
    store,
    extractors: () => Promise.resolve(buildExtractors(rootsOf(corpus))),
    windowDays: 14,
  });
  await indexer.sweep();
  const env = hermeticEnv(root, {
    INTENDANT_HOME: h.stateRoot,
    CODEX_HOME: h.codex,
    CLAUDE_CONFIG_DIR: h.claude,
    KIMI_CODE_HOME: h.kimi,
    PI_CODING_AGENT_DIR: h.pi,
    INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0",
  });
  return { corpus, env, storeRoot };
}
