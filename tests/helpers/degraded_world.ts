/**
 * The F8 world (tests/reliability_degraded_test.ts, tests/browser_degraded_test.ts): 120
 * sessions of all five sources — 24 native Intendant sessions, the rest external — written
 * in their exact on-disk formats by the benchmark corpus writers, each holding a unique
 * needle (`f8u<n>x`) and one of seven shared ones (`f8alpha`…), indexed by the real
 * indexer into a real store, with the real search engine, catalog and Hono app wired as
 * the daemon wires them (engine and detail view → Indexer.reportDamage). No search sweeps
 * and the app has no freshness scheduler: every sweep is one a test or the damage
 * started. The indexer's clock is frozen (the window and the store's times stay put).
 * Also: the three ways a generation file is damaged.
 */
import { join } from "node:path";
import { FOLDED, H_TABLE } from "../../lib/message_search/store/segment_layout.ts";
import { homesOf } from "../../bench/corpus/mod.ts";
import type { SessionPlan, TurnPlan } from "../../bench/corpus/plan.ts";
import type { WrittenSession } from "../../bench/corpus/types.ts";
import { writeClaude } from "../../bench/corpus/write_claude.ts";
import { writeCodex } from "../../bench/corpus/write_codex.ts";
import { writeIntendant } from "../../bench/corpus/write_intendant.ts";
import { writeKimi } from "../../bench/corpus/write_kimi.ts";
import { writePi } from "../../bench/corpus/write_pi.ts";
import { resolveConfig, type ResolvedConfig } from "../../lib/config.ts";
import {
  createMessageIndex,
  createSearchEngine,
  GENERATIONS_DIR,
  type Indexer,
  type Source,
  type Store,
} from "../../lib/message_search/mod.ts";
import { createApp, loadCursorKey, SearchGate } from "../../lib/server/mod.ts";
import { STRESS } from "./figures.ts";
import { hermeticEnv } from "./temp.ts";

const PORT = 8765;
const TOKEN = "f8-" + "t".repeat(40);
export const SOURCES_WRITTEN: Source[] = ["intendant", "codex", "claude-code", "kimi", "pi"];
export const PER_SOURCE = STRESS ? 48 : 24;
export const SHARED = [
  "f8alpha",
  "f8bravo",
  "f8charlie",
  "f8delta",
  "f8echo",
  "f8foxtrot",
  "f8golf",
];

/** What a world holds: the app, its index, and which needle was planted where. */
export interface F8World {
  cfg: ResolvedConfig;
  store: Store;
  indexer: Indexer;
  /** needle → session keys it was planted in. */
  planted: Map<string, Set<string>>;
  /** session key → its unique needle. */
  uniqueOf: Map<string, string>;
  written: WrittenSession[];
  get(path: string): Promise<Response>;
}

function write(dir: string, plan: SessionPlan, turns: TurnPlan[]): Promise<WrittenSession> {
  const h = homesOf(dir);
  switch (plan.source) {
    case "intendant":
      return writeIntendant(h.logsDir, plan, turns);
    case "codex":
      return writeCodex(h.codex, plan, turns);
    case "claude-code":
      return writeClaude(h.claudeProjects, plan, turns);
    case "kimi":
      return writeKimi(h.kimi, plan, turns);
    case "pi":
      return writePi(h.pi, plan, turns);
    default:
      throw new RangeError(`No fixture writer for source "${plan.source}"`);
  }
}

/** Writes the sessions, indexes them and builds the app over them (frozen-clock indexer). */
export async function buildF8World(root: string): Promise<F8World> {
  const dir = join(root, "corpus");
  const h = homesOf(dir);
  for (const d of [h.logsDir, h.codex, h.claudeProjects, h.kimi, h.pi]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const nowMs = Date.now();
  const planted = new Map<string, Set<string>>();
  const uniqueOf = new Map<string, string>();
  const written: WrittenSession[] = [];
  let index = 0;
  for (let i = 0; i < PER_SOURCE; i++) {
    for (const source of SOURCES_WRITTEN) {
      const n = index++;
      const unique = `f8u${n}x`;
      const shared = SHARED[n % SHARED.length]!;
      const endMs = nowMs - (n + 2) * 600_000;
      const plan: SessionPlan = {
        index: n,
        source,
        messages: 4,
        huge: false,
        project: `/home/dev/f8-${n % 5}`,
        startMs: endMs - 300_000,
        endMs,
        seed: 8_000 + n,
      };
      const turns: TurnPlan[] = [
        {
          user: `please check ${unique} in the ${shared} module`,
          steps: [{ kind: "text", text: `the ${shared} module looks fine` }],
        },
        {
          user: `what else for session ${n}?`,
          steps: [{ kind: "text", text: `nothing else: ${unique} is done` }],
        },
      ];
      const w = await write(dir, plan, turns);
      written.push(w);
      uniqueOf.set(w.key, unique);
      planted.set(unique, new Set([w.key]));
      if (!planted.has(shared)) planted.set(shared, new Set());
      planted.get(shared)!.add(w.key);
    }
  }
  const env = hermeticEnv(root, {
    INTENDANT_HOME: h.stateRoot,
    CODEX_HOME: h.codex,
    CLAUDE_CONFIG_DIR: h.claude,
    KIMI_CODE_HOME: h.kimi,
    PI_CODING_AGENT_DIR: h.pi,
    INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no",
  });
  const cfg = resolveConfig(env, { cwd: root });
  const frozen = Date.now();
  const { store, indexer } = await createMessageIndex(cfg, { now: () => frozen });
  await indexer.sweep();
  // The daemon's wiring (lib/server/daemon.ts): the engine and the detail view report
  // damage to the indexer.
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => indexer.ready,
    onDamage: (found) => indexer.reportDamage(found),
  });
  const app = createApp({
    token: TOKEN,
    port: PORT,
    windowDays: cfg.messageSearch.windowDays,
    engine,
    indexer,
    store,
    gate: new SearchGate(2),
    catalog: {
      logsDir: cfg.logsDir,
      store,
      namesPath: cfg.sessionNamesPath,
      onDamage: (found) => indexer.reportDamage(found),
    },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
  });
  const get = (path: string) =>
    Promise.resolve(app.request(path, {
      headers: { host: `127.0.0.1:${PORT}`, authorization: `Bearer ${TOKEN}` },
    }));
  return { cfg, store, indexer, planted, uniqueOf, written, get };
}

/** Damages `path` by mode: 0 flips one byte, 1 truncates, 2 zero-fills (same length). */
export async function damage(path: string, mode: number, salt: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  if (mode === 0) {
    const at = (salt * 7919) % bytes.length;
    bytes[at] = bytes[at]! ^ (1 << (salt % 8));
    await Deno.writeFile(path, bytes);
  } else if (mode === 1) {
    await Deno.truncate(path, (salt * 31) % bytes.length);
  } else {
    await Deno.writeFile(path, new Uint8Array(bytes.length));
  }
}

/**
 * Flips one bit inside the FOLDED section of segment file `path` (the text every exact
 * search reads): damage a query is sure to meet, wherever the format puts its sections (a
 * bit flipped at a fixed offset may land in TERMS, which only relevance reads).
 */
export async function damageText(path: string, salt: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const off = Number(dv.getBigUint64(H_TABLE + 16 * FOLDED, true));
  const len = Number(dv.getBigUint64(H_TABLE + 16 * FOLDED + 8, true));
  const at = off + ((salt * 7919) % len);
  bytes[at] = bytes[at]! ^ (1 << (salt % 8));
  await Deno.writeFile(path, bytes);
}

/** The path of generation `gen` in the world's store. */
export function genPath(w: Pick<F8World, "cfg">, gen: string): string {
  return join(w.cfg.messageSearch.storeRoot, GENERATIONS_DIR, gen);
}
