/**
 * The daemon: one process that serves the dashboard and the API on 127.0.0.1, runs the
 * indexer, and writes `<state-root>/daemon.json` ({pid, port, url, token}, 0600) so the
 * CLI and scripts can find it. The token is the persisted one (`<state-root>/token`,
 * token_file.ts): the same across restarts, and followed while running, so `intendant
 * token --rotate` takes effect without a restart (daemon.json is rewritten with it). The
 * index stays fresh by watching the roots it reads (message_search freshness/: a change is
 * swept within a tenth of a second, a full sweep runs every 5 minutes as a safety net,
 * polling takes over with a coverage note when watching fails); no search waits for a
 * sweep unless it asks (`refresh=1`). The daemon sweeps once right after start in the
 * background, so a user who opens the dashboard is not shown `building` for long; that
 * first sweep's progress is handed to the caller (the CLI's progress line) and to the
 * coverage endpoint, and its end is reported once. With `--team`, the publisher is woken
 * after every sweep that moved the index (never by a sweep timer of its own). Shutdown stops the server, the token watch and the indexer and removes
 * daemon.json if it is still ours.
 *
 * The port is held by the TCP front (http_front.ts: header, body and idle timeouts, size
 * caps, a connection cap, origin-form targets only), which forwards each checked request
 * to Deno.serve listening on a private unix socket, `<state-root>/run/http.sock` (the
 * directory is 0700; the socket is removed at shutdown, and one left by a killed daemon is
 * removed at the next start once a connect to it is refused). Nothing but the front can
 * reach that server: no second TCP port exists to bypass it.
 */
import { keeperOf, keptCopyOf, listenerOf, restoreKept, Vault, vaultReport } from "../vault/mod.ts";
import { dirname } from "node:path";
import type { ResolvedConfig } from "../config.ts";
import { ensurePrivateDirSync, removeIfExists, writeFileAtomic } from "../durable/mod.ts";
import {
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  FreshnessScheduler,
  indexerCoverage,
  realWatchFs,
  type Source,
  SOURCE_TABLE,
  sourceLocations,
  type SweepProgress,
  type SweepReport,
  type WatchFs,
} from "../message_search/mod.ts";
import { finishInterruptedDeletes, gcTrash, resumeCommand } from "../catalog/mod.ts";
import { createApp } from "./app.ts";
import { SEARCH_PAGE_BUDGET_BYTES } from "./coverage_route.ts";
import { loadOrCreateToken, watchTokenFile } from "./token_file.ts";
import { loadCursorKey } from "./cursor_key.ts";
import { readDaemonFile } from "./daemon_file.ts";
import { displayPath } from "./token_page.ts";
import { createProgressTracker } from "./sweep_progress.ts";
import { type FrontLimits, startHttpFront } from "./http_front.ts";
import { startTeamService, type TeamDb, type TeamService } from "../team/mod.ts";

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
  /**
   * The freshness scheduler's knobs: `watch` null turns file watching off (polling only;
   * tests that drive sweeps themselves), or injects a failing watch (fault tests).
   * @default realWatchFs and the scheduler's constants
   */
  freshness?: {
    watch?: WatchFs | null;
    safetyNetMs?: number;
    pollMinMs?: number;
    debounceMs?: number;
  };
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
 * Why the daemon cannot start where it was asked to (exit 6, busy): `port`, another
 * program holds the TCP port; `state_root`, another daemon answers on this state root's
 * socket (its pid and port from daemon.json when that file is sane). An AddrInUse, so
 * every caller that treats a taken port as busy keeps doing so; `busy` lets the CLI's one
 * printer say which fix applies (lib/cli/errors_out.ts).
 */
export class DaemonBusyError extends Deno.errors.AddrInUse {
  readonly busy:
    | { kind: "port"; host: string; port: number }
    | { kind: "state_root"; socket: string; pid: number | null; port: number | null };
  constructor(busy: DaemonBusyError["busy"], options?: ErrorOptions) {
    // Lower case after the CLI's "intendant: ", as the README quotes them (Troubleshooting).
    super(
      busy.kind === "port"
        ? `port ${busy.port} on ${busy.host} is in use`
        : `another intendant daemon is serving this state root${
          knownOf(busy)
        }: its socket "${busy.socket}" answers`,
      options,
    );
    this.name = "DaemonBusyError";
    this.busy = busy;
  }
}

/** ` (pid N, port P)`, with what daemon.json told; "" when it told nothing. */
function knownOf(b: { pid: number | null; port: number | null }): string {
  const known = [b.pid === null ? null : `pid ${b.pid}`, b.port === null ? null : `port ${b.port}`]
    .filter((x) => x !== null);
  return known.length > 0 ? ` (${known.join(", ")})` : "";
}

/** Whether a daemon answers on the unix socket `path` now. */
async function socketAnswers(path: string): Promise<boolean> {
  try {
    (await Deno.connect({ transport: "unix", path })).close();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.ConnectionRefused) {
      return false;
    }
    throw err;
  }
}

/** The state-root refusal, with the live daemon's pid and port when daemon.json names them. */
async function stateRootBusy(cfg: ResolvedConfig, cause?: unknown): Promise<DaemonBusyError> {
  const d = await readDaemonFile(cfg.daemonJsonPath);
  return new DaemonBusyError(
    {
      kind: "state_root",
      socket: cfg.daemonSocketPath,
      pid: d?.pid ?? null,
      port: d?.port ?? null,
    },
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Makes the daemon's socket path free: a socket left by a killed daemon (a connect is
 * refused) is removed; one that answers belongs to a daemon serving this state root now,
 * and two daemons on one state root would fight over daemon.json and the index, so that is
 * refused like a taken port (DaemonBusyError, exit 6).
 */
async function claimSocketPath(cfg: ResolvedConfig): Promise<void> {
  const path = cfg.daemonSocketPath;
  ensurePrivateDirSync(dirname(path));
  const bytes = new TextEncoder().encode(path).length;
  if (bytes > SOCKET_PATH_MAX_BYTES) {
    throw new RangeError(
      `State root path is too long for the daemon's private socket: "${path}" is ${bytes} bytes, at most ${SOCKET_PATH_MAX_BYTES}; set INTENDANT_HOME to a shorter directory`,
    );
  }
  if (await socketAnswers(path)) throw await stateRootBusy(cfg);
  await removeIfExists(path);
}

/**
 * Listens on the configured TCP port. A taken port is a DaemonBusyError: `state_root` when
 * this state root's own daemon holds it (the second `intendant serve` on one home, the
 * common case: the fix is that daemon, not another port), `port` otherwise.
 */
async function listenTcp(cfg: ResolvedConfig): Promise<Deno.Listener> {
  try {
    return Deno.listen({ hostname: cfg.server.host, port: cfg.server.port });
  } catch (err) {
    if (!(err instanceof Deno.errors.AddrInUse)) throw err;
    // A socket path too long to connect to cannot be ours: claimSocketPath says so later.
    const ours = new TextEncoder().encode(cfg.daemonSocketPath).length <= SOCKET_PATH_MAX_BYTES &&
      await socketAnswers(cfg.daemonSocketPath);
    if (ours) throw await stateRootBusy(cfg, err);
    throw new DaemonBusyError(
      { kind: "port", host: cfg.server.host, port: cfg.server.port },
      { cause: err },
    );
  }
}

/** Starts serving. Throws DaemonBusyError (an AddrInUse) when the port or the state root is taken. */
export async function startDaemon(cfg: ResolvedConfig, o: DaemonOptions = {}): Promise<Daemon> {
  const loaded = await loadOrCreateToken(cfg.stateRoot);
  if (loaded.replaced === "malformed" || loaded.replaced === "refused") {
    o.logger?.(
      `intendant: the token file in "${cfg.stateRoot}" was ${loaded.replaced}; a new token was written (old links no longer work)`,
    );
  }
  const progress = createProgressTracker();
  // The vault keeps what the sweeps list, in the background (lib/vault keeper.ts).
  const keeper = keeperOf(cfg, { logger: o.logger });
  const { store, indexer, watchTargets } = await createMessageIndex(cfg, {
    logger: o.logger,
    lexicon: true,
    onListed: listenerOf(keeper),
    onProgress: (p) => {
      progress.update(p);
      o.onProgress?.(p);
    },
  });
  await indexer.startup();
  // Trash entries past their keep time are removed at start; a failure to remove one is
  // logged and never keeps the daemon from serving.
  // A delete a crash cut short is finished before anything is listed (H9).
  await finishInterruptedDeletes({ stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store });
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
  const fo = o.freshness ?? {};
  const freshness = new FreshnessScheduler({
    indexer,
    targets: watchTargets,
    fs: fo.watch === undefined ? realWatchFs : fo.watch,
    safetyNetMs: fo.safetyNetMs,
    pollMinMs: fo.pollMinMs,
    debounceMs: fo.debounceMs,
    logger: o.logger,
    // The team replica follows the local index: publish as soon as a sweep moved it.
    onSwept: () => void team?.syncNow().catch(() => {}),
  });
  // Idempotent: every caller awaits the same shutdown, so the process never exits before
  // daemon.json is removed.
  let stopping: Promise<void> | null = null;
  // The port first: a taken port fails here (AddrInUse, exit 6) before anything else opens.
  const listener = await listenTcp(cfg);
  const socketPath = cfg.daemonSocketPath;
  let server: Deno.HttpServer<Deno.UnixAddr>;
  try {
    await claimSocketPath(cfg);
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
    freshness,
    store,
    catalog: {
      logsDir: cfg.logsDir,
      store,
      namesPath: cfg.sessionNamesPath,
      onDamage: (found) => indexer.reportDamage(found),
      // A gone session's tool calls come from the vault's copy (kept even when it is off).
      keptCopy: keptCopyOf(cfg),
      // Deep Search scans the vault's copies of gone sessions (also when it is off now).
      vault: new Vault({ dir: cfg.vault.dir }),
    },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
    ui: o.ui,
    logger: o.logger,
    vault: cfg.vault.enabled
      ? {
        report: () => vaultReport(cfg),
        restore: async (session) => {
          const { catalog, files } = await restoreKept(cfg, { query: session, to: null });
          const entry = (await store.readManifest()).sessions[catalog.key];
          const source = catalog.source as Source;
          // The next sweep finds the files again; ask for it now so the badge clears.
          void freshness.refresh().catch(() => {});
          return {
            key: catalog.key,
            files: files.map((f) => ({ path: f.path, bytes: f.bytes })),
            resume: resumeCommand({
              source,
              sessionId: catalog.session_id,
              project: entry?.meta.project ?? null,
              files: files.map((f) => f.path),
            }),
            note: SOURCE_TABLE[source]?.keep.restore ?? null,
          };
        },
      }
      : undefined,
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
  await freshness.start();
  if (!o.noInitialSweep) {
    void freshness.refresh().then(
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
      await freshness.stop();
      await indexer.stop();
      await keeper?.stop();
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
