/**
 * `intendant url [SESSION] [--json]`: prints the tokenized dashboard URL; with SESSION (a
 * session key `<source>:<id>`, a native id or unique prefix, or an external session's
 * bare id — resolved as the catalog resolves ids for `delete`, `sessions` and the API:
 * lib/catalog resolveSessionKey), a link that opens that session's detail (the fragment
 * survives the token page: ui/lib/link_target.ts). The token is the persisted
 * one (`<state-root>/token`, created if missing or malformed); the port is the running
 * daemon's (daemon.json, confirmed by asking the daemon) or, when none runs, the
 * configured one — said on stderr, since that link only works once `intendant serve`
 * runs. A daemon that still refuses the file's token after a rotation period (one started
 * before token files existed) gets its own token from daemon.json printed instead, with a
 * note to restart it. stdout carries the URL alone, so `open "$(intendant url)"` works.
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { resolveSessionKey } from "../catalog/mod.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import { terminalSafe } from "../text/mod.ts";
import { loadOrCreateToken } from "../server/mod.ts";
import { boolFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_FAILURE, EXIT_OK } from "./exit_codes.ts";
import { dashboardUrl, probeToken, runningDaemon, waitForAcceptance } from "./dashboard_link.ts";
import { stringifyTerminalSafe } from "../text/mod.ts";

/** What `--json` prints. */
interface UrlReport {
  url: string;
  port: number;
  token: string;
  /** Whether a daemon answers on that port and accepts the token. */
  running: boolean;
  /** With SESSION: the resolved session key the link opens. */
  session_key?: string;
}

async function resolveLink(
  io: CliIo,
  sessionKey: string | undefined,
): Promise<{ report: UrlReport; note: string | null } | { error: string }> {
  const cfg = resolveConfig(io.env, { cwd: io.cwd });
  const { token } = await loadOrCreateToken(cfg.stateRoot);
  const daemon = await runningDaemon(cfg.daemonJsonPath);
  if (daemon) {
    const a = await waitForAcceptance(daemon.port, token);
    const at = (t: string, running: boolean) => ({
      url: dashboardUrl(daemon.port, t, sessionKey),
      port: daemon.port,
      token: t,
      running,
    });
    if (a === "accepts") return { report: at(token, true), note: null };
    if (a === "unknown") {
      return {
        report: at(token, true),
        note:
          `the daemon on port ${daemon.port} (pid ${daemon.pid}) could not be asked; the link is the one it advertises`,
      };
    }
    if (a === "rejects" && await probeToken(daemon.port, daemon.token) === "accepts") {
      return {
        report: at(daemon.token, true),
        note:
          `the daemon on port ${daemon.port} (pid ${daemon.pid}) does not use the token file; restart it for a link that survives restarts`,
      };
    }
    if (a === "rejects") {
      return {
        error:
          `The daemon on port ${daemon.port} (pid ${daemon.pid}) accepts neither the token file's token nor daemon.json's`,
      };
    }
  }
  const port = cfg.server.port;
  if (port === 0) {
    return {
      error:
        "No daemon is running and the configured port is 0 (a free port is picked at start): start `intendant serve`, then run `intendant url` again",
    };
  }
  return {
    report: { url: dashboardUrl(port, token, sessionKey), port, token, running: false },
    note: `no daemon is running; this link works once \`intendant serve\` listens on port ${port}`,
  };
}

/** SESSION as the catalog names it (see the module header). */
async function resolveKey(io: CliIo, idOrKey: string): Promise<string> {
  const cfg = resolveConfig(io.env, { cwd: io.cwd });
  const { store } = await createMessageIndex(cfg);
  const r = await resolveSessionKey(
    { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath },
    idOrKey,
  );
  return r.key;
}

export const urlCommand: Command = {
  name: "url",
  summary: "print the dashboard's tokenized URL (it stays valid across restarts), or a session's",
  usage: `intendant url [SESSION] [--json]

  SESSION   open this session's detail: a key (codex:<id>), a native id or unique prefix,
            or an external session's id`,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { json: { type: "boolean" } });
    const [wanted, ...extra] = args.positionals;
    if (extra.length) {
      throw new InvalidInputError(`Unexpected argument "${terminalSafe(extra[0]!)}"`);
    }
    // Resolved before any link is made: an unknown or ambiguous id is the usual one-line
    // error with its exit code (not found 3, ambiguous 4), and nothing is printed.
    const sessionKey = wanted === undefined ? undefined : await resolveKey(io, wanted);
    const r = await resolveLink(io, sessionKey);
    if ("error" in r) {
      io.stderr(`intendant: ${r.error}\n`);
      return EXIT_FAILURE;
    }
    if (r.note) io.stderr(`intendant: ${r.note}\n`);
    const report = sessionKey === undefined ? r.report : { ...r.report, session_key: sessionKey };
    io.stdout(
      boolFlag(args, "json") ? stringifyTerminalSafe(report) + "\n" : report.url + "\n",
    );
    return EXIT_OK;
  },
};
