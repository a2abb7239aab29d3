/**
 * Where the MCP server's answers come from. Warm: a running daemon of this state root
 * (daemon.json, asked over loopback with its token, exactly as `intendant search` does:
 * lib/server/daemon_client.ts) answers searches from its resident arena and reports its own
 * coverage. Cold: the store is opened in this process, once, and kept (the MCP server is
 * long-lived, so its own arena warms up too). Every search is a `complete` request, so
 * neither path ever answers a partial page for lack of time.
 * The daemon is looked up again on EVERY call: one that went away mid-session (stopped,
 * crashed, its port no longer granted) makes that call fall back to the store with no
 * error, and one that starts later is used from the next call on.
 * Freshness on the cold path: the index is swept before the first cold answer and again
 * whenever the last sweep is older than COLD_SWEEP_STALE_MS (the daemon's own period), so
 * a session written a minute ago is found without a daemon. A sweep that fails (a daemon
 * we cannot reach holds the writer lock, a source home is unreadable) is logged to stderr
 * and the answer is given from the index as it is: complete over what is indexed.
 * The catalog (listing, session detail) is always read here: it is file reads the daemon
 * would do the same way, with no arena to gain from.
 */
import type { ResolvedConfig } from "../config.ts";
import {
  buildCoverage,
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  type MessageIndex,
  type SearchEngine,
  type SearchRequest,
  type SearchResponse,
} from "../message_search/mod.ts";
import { type DaemonFile, loadCursorKey, readDaemonFile, searchViaDaemon } from "../server/mod.ts";
import type { CatalogDeps } from "../catalog/mod.ts";
import { Vault } from "../vault/mod.ts";
import type { TeamBackend } from "./team_backend.ts";

/** The daemon's sweep period: an index swept longer ago than this is refreshed first. */
export const COLD_SWEEP_STALE_MS = 30_000;
/** How long the warm path waits for the daemon's coverage before using the store's. */
const COVERAGE_TIMEOUT_MS = 5_000;

/** Who answered a call. */
export type AnsweredBy = "daemon" | "store";

/** The answers the tools need, warm or cold. */
export interface McpBackend {
  /** One page; `archive`: sessions older than the window (lib/message_search archive/). */
  search(
    req: SearchRequest,
    o?: { archive?: boolean },
  ): Promise<{ res: SearchResponse; by: AnsweredBy }>;
  coverage(): Promise<{ coverage: Coverage; by: AnsweredBy; sweptAtMs: number | null }>;
  catalog(): Promise<CatalogDeps>;
  /** The port dashboard links name: the running daemon's, else the configured one. */
  dashboardPort(): Promise<number>;
  /** The team database (`--team URL`): search_messages answers from it; null: none. */
  team: TeamBackend | null;
}

/** Options for {@link createBackend}. */
export interface BackendOptions {
  /** Diagnostics (stderr: stdout is the protocol). */
  logger: (line: string) => void;
  /** @default Date.now */
  now?: () => number;
  /** The team database when one is configured. @default null */
  team?: TeamBackend | null;
}

/** The backend for `cfg`'s state root. */
export function createBackend(cfg: ResolvedConfig, o: BackendOptions): McpBackend {
  const now = o.now ?? Date.now;
  let local: Promise<{ index: MessageIndex; engine: SearchEngine }> | null = null;
  let lastSweepAtMs: number | null = null;
  let sweeping: Promise<void> | null = null;

  const openLocal = () =>
    local ??= (async () => {
      const index = await createMessageIndex(cfg, { logger: o.logger });
      const engine = createSearchEngine({
        store: index.store,
        windowDays: cfg.messageSearch.windowDays,
        cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
        isReady: () => true,
      });
      return { index, engine };
    })();

  /** The local index, swept first when stale (concurrent calls share one sweep). */
  const freshLocal = async () => {
    const l = await openLocal();
    const t = now();
    if (lastSweepAtMs === null || t - lastSweepAtMs >= COLD_SWEEP_STALE_MS) {
      sweeping ??= l.index.indexer.sweep().then(
        () => {
          lastSweepAtMs = now();
        },
        (err) => {
          o.logger(
            `intendant mcp: refreshing the index failed (answering from it as it is): ${
              err instanceof Error ? err.message : String(err)
            }`,
          );
          lastSweepAtMs = now();
        },
      ).finally(() => {
        sweeping = null;
      });
      await sweeping;
    }
    return l;
  };

  const daemon = (): Promise<DaemonFile | null> => readDaemonFile(cfg.daemonJsonPath);

  return {
    team: o.team ?? null,
    async search(req, so = {}) {
      const d = await daemon();
      if (d) {
        const r = await searchViaDaemon(d, { ...req, complete: true }, { archive: so.archive });
        if (!("unreachable" in r)) {
          const { coverage: _c, ...res } = r;
          return { res, by: "daemon" };
        }
        o.logger(`intendant mcp: ${r.unreachable}; answering from the store`);
      }
      const { engine, index } = await freshLocal();
      if (so.archive) {
        // Built here the first time (it holds nothing yet); later calls answer from it.
        const a = index.archive;
        if (Object.keys((await a.store.readManifest()).sessions).length === 0) await a.sweep();
        const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
        return { res: await a.search({ ...req, complete: true }, { cursorKey }), by: "store" };
      }
      return { res: await engine.search({ ...req, complete: true }), by: "store" };
    },
    async coverage() {
      const d = await daemon();
      if (d) {
        const c = await daemonCoverage(d);
        if (c) return { coverage: c, by: "daemon", sweptAtMs: c.last_sweep_at_ms };
      }
      const { index } = await freshLocal();
      const manifest = await index.store.readManifest();
      const coverage = buildCoverage(manifest, {
        ready: true,
        windowDays: cfg.messageSearch.windowDays,
        lastSweepAtMs,
        lastReport: index.indexer.lastReport,
      });
      return { coverage, by: "store", sweptAtMs: lastSweepAtMs };
    },
    async catalog() {
      // With a daemon up it keeps the index fresh (and holds the writer lock): no sweep here.
      const { index } = (await daemon()) ? await openLocal() : await freshLocal();
      return {
        logsDir: cfg.logsDir,
        store: index.store,
        namesPath: cfg.sessionNamesPath,
        // Deep Search reads the vault's copies of deleted sessions.
        vault: new Vault({ dir: cfg.vault.dir }),
      };
    },
    async dashboardPort() {
      return (await daemon())?.port ?? cfg.server.port;
    },
  };
}

/** The daemon's coverage block, or null when it cannot be had (the store answers then). */
async function daemonCoverage(d: DaemonFile): Promise<Coverage | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${d.port}/api/coverage`, {
      headers: { authorization: `Bearer ${d.token}`, accept: "application/json" },
      signal: AbortSignal.timeout(COVERAGE_TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return await res.json() as Coverage;
  } catch (err) {
    // Gone, not granted, timed out or not JSON: all mean "ask the store".
    if (
      err instanceof TypeError || err instanceof DOMException || err instanceof SyntaxError ||
      err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied
    ) return null;
    throw err;
  }
}
