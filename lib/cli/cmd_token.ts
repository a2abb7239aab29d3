/**
 * `intendant token [--rotate] [--json]`: prints the dashboard token (the persisted one,
 * `<state-root>/token`, created if missing or malformed), or with `--rotate` replaces it.
 * A running daemon re-reads the token file within TOKEN_RECHECK_MS (token_file.ts: no
 * restart, no IPC), so after writing the command waits until the daemon accepts the new
 * token and only then says that old links and cookies no longer work; a daemon that does
 * not follow (one started before token files existed) is a failure: the old token is
 * still live there until it restarts. `--rotate` prints the new tokenized URL on stdout
 * (the token alone when no port is known).
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { terminalSafe } from "../text/mod.ts";
import { loadOrCreateToken, rotateToken, tokenFilePath } from "../server/mod.ts";
import { boolFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_FAILURE, EXIT_OK } from "./exit_codes.ts";
import { dashboardUrl, runningDaemon, waitForAcceptance } from "./dashboard_link.ts";
import { stringifyTerminalSafe } from "../text/mod.ts";

export const tokenCommand: Command = {
  name: "token",
  summary: "print the dashboard token, or --rotate it (old links and cookies stop working)",
  usage: "intendant token [--rotate] [--json]",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { rotate: { type: "boolean" }, json: { type: "boolean" } });
    if (args.positionals.length) {
      throw new InvalidInputError(`Unexpected argument "${terminalSafe(args.positionals[0]!)}"`);
    }
    const json = boolFlag(args, "json");
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    if (!boolFlag(args, "rotate")) {
      const { token } = await loadOrCreateToken(cfg.stateRoot);
      io.stdout(json ? stringifyTerminalSafe({ token }) + "\n" : token + "\n");
      return EXIT_OK;
    }
    // Found before the rotation: afterwards daemon.json's token may already be the new one.
    const daemon = await runningDaemon(cfg.daemonJsonPath);
    const token = await rotateToken(cfg.stateRoot);
    const file = terminalSafe(tokenFilePath(cfg.stateRoot));
    const port = daemon?.port ?? (cfg.server.port || null);
    const url = port === null ? null : dashboardUrl(port, token);
    let code = EXIT_OK;
    let daemonState: "accepted" | "not_running" | "not_following" | "unknown" = "not_running";
    if (daemon) {
      const a = await waitForAcceptance(daemon.port, token);
      daemonState = a === "accepts"
        ? "accepted"
        : a === "absent"
        ? "not_running"
        : a === "unknown"
        ? "unknown"
        : "not_following";
    }
    if (daemonState === "accepted") {
      io.stderr(
        `intendant: token rotated (${file}); the daemon on port ${
          daemon!.port
        } now accepts only the new one: old links and cookies no longer work\n`,
      );
    } else if (daemonState === "not_running") {
      io.stderr(
        `intendant: token rotated (${file}); no daemon is running, the next start uses it\n`,
      );
    } else if (daemonState === "unknown") {
      io.stderr(
        `intendant: token rotated (${file}); the daemon on port ${
          daemon!.port
        } could not be asked whether it follows\n`,
      );
    } else {
      io.stderr(
        `intendant: token rotated (${file}), but the daemon on port ${daemon!.port} (pid ${
          daemon!.pid
        }) still refuses it: it predates token files, so its old token stays valid until it restarts\n`,
      );
      code = EXIT_FAILURE;
    }
    if (json) io.stdout(stringifyTerminalSafe({ token, url, daemon: daemonState }) + "\n");
    else io.stdout((url ?? token) + "\n");
    return code;
  },
};
