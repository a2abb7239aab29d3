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
 *
 * The port is held by the TCP front (http_front.ts: header, body and idle timeouts, size
 * caps, a connection cap, origin-form targets only), which forwards each checked request
 * to Deno.serve listening on a private unix socket, `<state-root>/run/http.sock` (the
 * directory is 0700; the socket is removed at shutdown, and one left by a killed daemon is
 * removed at the next start once a connect to it is refused). Nothing but the front can
 * reach that server: no second TCP port exists to bypass it.
 */
import { dirname } from "node:path";
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
import { loadCursorKey } from "./cursor_key.ts";
import { readDaemonFile } from "./daemon_file.ts";
import { displayPath } from "./token_page.ts";
import { createProgressTracker } from "./sweep_progress.ts";
import { type FrontLimits, startHttpFront } from "./http_front.ts";
import { startTeamService, type TeamDb, type TeamService } from "../team/mod.ts";

/**
 * The sweep period of a daemon publishing to a team (`serve --team`): an append must be
 * team-searchable from another machine within 2 s (issue 19), and nothing but a sweep
 * notices it. A no-op sweep opens no source file and writes nothing (it stats them); its
 * cost is measured in bench/RESULTS.md. Without a team the spec's 30 s period stands (a
 * local search refreshes a stale index itself).
 */
export const TEAM_SWEEP_INTERVAL_MS = 1_000;

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
  /** The TCP front's limits (tests shorten the timeouts). @default http_front.ts constants */
  front?: Partial<FrontLimits>;
  /**
   * Team search (`serve --team`): publish after every change of the local index, serve
   * team search and remote sessions. `open` opens and checks the database; it is called
   * on first use and retried after a failure, so the daemon starts and serves this machine
   * whatever the team database does.
   */
  team?: { open: () => Promise<TeamDb>; machine: string; binaryVersion: string };
}

/** How long requests in flight may take to finish at shutdown. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Longest unix socket path (sun_path is 108 bytes on Linux, 104 on macOS; NUL included). */
const SOCKET_PATH_MAX_BYTES = 103;

/**
 * Makes `path` free for the daemon's socket: a socket left by a killed daemon (a connect
 * is refused) is removed; one that answers belongs to a daemon serving this state root
 * now, and two daemons on one state root would fight over daemon.json and the index, so
 * that is refused like a taken port (AddrInUse, exit 6).
 */
async function claimSocketPath(path: string): Promise<void> {
  ensurePrivateDirSync(dirname(path));
  const bytes = new TextEncoder().encode(path).length;
  if (bytes > SOCKET_PATH_MAX_BYTES) {
    throw new RangeError(
      `State root path is too long for the daemon's private socket: "${path}" is ${bytes} bytes, at most ${SOCKET_PATH_MAX_BYTES}; set INTENDANT_HOME to a shorter directory`,
    );
  }
  try {
    (await Deno.connect({ transport: "unix", path })).close();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    if (!(err instanceof Deno.errors.ConnectionRefused)) throw err;
    await removeIfExists(path);
    return;
  }
  throw new Deno.errors.AddrInUse(
    `Another intendant daemon is serving this state root (its socket "${path}" answers)`,
  );
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
    intervalMs: o.intervalMs ?? (o.team ? TEAM_SWEEP_INTERVAL_MS : undefined),
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
  const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot, { logger: o.logger });
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey,
    isReady: () => indexer.ready,
    // The route appends the coverage block after the page: both must fit the cap.
    responseBudgetBytes: SEARCH_PAGE_BUDGET_BYTES,
    // A damaged generation met by a search is quarantined and re-derived by a background
    // sweep started at once (F8).
    onDamage: (found) => indexer.reportDamage(found),
  });
  let app: ReturnType<typeof createApp> | null = null;
  let team: TeamService | null = null;
  // Idempotent: every caller awaits the same shutdown, so the process never exits before
  // daemon.json is removed.
  let stopping: Promise<void> | null = null;
  // The port first: a taken port fails here (AddrInUse, exit 6) before anything else opens.
  const listener = Deno.listen({ hostname: cfg.server.host, port: cfg.server.port });
  const socketPath = cfg.daemonSocketPath;
  let server: Deno.HttpServer<Deno.UnixAddr>;
  try {
    await claimSocketPath(socketPath);
    server = Deno.serve(
      { path: socketPath, onListen: () => {} },
      (req) => app ? app.fetch(req) : new Response("starting", { status: 503 }),
    );
  } catch (err) {
    listener.close();
    throw err;
  }
  const front = startHttpFront({
    listener,
    connectUpstream: () => Deno.connect({ transport: "unix", path: socketPath }),
    limits: o.front,
  });
  const port = (listener.addr as Deno.NetAddr).port;
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
    catalog: {
      logsDir: cfg.logsDir,
      store,
      namesPath: cfg.sessionNamesPath,
      onDamage: (found) => indexer.reportDamage(found),
    },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
    ui: o.ui,
    logger: o.logger,
    team: o.team
      ? (team = startTeamService({
        open: o.team.open,
        machine: o.team.machine,
        store,
        cursorKey,
        binaryVersion: o.team.binaryVersion,
        logger: o.logger,
      }))
      : undefined,
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
      // New connections stop and idle ones close; requests in flight get SHUTDOWN_GRACE_MS
      // to finish (Deno.serve's graceful shutdown), then what is left is closed: an open
      // live stream never ends by itself, and used to hold the shutdown until its tab closed.
      front.drain();
      const graceful = server.shutdown();
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        graceful,
        new Promise((r) => (grace = setTimeout(r, SHUTDOWN_GRACE_MS))),
      ]);
      clearTimeout(grace);
      await front.close();
      await graceful;
      await removeIfExists(socketPath);
      await indexer.stop();
      // After the indexer: its last publish is not cut off mid-batch (a cut batch rolls back
      // and the next start publishes it again; nothing is lost either way).
      await team?.stop();
      // Through the contained reader (daemon_file.ts): whatever sits at the name now is
      // read capped, never followed or waited on, and removed only if it is still ours.
      const cur = await readDaemonFile(cfg.daemonJsonPath);
      if (cur?.pid === Deno.pid && cur.port === port) await removeIfExists(cfg.daemonJsonPath);
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
