/**
 * `intendant serve` (the default command): serves the dashboard and the API on
 * 127.0.0.1, runs the indexer, and shuts down cleanly on SIGINT/SIGTERM (daemon.json
 * removed, indexer stopped). It says what it is doing: the tokenized URL (persisted, so
 * it survives restarts), one line per source (found or absent, and the variable that
 * points it elsewhere), the first backfill's progress on stderr (in place on a TTY; off a
 * TTY a plain line every PLAIN_PROGRESS_MS once it runs long), and a line when the first
 * sweep is done. Later sweeps are silent.
 */
import { resolveConfig } from "../config.ts";
import { sourceLocations } from "../message_search/mod.ts";
import { displayPath, startDaemon } from "../server/mod.ts";
import { terminalSafe } from "../text/mod.ts";
import { cleanupRisksOf } from "../vault/mod.ts";
import { progressLine } from "./progress.ts";
import { firstSweepLine, sourceLines } from "./serve_lines.ts";
import { numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import { openCheckedTeamDb, resolveTeamUrl, teamMachine } from "./team_config.ts";
import { VERSION } from "./mod.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { UI_BUNDLE } from "../../ui/gen/bundle.ts";

/** Off a TTY: the first plain progress line after this long, then one per period. */
const PLAIN_PROGRESS_MS = 10_000;

export const serveCommand: Command = {
  name: "serve",
  summary: "serve the dashboard and API on 127.0.0.1 and keep the message index fresh (default)",
  usage: "intendant serve [--port N] [--team URL]   (--port 0 picks a free port)",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { port: { type: "number" }, team: { type: "string" } });
    const port = numberFlag(args, "port");
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      throw new RangeError(`Invalid --port "${port}": expected 0-65535`);
    }
    const cfg = resolveConfig(io.env, { cwd: io.cwd, port, team: stringFlag(args, "team") });
    // Team (--team or INTENDANT_TEAM_URL): the URL, its password and the machine name are
    // checked now (a typo fails the start with one line); the database itself is opened on
    // first use and retried, so the daemon serves this machine even while it is away.
    let team: NonNullable<Parameters<typeof startDaemon>[1]>["team"];
    if (cfg.team.url !== null) {
      const url = await resolveTeamUrl(cfg, (w) => io.stderr(`intendant: ${terminalSafe(w)}\n`));
      team = {
        open: () => openCheckedTeamDb(url),
        machine: teamMachine(cfg),
        binaryVersion: VERSION,
      };
      io.stderr(
        `team: publishing as machine ${terminalSafe(team.machine)} to ${
          terminalSafe(url.redacted)
        }\n`,
      );
    }
    // Looked up before the daemon starts: its first sweep's progress lines follow these.
    const locations = await sourceLocations(cfg);
    const progress = progressLine(io.stderr, {
      isTty: io.isTty,
      afterMs: io.isTty ? 750 : PLAIN_PROGRESS_MS,
      plainEveryMs: PLAIN_PROGRESS_MS,
    });
    let firstDone = false;
    // Signals are taken before the daemon starts: daemon.json appears inside startDaemon,
    // and a SIGTERM landing between that and a later listener killed the process outright
    // (exit 143, daemon.json left behind for the next client to trip over).
    let daemon: Awaited<ReturnType<typeof startDaemon>> | null = null;
    let stopRequested = false;
    const stop = () => {
      stopRequested = true;
      if (daemon) void daemon.shutdown();
    };
    const signals: Deno.Signal[] = io.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    for (const s of signals) Deno.addSignalListener(s, stop);
    try {
      daemon = await startDaemon(cfg, {
        logger: (l) => io.stderr(l + "\n"),
        // The dashboard is compiled into the program (build.ts): no UI file is read at run time.
        ui: UI_BUNDLE,
        team,
        onProgress: (p) => {
          if (!firstDone) progress.onProgress(p);
        },
        onFirstSweep: (r) => {
          firstDone = true;
          progress.done();
          if (r.ok) io.stdout(firstSweepLine(r.report, r.coverage));
        },
      });
      io.stdout(
        `Intendant is serving ${daemon.url}\nOpen: ${daemon.url}?token=${daemon.token}\n` +
          `(this link survives restarts; \`intendant url\` prints it again, also from ${
            terminalSafe(displayPath(cfg.daemonJsonPath, cfg.home))
          })\n` + sourceLines(locations),
      );
      // What an agent's own cleanup is about to delete, and what the vault holds of it.
      for (const r of await cleanupRisksOf(cfg).catch(() => [])) {
        io.stdout(`${terminalSafe(r.line)}\n`);
      }
      if (stopRequested) void daemon.shutdown();
      await daemon.finished;
      await daemon.shutdown();
    } finally {
      for (const s of signals) Deno.removeSignalListener(s, stop);
    }
    return EXIT_OK;
  },
};
