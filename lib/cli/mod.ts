/**
 * The CLI: subcommand table, `--help`/`--version`, and the one error reporter. main.ts
 * passes the process edge in as CliIo; nothing here reads the environment directly.
 */
import type { CliIo, Command } from "./io.ts";
import { reportError } from "./errors_out.ts";
import { installClientFaultGuard } from "./client_fault_guard.ts";
import { ENV_TEAM_URL } from "../config.ts";
import { EXIT_OK, EXIT_USAGE } from "./exit_codes.ts";
import { terminalSafe } from "../text/mod.ts";
import { runCommandCli } from "./cmd_run.ts";
import { ctlCommand } from "./cmd_ctl.ts";
import { indexCommand } from "./cmd_index.ts";
import { deleteCommand } from "./cmd_delete.ts";
import { trashCommand } from "./cmd_trash.ts";
import { restoreCommand } from "./cmd_restore.ts";
import { vaultCommand } from "./cmd_vault.ts";
import { serveCommand } from "./cmd_serve.ts";
import { urlCommand } from "./cmd_url.ts";
import { tokenCommand } from "./cmd_token.ts";
import { searchCommand } from "./cmd_search.ts";
import { sessionsCommand } from "./cmd_sessions.ts";
import { mcpCommand } from "./cmd_mcp.ts";
import { secretsCommand } from "./cmd_secrets.ts";
import { teamCommand } from "./cmd_team.ts";

export type { CliIo, Command } from "./io.ts";
export * from "./exit_codes.ts";
export { parseArgs } from "./parse_args.ts";
export { reportError } from "./errors_out.ts";

export const VERSION = "0.1.0";

/** The subcommands, in help order. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  urlCommand,
  tokenCommand,
  searchCommand,
  sessionsCommand,
  mcpCommand,
  secretsCommand,
  indexCommand,
  teamCommand,
  runCommandCli,
  ctlCommand,
  deleteCommand,
  trashCommand,
  restoreCommand,
  vaultCommand,
];

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `intendant ${VERSION}: keeps and searches the conversations of AI coding agents

usage: intendant [command] [flags]      (no command: serve)

commands:
${lines.join("\n")}

flags:
  --help     show help (also after a command)
  --version  print the version
`;
}

/**
 * Whether this invocation may talk to the team database: `team …`, `--team`, or the
 * team URL in the environment (which serve and index honour). Only decides how a bare
 * socket error is reported (as the team connection lost, H8).
 */
function usesTeam(
  name: string,
  rest: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return name === "team" || rest.some((a) => a === "--team" || a.startsWith("--team=")) ||
    !!env[ENV_TEAM_URL]?.trim();
}

/** Runs one CLI invocation; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout(helpText());
    return EXIT_OK;
  }
  if (argv[0] === "--version" || argv[0] === "-V") {
    io.stdout(`intendant ${VERSION}\n`);
    return EXIT_OK;
  }
  // `serve` is the default command: no arguments, or flags only, mean serve.
  const [first, ...rest] = argv[0] === undefined || argv[0].startsWith("-")
    ? ["serve", ...argv]
    : argv;
  const cmd = COMMANDS.find((c) => c.name === first);
  if (!cmd) {
    // argv is untrusted like any other text we print (H10): no escape reaches the terminal.
    io.stderr(
      `intendant: unknown command ${JSON.stringify(terminalSafe(first ?? ""))}\n` +
        "hint: see `intendant --help`\n",
    );
    return EXIT_USAGE;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(`usage: ${cmd.usage}\n\n${cmd.summary}\n`);
    return EXIT_OK;
  }
  // The postgres client's own faults (a restart mid-command) become one line, not a
  // crash (H8); a daemon keeps serving.
  const team = usesTeam(cmd.name, rest, io.env);
  installClientFaultGuard({
    daemon: cmd.name === "serve" || cmd.name === "mcp",
    team,
    stderr: io.stderr,
    exit: io.exit,
  });
  try {
    return await cmd.run(rest, io);
  } catch (err) {
    return reportError(err, io.stderr, cmd.name, { team });
  }
}
