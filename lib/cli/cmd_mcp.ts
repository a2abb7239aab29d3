/**
 * `intendant mcp`: the MCP server over stdio (lib/mcp), until the client closes stdin or a
 * SIGINT/SIGTERM arrives. stdout IS the protocol: this command writes nothing else there;
 * diagnostics go to stderr. With `--locked` (handled by main.ts before this runs) it is
 * re-executed under the mcp permission profile (lib/permissions.ts mcpProfile).
 * `--print-config CLIENT` instead prints the snippet that registers this intendant with
 * Claude Code, Codex, Gemini CLI or Cursor (stdout: pasteable; where it goes: stderr).
 * `--team URL` (or INTENDANT_TEAM_URL) makes search_messages answer from the team database
 * and read_session read other machines' sessions from it (lib/mcp/team_backend.ts). The
 * database is opened on the first team call, not here: a team database that is down is a
 * tool error, and the server starts and serves its local tools regardless. This machine's
 * name (INTENDANT_MACHINE, else the hostname) decides which results are local; where
 * neither can be read (the locked profile cannot read the hostname) every machine's
 * sessions are read from the team database.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveConfig } from "../config.ts";
import { RUNTIME_CONFIG } from "../relaunch.ts";
import {
  CLIENT_CONFIG_PLACE,
  clientConfig,
  createBackend,
  createMcpServer,
  createTeamBackend,
  DEFAULT_MAX_OUTPUT_BYTES,
  homeVariables,
  LineTransport,
  MCP_CLIENTS,
  type McpClient,
  serverCommand,
} from "../mcp/mod.ts";
import { terminalSafe } from "../text/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import type { ResolvedConfig } from "../config.ts";
import { loadCursorKey } from "../server/mod.ts";
import { openCheckedTeamDb, resolveTeamUrl, teamMachine } from "./team_config.ts";
import { EXIT_OK } from "./exit_codes.ts";
// A cycle (mod.ts lists this command), harmless: VERSION is read only when a command runs.
import { VERSION } from "./mod.ts";

const USAGE = `intendant mcp [--locked] [--max-output-bytes N] [--team URL]
       intendant mcp --print-config ${MCP_CLIENTS.join("|")}

Serves the MCP tools search_messages, list_sessions, read_session and index_status over
stdio (for coding agents). Each result is at most --max-output-bytes of text (default
${DEFAULT_MAX_OUTPUT_BYTES}). --print-config prints the snippet that adds this server to a client.
--team URL (or INTENDANT_TEAM_URL): search_messages searches the whole team's database
(with a machine filter) and read_session reads other machines' sessions from it.`;

export const mcpCommand: Command = {
  name: "mcp",
  summary: "serve your agents' history to coding agents as MCP tools over stdio",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {
      "print-config": { type: "string" },
      "max-output-bytes": { type: "number" },
      team: { type: "string" },
    });
    if (args.positionals.length) {
      throw new InvalidInputError(`Unexpected argument "${args.positionals[0]}"`);
    }
    const client = stringFlag(args, "print-config");
    if (client !== undefined) return printConfig(client, io);
    const cfg = resolveConfig(io.env, { cwd: io.cwd, team: stringFlag(args, "team") });
    const logger = (l: string) => io.stderr(l + "\n");
    const team = cfg.team.url === null ? null : teamBackend(cfg, logger);
    const server = createMcpServer({
      backend: createBackend(cfg, { logger, team }),
      version: VERSION,
      maxOutputBytes: numberFlag(args, "max-output-bytes") ?? DEFAULT_MAX_OUTPUT_BYTES,
      logger,
    });
    // Our own bounded line transport (lib/mcp line_transport.ts, H7): an oversized or
    // malformed request is answered with a JSON-RPC error and the server keeps serving.
    const maxOutputBytes = numberFlag(args, "max-output-bytes") ?? DEFAULT_MAX_OUTPUT_BYTES;
    const transport = new LineTransport({
      input: Deno.stdin.readable,
      write: (line) => io.stdout(line),
      // The text cap plus the JSON envelope's room (tools/list, ~7 KB, fits the least cap).
      maxOutBytes: Math.max(maxOutputBytes, 16 * 1024) + 4 * 1024,
    });
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    transport.onerror = (err) => logger(`intendant mcp: ${terminalSafe(err.message)}`);
    await server.connect(transport);
    // End of input (the client exited) closes the transport; so do these signals.
    const end = () => void transport.close();
    const signals: Deno.Signal[] = io.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    for (const s of signals) Deno.addSignalListener(s, end);
    try {
      await closed;
    } finally {
      for (const s of signals) Deno.removeSignalListener(s, end);
      await server.close();
      await team?.close();
    }
    return EXIT_OK;
  },
};

/** The team backend: opened lazily, checked (schema current) on each (re)open. */
function teamBackend(cfg: ResolvedConfig, logger: (l: string) => void) {
  let machine: string | null;
  try {
    machine = teamMachine(cfg);
  } catch (err) {
    // A bad INTENDANT_MACHINE or hostname: said once; every session is then read remotely.
    if (!(err instanceof InvalidInputError)) throw err;
    logger(`intendant mcp: ${err.message}`);
    machine = null;
  }
  return createTeamBackend({
    machine,
    logger,
    cursorKey: () => loadCursorKey(cfg.messageSearch.cacheRoot),
    async open() {
      const url = await resolveTeamUrl(cfg, logger);
      return { db: await openCheckedTeamDb(url), where: url.redacted };
    },
  });
}

/**
 * `~/.deno/bin/intendant` when `deno task install` put it there for THIS main module (the
 * shim names the module it runs: another checkout's install is not ours), else null.
 */
function installedShim(o: { home: string | undefined; mainModule: string }): string | null {
  if (!o.home) return null;
  const shim = join(o.home, ".deno", "bin", "intendant");
  try {
    const text = Deno.readTextFileSync(shim);
    return text.includes(`'${o.mainModule}'`) || text.includes(`"${o.mainModule}"`) ? shim : null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotCapable) return null;
    throw err;
  }
}

function printConfig(client: string, io: CliIo): number {
  if (!io.launcher) throw new InvalidInputError("Cannot tell how this intendant was started");
  const { denoPath, mainModule } = io.launcher;
  let hasConfig = false;
  if (mainModule.startsWith("file:")) {
    try {
      hasConfig = Deno.statSync(join(dirname(fileURLToPath(mainModule)), RUNTIME_CONFIG)).isFile;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  // Absolute, as the client will start the server from its own working directory.
  const cfg = resolveConfig(io.env, { cwd: io.cwd });
  const vars = homeVariables(io.env, {
    cwd: io.cwd,
    home: io.env.HOME ?? io.cwd,
    stateRoot: io.env.INTENDANT_HOME ? cfg.stateRoot : undefined,
  });
  const installed = installedShim({ home: io.env.HOME, mainModule });
  const cmd = serverCommand(
    { denoPath, mainModule, hasConfig, denoVersion: Deno.version.deno, installed },
    vars,
  );
  const text = clientConfig(client, cmd);
  io.stderr(`intendant: ${CLIENT_CONFIG_PLACE[client as McpClient]}:\n`);
  io.stdout(text);
  return EXIT_OK;
}
