/**
 * `intendant search QUERY`: the complete first page, or a plain statement that it is not.
 * A one-shot process has a cold arena, so the dashboard's 150 ms interactive budget would
 * answer most searches partially (8 of 500 hits of a mid-frequency word were measured on
 * a 530k-message store). So every CLI search is a `complete` request (no time budget):
 *  - when a daemon of this state root is running (daemon.json, live pid, and it accepts
 *    the token) the daemon answers from its warm arena, refreshing its index first if the
 *    last sweep is stale (so `--refresh` needs no local sweep then);
 *  - otherwise the store is searched in this process, with a progress line on a TTY after
 *    1 s; `--refresh` sweeps first.
 * "no matches" is printed only when the whole index was searched; a page that could not
 * search some sessions (damaged index shards, F8) says how many, names them, and says
 * whether they are being rebuilt (a daemon answered: it started the repair sweep) or need
 * `intendant index` (searched in process), or cannot be rebuilt (sources gone). A cursor from either
 * path continues on either (both sign with the state root's cursor.key); a bad or expired
 * cursor is a usage error (exit 2, one line), never a stack trace.
 */
import { resolveConfig, type ResolvedConfig } from "../config.ts";
import {
  buildCoverage,
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  type SearchRequest,
  type SearchResponse,
  SOURCES,
} from "../message_search/mod.ts";
import { loadCursorKey, readDaemonFile, searchViaDaemon } from "../server/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { createTeamSearch, type TeamSearchRequest } from "../team/mod.ts";
import { openTeam } from "./team_config.ts";
import { boolFlag, numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { type StatusLine, statusLine } from "./status_line.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";

const USAGE = `intendant search QUERY [--json] [--limit N] [--include-superseded] [--source S[,S]]
                 [--role user|assistant] [--project P] [--cursor C] [--refresh]
                 [--team URL [--machine M[,M]] | --local]`;

/** A page and who answered it. */
interface Answer {
  res: SearchResponse;
  coverage: Coverage | unknown;
  answeredBy: "daemon" | "store" | "team";
  /** Why a daemon named in daemon.json was not used. */
  daemonNote: string | null;
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
    });
    const q = args.positionals.join(" ").trim();
    if (!q) throw new InvalidInputError("Missing QUERY");
    const req: SearchRequest = {
      q,
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
      throw new InvalidInputError("--machine filters team search: give --team URL");
    }
    let a: Answer;
    try {
      a = cfg.team.url !== null && !local
        ? await answerTeam({ cfg, req: { ...req, machine: machines }, io, status })
        : await answer({ cfg, req, refresh: boolFlag(args, "refresh"), status });
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
    }
    return EXIT_OK;
  },
};

/**
 * Searches the team database (complete, like every CLI search). Team search is bounded by
 * the server's retention (`intendant team retention`), not this machine's window: the
 * other machines' records are theirs to keep.
 */
async function answerTeam(
  o: { cfg: ResolvedConfig; req: TeamSearchRequest; io: CliIo; status: StatusLine },
): Promise<Answer> {
  const team = await openTeam(o.cfg, (w) => o.io.stderr(`intendant: ${terminalSafe(w)}\n`));
  try {
    o.status.update(`searching the team database (${terminalSafe(team.url.redacted)})…`);
    const engine = createTeamSearch({
      db: team.db,
      cursorKey: await loadCursorKey(o.cfg.messageSearch.cacheRoot),
      windowDays: null,
    });
    const res = await engine.search(o.req);
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
  o: { cfg: ResolvedConfig; req: SearchRequest; refresh: boolean; status: StatusLine },
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
      const r = await searchViaDaemon(daemon, req);
      if (!("unreachable" in r)) {
        const { coverage, ...res } = r;
        return { res, coverage, answeredBy: "daemon", daemonNote: null };
      }
      daemonNote = `${r.unreachable} (daemon.json names 127.0.0.1:${daemon.port})`;
    } finally {
      clearInterval(tick);
    }
  }
  const { store, indexer } = await createMessageIndex(cfg);
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

/** Marks the byte ranges of a hit inside its snippet with «». */
function mark(snippet: string, offset: number, ranges: [number, number][]): string {
  const bytes = new TextEncoder().encode(snippet);
  const dec = new TextDecoder();
  // Each piece is made terminal-safe on its own, after the byte ranges are applied (they
  // index the raw snippet), so the «» always survive: a sequence cut by a mark loses its
  // ESC in the first piece, and its tail is plain text in the next.
  const piece = (from: number, to?: number) => terminalSafe(dec.decode(bytes.subarray(from, to)));
  let out = "";
  let at = 0;
  for (const [a, b] of ranges) {
    const s = Math.max(a - offset, 0), e = Math.min(b - offset, bytes.length);
    if (e <= s || s < at) continue;
    out += piece(at, s) + "«" + piece(s, e) + "»";
    at = e;
  }
  return out + piece(at);
}

/** Session keys shown in the degraded note; the rest are counted. */
const DEGRADED_KEYS_SHOWN = 5;

/** The plain statement of sessions a page could not search (see SearchResponse). */
function degradedNote(
  d: NonNullable<SearchResponse["degraded"]>,
  by: "daemon" | "store" | "team",
): string {
  const rebuilding = d.count - d.lost;
  const parts: string[] = [];
  if (rebuilding > 0) {
    parts.push(
      `${plural(rebuilding, "session")} could not be searched: ${
        rebuilding === 1 ? "its" : "their"
      } index data is damaged and ${
        by === "daemon"
          ? "is being rebuilt (search again in a moment)"
          : "is rebuilt by the next sweep (run `intendant index`)"
      }`,
    );
  }
  if (d.lost > 0) {
    parts.push(
      `${plural(d.lost, "session")} could not be searched and cannot be rebuilt: ${
        d.lost === 1 ? "its" : "their"
      } index data was damaged and ${d.lost === 1 ? "its" : "their"} source files are gone`,
    );
  }
  const shown = d.sessions.slice(0, DEGRADED_KEYS_SHOWN).map((s) => terminalSafe(s.session_key));
  const more = d.count - shown.length;
  return `(partial: ${parts.join("; ")}: ${shown.join(", ")}${
    more > 0 ? ` and ${more} more` : ""
  })`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The human listing: every string from a transcript goes through terminalSafe. */
export function formatResults(
  res: SearchResponse,
  o: { answeredBy?: "daemon" | "store" | "team" } = {},
): string {
  const lines: string[] = [];
  for (const g of res.groups) {
    // Team answers name each session's machine first (machine names are validated labels,
    // still printed through terminalSafe like everything from the database).
    const machine = "machine" in g && typeof g.machine === "string"
      ? `${terminalSafe(g.machine)} `
      : "";
    lines.push(
      `${machine}${terminalSafe(g.source)} ${terminalSafe(g.session_id)}${
        g.title ? `  ${terminalSafe(g.title)}` : ""
      }${g.source_gone ? "  (source gone)" : ""}  [${g.total_hits} hit${
        g.total_hits === 1 ? "" : "s"
      }]`,
    );
    for (const h of g.hits) {
      const flags = [
        h.superseded ? "superseded" : "",
        h.truncated ? "truncated" : "",
        h.subagent ? "subagent" : "",
      ].filter(Boolean).join(",");
      const when = new Date(h.ts_ms).toISOString().slice(0, 16).replace("T", " ");
      lines.push(
        `  ${when} ${terminalSafe(h.role)}${flags ? ` [${flags}]` : ""}: ${
          mark(h.snippet, h.snippet_offset_bytes, h.ranges).replace(/\s+/g, " ")
        }`,
      );
    }
  }
  if (res.degraded) lines.push(degradedNote(res.degraded, o.answeredBy ?? "store"));
  if (res.state === "partial" && res.partial_reason !== "degraded") {
    const why = res.partial_reason === "timeout"
      ? "the search ran out of time; some sessions were not searched"
      : "the page reached the response size limit";
    lines.push(`(partial: ${why}${res.cursor ? "; more with --cursor " + res.cursor : ""})`);
  } else if (res.cursor) lines.push(`(more: --cursor ${res.cursor})`);
  if (res.groups.length === 0) {
    // Only a complete scan may say there is nothing: anything else says what is missing.
    if (res.state === "ready") lines.push("no matches");
    else if (res.state === "building" && o.answeredBy === "team") {
      lines.push(
        "no matches yet: no machine has published to the team database\n" +
          "hint: run `intendant index --team URL` (or keep `intendant serve --team URL` running)",
      );
    } else if (res.state === "building") {
      lines.push(
        "no matches yet: the message index is empty or still being built\n" +
          "hint: run `intendant index` (or keep `intendant serve` running)",
      );
    } else lines.push("no matches in the part that was searched");
  }
  return lines.join("\n") + "\n";
}
