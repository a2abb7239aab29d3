/**
 * `intendant search QUERY`: the complete first page, or a plain statement that it is not.
 * A one-shot process has a cold arena, so the dashboard's 150 ms interactive budget would
 * answer most searches partially (8 of 500 hits of a mid-frequency word were measured on
 * a 530k-message store). So every CLI search is a `complete` request (no time budget):
 *  - when a daemon of this state root is running (daemon.json, live pid, and it accepts
 *    the token) the daemon answers from its warm arena, kept fresh by its file watch;
 *    `--refresh` asks it to sweep first (`refresh=1`), and an answer older than
 *    STALE_NOTE_MS says how old it is;
 *  - otherwise the store is searched in this process, with a progress line on a TTY after
 *    1 s; `--refresh` sweeps first.
 * "no matches" is printed only when the whole index was searched; a page that could not
 * search some sessions (damaged index shards, F8) says how many, names them, and says
 * whether they are being rebuilt (a daemon answered: it started the repair sweep) or need
 * `intendant index` (searched in process), or cannot be rebuilt (sources gone). A cursor from either
 * path continues on either (both sign with the state root's cursor.key); a bad or expired
 * cursor is a usage error (exit 2, one line), never a stack trace.
 * `--archive` searches the archive instead (sessions older than the window: lib/message_search
 * archive/), by the daemon when one runs, else here (built first when empty); the listing
 * ends with a line saying it came from the archive and what it did not cover.
 * `--deep` runs Deep Search instead (search_deep.ts): tool output and reasoning too, every
 * source's files and the vault's copies, printed as found, with what it scanned.
 */
import { resolveConfig, type ResolvedConfig } from "../config.ts";
import {
  type Archive,
  type ArchivePage,
  buildCoverage,
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  type Freshness,
  type SearchRequest,
  type SearchResponse,
  SOURCES,
} from "../message_search/mod.ts";
import { archiveLines } from "./archive_out.ts";
import { runDeepSearch } from "./search_deep.ts";
import { loadCursorKey, readDaemonFile, searchViaDaemon } from "../server/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { createTeamSearch, type TeamSearchRequest } from "../team/mod.ts";
import { openTeam } from "./team_config.ts";
import { boolFlag, numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { type StatusLine, statusLine } from "./status_line.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { formatResults, maskForeignGroups, searchHints } from "./search_out.ts";

export { formatResults } from "./search_out.ts";

const USAGE = `intendant search QUERY [--json] [--limit N] [--sort newest|relevance]
                 [--include-superseded] [--source S[,S]]
                 [--role user|assistant] [--project P] [--cursor C] [--refresh]
                 [--archive | --deep]
                 [--team URL [--machine M[,M]] [--unmask-own] | --local]`;

/** A page and who answered it. */
interface Answer {
  res: SearchResponse;
  coverage: Coverage | unknown;
  answeredBy: "daemon" | "store" | "team";
  /** Why a daemon named in daemon.json was not used. */
  daemonNote: string | null;
  /** The daemon's index lags (its watch failed, or changes wait): how, for stderr. */
  staleNote?: string | null;
}

/** A daemon answer older than this says so on stderr (a healthy watch answers at age 0). */
export const STALE_NOTE_MS = 10_000;

/** The stderr line for a daemon answer whose freshness block says it lags, or null. */
function staleNoteOf(f: Freshness | undefined): string | null {
  if (!f || f.age_ms === null || f.age_ms < STALE_NOTE_MS) return null;
  const why = f.note ? ` (${f.note})` : "";
  return `the daemon's index is ${Math.round(f.age_ms / 1000)} s old${why}; --refresh sweeps first`;
}

export const searchCommand: Command = {
  name: "search",
  summary: "search what was said to every agent (same engine and results as the API)",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {
      json: { type: "boolean" },
      limit: { type: "number" },
      "include-superseded": { type: "boolean" },
      source: { type: "string" },
      role: { type: "string" },
      project: { type: "string" },
      cursor: { type: "string" },
      refresh: { type: "boolean" },
      team: { type: "string" },
      machine: { type: "string" },
      local: { type: "boolean" },
      "unmask-own": { type: "boolean" },
      sort: { type: "string" },
      archive: { type: "boolean" },
      deep: { type: "boolean" },
    });
    const q = args.positionals.join(" ").trim();
    if (!q) throw new InvalidInputError("Missing QUERY");
    const sort = stringFlag(args, "sort");
    if (sort !== undefined && sort !== "newest" && sort !== "relevance") {
      throw new InvalidInputError(`Invalid --sort "${sort}": expected newest or relevance`);
    }
    const req: SearchRequest = {
      q,
      ...(sort ? { sort } : {}),
      limit: numberFlag(args, "limit"),
      cursor: stringFlag(args, "cursor") ?? null,
      include_superseded: boolFlag(args, "include-superseded"),
      source: csv(stringFlag(args, "source"), SOURCES, "--source"),
      role: csv(stringFlag(args, "role"), ["user", "assistant"] as const, "--role"),
      project: stringFlag(args, "project"),
      complete: true,
    };
    const cfg = resolveConfig(io.env, { cwd: io.cwd, team: stringFlag(args, "team") });
    const status = statusLine(io.stderr, { isTty: io.isTty });
    // A configured team (--team or INTENDANT_TEAM_URL) is searched unless --local says
    // otherwise: the team database holds this machine's published sessions too.
    const local = boolFlag(args, "local");
    if (local && stringFlag(args, "team") !== undefined) {
      throw new InvalidInputError("--local and --team exclude each other");
    }
    const machines = stringFlag(args, "machine")?.split(",").map((m) => m.trim()).filter(Boolean);
    if (machines && (local || cfg.team.url === null)) {
      throw new InvalidInputError(
        "--machine filters team search: add --team URL (or set INTENDANT_TEAM_URL)",
      );
    }
    const unmaskOwn = boolFlag(args, "unmask-own");
    if (unmaskOwn && (local || cfg.team.url === null)) {
      throw new InvalidInputError(
        "--unmask-own applies to team search: this machine's own index is never masked",
      );
    }
    if (sort === "relevance" && cfg.team.url !== null && !local) {
      throw new InvalidInputError(
        "--sort relevance is not available for team search yet: add --local to rank this " +
          "machine's index, or search the team newest-first",
      );
    }
    // --archive: sessions older than the window (lib/message_search archive/), this
    // machine only: the team database keeps its own retention.
    const archive = boolFlag(args, "archive");
    if (archive && cfg.team.url !== null && !local) {
      throw new InvalidInputError("--archive searches this machine's archive: add --local");
    }
    if (boolFlag(args, "deep")) {
      // Deep Search (search_deep.ts): its own scan, page and listing.
      const refused = ["archive", "team", "machine", "source", "role", "project", "sort"]
        .filter((f) => args.flags[f] !== undefined && args.flags[f] !== false)
        .concat(boolFlag(args, "include-superseded") ? ["include-superseded"] : []);
      if (refused.length > 0 || (cfg.team.url !== null && !local)) {
        throw new InvalidInputError(
          refused.length > 0
            ? `--deep scans every file as written and takes no --${refused[0]}`
            : "--deep scans this machine's files: add --local",
        );
      }
      try {
        await runDeepSearch({
          cfg,
          io,
          status,
          q,
          limit: numberFlag(args, "limit"),
          cursor: stringFlag(args, "cursor") ?? null,
          refresh: boolFlag(args, "refresh"),
          json: boolFlag(args, "json"),
        });
      } finally {
        status.done();
      }
      return EXIT_OK;
    }
    let a: Answer;
    try {
      a = cfg.team.url !== null && !local
        ? await answerTeam({ cfg, req: { ...req, machine: machines }, io, status, unmaskOwn })
        : await answer({ cfg, req, refresh: boolFlag(args, "refresh"), status, archive });
    } finally {
      status.done();
    }
    if (a.daemonNote) {
      io.stderr(`intendant: ${a.daemonNote}; searched the store directly\n`);
    }
    if (boolFlag(args, "json")) {
      const out = { ...a.res, coverage: a.coverage, answered_by: a.answeredBy };
      io.stdout(stringifyTerminalSafe(out) + "\n");
    } else {
      io.stdout(formatResults(a.res, { answeredBy: a.answeredBy }));
      io.stdout(archiveLines((a.res as Partial<ArchivePage>).archive));
    }
    for (const h of searchHints(a.res)) io.stderr(`${h}\n`);
    if (a.staleNote) io.stderr(`intendant: ${terminalSafe(a.staleNote)}\n`);
    return EXIT_OK;
  },
};

/**
 * Searches the team database (complete, like every CLI search). Team search is bounded by
 * the server's retention (`intendant team retention`), not this machine's window: the
 * other machines' records are theirs to keep. The answer is masked (search_out.ts
 * maskForeignGroups) before anything prints it, --json included.
 */
async function answerTeam(
  o: {
    cfg: ResolvedConfig;
    req: TeamSearchRequest;
    io: CliIo;
    status: StatusLine;
    unmaskOwn: boolean;
  },
): Promise<Answer> {
  const team = await openTeam(o.cfg, (w) => o.io.stderr(`intendant: ${terminalSafe(w)}\n`));
  try {
    o.status.update(`searching the team database (${terminalSafe(team.url.redacted)})…`);
    const engine = createTeamSearch({
      db: team.db,
      cursorKey: await loadCursorKey(o.cfg.messageSearch.cacheRoot),
      windowDays: null,
    });
    const res = maskForeignGroups(await engine.search(o.req), {
      ownMachine: team.machine,
      unmaskOwn: o.unmaskOwn,
    });
    return {
      res,
      coverage: { team: team.url.redacted, machine: team.machine, revision: res.revision },
      answeredBy: "team",
      daemonNote: null,
    };
  } finally {
    await team.db.close();
  }
}

/** Asks the daemon when one serves this state root, else searches the store here. */
async function answer(
  o: {
    cfg: ResolvedConfig;
    req: SearchRequest;
    refresh: boolean;
    status: StatusLine;
    archive: boolean;
  },
): Promise<Answer> {
  const { cfg, req, status } = o;
  let daemonNote: string | null = null;
  const daemon = await readDaemonFile(cfg.daemonJsonPath);
  if (daemon) {
    const started = Date.now();
    const tick = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      status.update(`searching (daemon on 127.0.0.1:${daemon.port})… ${s} s`);
    }, 250);
    try {
      const r = await searchViaDaemon(daemon, req, { refresh: o.refresh, archive: o.archive });
      if (!("unreachable" in r)) {
        const { coverage, ...res } = r;
        const staleNote = staleNoteOf((r as { freshness?: Freshness }).freshness);
        return { res, coverage, answeredBy: "daemon", daemonNote: null, staleNote };
      }
      daemonNote = `${r.unreachable} (daemon.json names 127.0.0.1:${daemon.port})`;
    } finally {
      clearInterval(tick);
    }
  }
  const { store, indexer, archive } = await createMessageIndex(cfg);
  if (o.archive) return await answerArchive({ ...o, archive, daemonNote });
  if (o.refresh) await indexer.sweep();
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => true,
  });
  const res = await engine.search(req, {
    onProgress: (n, total) => status.update(`searching the store: ${n} of ${total} sessions…`),
  });
  const manifest = await store.readManifest();
  const coverage = buildCoverage(manifest, {
    ready: true,
    windowDays: cfg.messageSearch.windowDays,
    lastSweepAtMs: null,
    lastReport: null,
  });
  if (Object.keys(manifest.sessions).length === 0) {
    daemonNote = null;
    res.state = "building";
  }
  return { res, coverage, answeredBy: "store", daemonNote };
}

/**
 * The archive searched in this process: swept first when asked, or when it holds nothing
 * yet (a first `--archive` builds it; later ones answer from it and say how old it is).
 */
async function answerArchive(
  o: {
    cfg: ResolvedConfig;
    req: SearchRequest;
    refresh: boolean;
    status: StatusLine;
    archive: Archive;
    daemonNote: string | null;
  },
): Promise<Answer> {
  const { archive, cfg } = o;
  const held = Object.keys((await archive.store.readManifest()).sessions).length;
  if (o.refresh || held === 0) {
    o.status.update("building the archive of sessions older than the window…");
    await archive.sweep();
  }
  const res = await archive.search(o.req, {
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
  });
  const coverage = { archive: res.archive };
  return { res, coverage, answeredBy: "store", daemonNote: o.daemonNote };
}

function csv<T extends string>(
  raw: string | undefined,
  allowed: readonly T[],
  flag: string,
): T[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(",").map((s) => s.trim()).filter(Boolean);
  for (const p of parts) {
    if (!allowed.includes(p as T)) {
      throw new InvalidInputError(`Invalid ${flag} "${p}": expected ${allowed.join(", ")}`);
    }
  }
  return parts as T[];
}
