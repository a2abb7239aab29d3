/**
 * The daemon: one process that serves the dashboard and the API on 127.0.0.1, runs the
 * indexer, and writes `<state-root>/daemon.json` ({pid, port, url, token}, 0600) so the
 * CLI and scripts can find it. The token is the persisted one (`<state-root>/token`,
 * token_file.ts): the same across restarts, and followed while running, so `intendant
 * token --rotate` takes effect without a restart (daemon.json is rewritten with it). The
 * indexer's periodic sweeps follow the spec (every 30 s); unlike one-shot CLI runs, the
 * daemon also sweeps once right after start in the background, so a user who opens the
 * dashboard is not shown `building` for 30 seconds; that first sweep's progress is handed
 * to the caller (the CLI's progress line) and to the coverage endpoint, and its end is
 * reported once. Shutdown stops the server, the token watch and the indexer and removes
 * daemon.json if it is still ours.
 */
import { join } from "node:path";
import type { ResolvedConfig } from "../config.ts";
import { ensurePrivateDirSync, removeIfExists, writeFileAtomic } from "../durable/mod.ts";
import {
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  indexerCoverage,
  sourceLocations,
  type SweepProgress,
  type SweepReport,
} from "../message_search/mod.ts";
import { gcTrash } from "../catalog/mod.ts";
import { createApp } from "./app.ts";
import { SEARCH_PAGE_BUDGET_BYTES } from "./coverage_route.ts";
import { loadOrCreateToken, watchTokenFile } from "./token_file.ts";
import { displayPath } from "./token_page.ts";
import { createProgressTracker } from "./sweep_progress.ts";

/** A running daemon. */
export interface Daemon {
  url: string;
  port: number;
  /** The token requests must present now (it follows rotations). */
  readonly token: string;
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

/** How the first sweep ended. */
export type FirstSweep =
  | { ok: true; report: SweepReport; coverage: Coverage }
  | { ok: false; error: Error };

/** Options for {@link startDaemon}. */
export interface DaemonOptions {
  logger?: (line: string) => void;
  ui?: { html: string; js: string };
  /** Skip the immediate first sweep (tests drive sweeps themselves). */
  noInitialSweep?: boolean;
  intervalMs?: number;
  /** Progress of every sweep, per source (the CLI draws the first one). */
  onProgress?: (p: SweepProgress) => void;
  /** Called once when the immediate first sweep ends (not with noInitialSweep). */
  onFirstSweep?: (r: FirstSweep) => void;
  /** How often the token file is re-checked. @default TOKEN_RECHECK_MS */
  tokenRecheckMs?: number;
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
  const loaded = await loadOrCreateToken(cfg.stateRoot);
  if (loaded.replaced === "malformed" || loaded.replaced === "refused") {
    o.logger?.(
      `intendant: the token file in "${cfg.stateRoot}" was ${loaded.replaced}; a new token was written (old links no longer work)`,
    );
  }
  const progress = createProgressTracker();
  const { store, indexer } = await createMessageIndex(cfg, {
    logger: o.logger,
    intervalMs: o.intervalMs,
    onProgress: (p) => {
      progress.update(p);
      o.onProgress?.(p);
    },
  });
  await indexer.startup();
  // Trash entries past their keep time are removed at start; a failure to remove one is
  // logged and never keeps the daemon from serving.
  await gcTrash({ stateRoot: cfg.stateRoot }).catch((err) =>
    o.logger?.(`intendant: trash cleanup failed: ${(err as Error).message}`)
  );
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => indexer.ready,
    // The route appends the coverage block after the page: both must fit the cap.
    responseBudgetBytes: SEARCH_PAGE_BUDGET_BYTES,
  });
  let app: ReturnType<typeof createApp> | null = null;
  // Idempotent: every caller awaits the same shutdown, so the process never exits before
  // daemon.json is removed.
  let stopping: Promise<void> | null = null;
  const server = Deno.serve(
    { hostname: cfg.server.host, port: cfg.server.port, onListen: () => {} },
    (req) => app ? app.fetch(req) : new Response("starting", { status: 503 }),
  );
  const port = server.addr.port;
  const url = `http://127.0.0.1:${port}/`;
  const startedAtMs = Date.now();
  let started = false;
  const writeDaemonJson = (token: string) =>
    writeFileAtomic(
      cfg.daemonJsonPath,
      JSON.stringify({ pid: Deno.pid, port, url, token, started_at_ms: startedAtMs }, null, 2) +
        "\n",
    );
  const tokens = watchTokenFile(cfg.stateRoot, {
    initial: loaded.token,
    intervalMs: o.tokenRecheckMs,
    logger: o.logger,
    onChange: async (token) => {
      o.logger?.(
        "intendant: the dashboard token was rotated; old links and cookies no longer work",
      );
      if (started && !stopping) await writeDaemonJson(token);
    },
  });
  app = createApp({
    token: tokens.current,
    daemonJsonDisplay: displayPath(cfg.daemonJsonPath, cfg.home),
    sweepProgress: progress.snapshot,
    locations: () => sourceLocations(cfg),
    port,
    windowDays: cfg.messageSearch.windowDays,
    engine,
    indexer,
    store,
    catalog: { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
    ui: o.ui,
    logger: o.logger,
  });
  ensurePrivateDirSync(cfg.stateRoot);
  await writeDaemonJson(tokens.current());
  started = true;
  indexer.start();
  if (!o.noInitialSweep) {
    void indexer.sweep().then(
      async (report) => {
        const coverage = indexerCoverage(await store.readManifest(), {
          indexer,
          windowDays: cfg.messageSearch.windowDays,
          lastReport: report,
        });
        o.onFirstSweep?.({ ok: true, report, coverage });
      },
      (err) => {
        o.logger?.(`intendant: first sweep failed: ${(err as Error).message}`);
        o.onFirstSweep?.({ ok: false, error: err as Error });
      },
    );
  }
  const shutdown = () =>
    stopping ??= (async () => {
      // The watch first: an adoption in flight must not re-create daemon.json after it is removed.
      await tokens.stop();
      await server.shutdown();
      await indexer.stop();
      try {
        const cur = JSON.parse(await Deno.readTextFile(cfg.daemonJsonPath));
        if (cur.pid === Deno.pid && cur.port === port) await removeIfExists(cfg.daemonJsonPath);
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound) && !(err instanceof SyntaxError)) throw err;
      }
    })();
  return {
    url,
    port,
    get token() {
      return tokens.current();
    },
    shutdown,
    finished: server.finished,
  };
}
