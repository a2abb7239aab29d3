/**
 * A realistic world for server and query tests: fixture homes of all four external tools
 * plus native sessions (fixture and runner-made), indexed by the real indexer into a real
 * store, with the real search engine, catalog and Hono app on top. Nothing is mocked.
 */
import { resolveConfig, type ResolvedConfig } from "../../lib/config.ts";
import {
  createMessageIndex,
  createSearchEngine,
  type Indexer,
  type Store,
} from "../../lib/message_search/mod.ts";
import { createApp, type HeavyGates, loadCursorKey, SearchGate } from "../../lib/server/mod.ts";
import { buildAllFixtures } from "../fixtures/all.ts";
import type { FixtureHome } from "../fixtures/types.ts";
import { hermeticEnv } from "./temp.ts";

export const PORT = 8765;

/** What a world holds. */
export interface World {
  root: string;
  env: Record<string, string>;
  cfg: ResolvedConfig;
  store: Store;
  indexer: Indexer;
  homes: Record<string, FixtureHome>;
  token: string;
  gate: SearchGate;
  app: ReturnType<typeof createApp>;
  logs: string[];
  /** app.request with the allowed Host and the bearer token. */
  get(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
}

/** Builds a world under `root`. */
export async function buildWorld(
  root: string,
  o: { token?: string; heavyGates?: HeavyGates } = {},
): Promise<World> {
  const fixtures = await buildAllFixtures(root);
  const { homes } = fixtures;
  const env = hermeticEnv(root, fixtures.env);
  const cfg = resolveConfig(env, { cwd: root });
  const { store, indexer } = await createMessageIndex(cfg);
  await indexer.sweep();
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => indexer.ready,
    onDamage: (found) => indexer.reportDamage(found),
  });
  const token = o.token ?? "t0k3n-" + "x".repeat(37);
  const gate = new SearchGate(2);
  const logs: string[] = [];
  const app = createApp({
    token,
    port: PORT,
    windowDays: cfg.messageSearch.windowDays,
    engine,
    indexer,
    store,
    gate,
    heavyGates: o.heavyGates,
    catalog: {
      logsDir: cfg.logsDir,
      store,
      namesPath: cfg.sessionNamesPath,
      onDamage: (found) => indexer.reportDamage(found),
    },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
    logger: (l) => logs.push(l),
  });
  return {
    root,
    env,
    cfg,
    store,
    indexer,
    homes,
    token,
    gate,
    app,
    logs,
    get: (path, init = {}) =>
      Promise.resolve(app.request(path, {
        ...init,
        headers: {
          host: `127.0.0.1:${PORT}`,
          authorization: `Bearer ${token}`,
          ...(init.headers ?? {}),
        },
      })),
  };
}
