/**
 * The daemon: one process that serves the dashboard and the API on 127.0.0.1, runs the
 * indexer, and writes `<state-root>/daemon.json` ({pid, port, url, token}, 0600) so the
 * CLI and scripts can find it. The indexer's periodic sweeps follow the spec (every 30 s);
 * unlike one-shot CLI runs, the daemon also sweeps once right after start in the
 * background, so a user who opens the dashboard is not shown `building` for 30 seconds.
 * Shutdown stops the server and the indexer and removes daemon.json if it is still ours.
 */
import { join } from "node:path";
import type { ResolvedConfig } from "../config.ts";
import { ensurePrivateDirSync, removeIfExists, writeFileAtomic } from "../durable/mod.ts";
import { createMessageIndex, createSearchEngine } from "../message_search/mod.ts";
import { deleteNativeSession } from "../catalog/mod.ts";
import { createApp } from "./app.ts";
import { SEARCH_PAGE_BUDGET_BYTES } from "./coverage_route.ts";
import { newToken } from "./security.ts";

/** A running daemon. */
export interface Daemon {
  url: string;
  port: number;
  token: string;
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

/** Options for {@link startDaemon}. */
export interface DaemonOptions {
  logger?: (line: string) => void;
  ui?: { html: string; js: string };
  /** Skip the immediate first sweep (tests drive sweeps themselves). */
  noInitialSweep?: boolean;
  intervalMs?: number;
}

/** Loads (or creates, 0600) the HMAC key that signs search cursors. */
export async function loadCursorKey(cacheRoot: string): Promise<Uint8Array> {
  ensurePrivateDirSync(cacheRoot);
  const path = join(cacheRoot, "cursor.key");
  try {
    const key = await Deno.readFile(path);
    if (key.length === 32) return key;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const key = crypto.getRandomValues(new Uint8Array(32));
  await writeFileAtomic(path, key);
  return key;
}

/** Starts serving. Throws Deno.errors.AddrInUse when the port is taken. */
export async function startDaemon(cfg: ResolvedConfig, o: DaemonOptions = {}): Promise<Daemon> {
  const token = newToken();
  const { store, indexer } = await createMessageIndex(cfg, {
    logger: o.logger,
    intervalMs: o.intervalMs,
  });
  await indexer.startup();
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => indexer.ready,
    // The route appends the coverage block after the page: both must fit the cap.
    responseBudgetBytes: SEARCH_PAGE_BUDGET_BYTES,
  });
  let app: ReturnType<typeof createApp> | null = null;
  const server = Deno.serve(
    { hostname: cfg.server.host, port: cfg.server.port, onListen: () => {} },
    (req) => app ? app.fetch(req) : new Response("starting", { status: 503 }),
  );
  const port = server.addr.port;
  app = createApp({
    token,
    port,
    windowDays: cfg.messageSearch.windowDays,
    engine,
    indexer,
    store,
    catalog: { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath },
    deleteNative: (id, dir) => deleteNativeSession({ store, logsDir: cfg.logsDir }, id, dir),
    ui: o.ui,
    logger: o.logger,
  });
  const url = `http://127.0.0.1:${port}/`;
  ensurePrivateDirSync(cfg.stateRoot);
  await writeFileAtomic(
    cfg.daemonJsonPath,
    JSON.stringify({ pid: Deno.pid, port, url, token, started_at_ms: Date.now() }, null, 2) + "\n",
  );
  indexer.start();
  if (!o.noInitialSweep) {
    void indexer.sweep().catch((err) =>
      o.logger?.(`intendant: first sweep failed: ${(err as Error).message}`)
    );
  }
  // Idempotent: every caller awaits the same shutdown, so the process never exits before
  // daemon.json is removed.
  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    stopping ??= (async () => {
      await server.shutdown();
      await indexer.stop();
      try {
        const cur = JSON.parse(await Deno.readTextFile(cfg.daemonJsonPath));
        if (cur.pid === Deno.pid && cur.port === port) await removeIfExists(cfg.daemonJsonPath);
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound) && !(err instanceof SyntaxError)) throw err;
      }
    })();
  return { url, port, token, shutdown, finished: server.finished };
}
