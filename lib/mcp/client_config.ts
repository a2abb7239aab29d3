/**
 * `intendant mcp --print-config <client>`: the exact snippet that registers this
 * intendant's MCP server with a client. The command is how THIS intendant runs:
 *  - from a checkout (main.ts with deno.json beside it): the absolute deno binary running
 *    `--config=<deno.json> -P=launch <main.ts> mcp --locked` — the small launch set that
 *    computes the MCP profile and re-executes under it (lib/relaunch.ts), exactly as
 *    `deno task start` does for serve; the config is named because clients start servers
 *    from any directory;
 *  - the single file (dist/intendant.js): `deno run --allow-env --allow-read --allow-run
 *    <file> mcp --locked` (the README's form for serve);
 *  - a compiled binary: the binary itself with `mcp` (its permissions are baked in).
 * Paths are absolute: clients start servers with their own working directory and PATH.
 * INTENDANT_HOME is carried when it is set, so the server reads the same state root.
 * Client formats: Claude Code `claude mcp add --scope user NAME [-e K=V] -- CMD ARGS…`;
 * Codex `~/.codex/config.toml` `[mcp_servers.NAME]` command/args/env; Gemini CLI
 * `~/.gemini/settings.json` and Cursor `~/.cursor/mcp.json`, both `{"mcpServers": {NAME:
 * {command, args, env}}}`.
 */
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidInputError } from "../errors.ts";
import { shellQuote } from "../catalog/mod.ts";

export const MCP_CLIENTS = ["claude", "codex", "gemini", "cursor"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** How this program was started (main.ts: Deno.execPath(), Deno.mainModule). */
export interface Launcher {
  denoPath: string;
  mainModule: string;
  /** Whether deno.json sits beside main.ts (a checkout). */
  hasConfig: boolean;
}

/** The server's command line: program and arguments. */
export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The command that starts this intendant's MCP server. */
export function serverCommand(l: Launcher, o: { intendantHome?: string } = {}): ServerCommand {
  const env: Record<string, string> = o.intendantHome ? { INTENDANT_HOME: o.intendantHome } : {};
  const isDeno = /^deno(\.exe)?$/i.test(basename(l.denoPath));
  if (!isDeno || !l.mainModule.startsWith("file:")) {
    return { command: l.denoPath, args: ["mcp"], env };
  }
  const main = fileURLToPath(l.mainModule);
  const args = l.hasConfig
    ? ["run", "--quiet", `--config=${join(dirname(main), "deno.json")}`, "-P=launch", main]
    : ["run", "--quiet", "--allow-env", "--allow-read", "--allow-run", main];
  return { command: l.denoPath, args: [...args, "mcp", "--locked"], env };
}

/** The snippet for `client`, ending in a newline. */
export function clientConfig(client: string, c: ServerCommand): string {
  const entry = {
    command: c.command,
    args: c.args,
    ...(Object.keys(c.env).length ? { env: c.env } : {}),
  };
  switch (client as McpClient) {
    case "claude": {
      const env = Object.entries(c.env).map(([k, v]) => `-e ${shellQuote(`${k}=${v}`)} `).join("");
      return `claude mcp add --scope user ${env}intendant -- ${
        [c.command, ...c.args].map(shellQuote).join(" ")
      }\n`;
    }
    case "codex": {
      // TOML basic strings accept JSON's escapes (\" \\ \n \uXXXX …).
      const s = (v: string) => JSON.stringify(v);
      const lines = [
        "# ~/.codex/config.toml",
        "[mcp_servers.intendant]",
        `command = ${s(c.command)}`,
        `args = [${c.args.map(s).join(", ")}]`,
      ];
      const env = Object.entries(c.env);
      if (env.length) lines.push(`env = { ${env.map(([k, v]) => `${k} = ${s(v)}`).join(", ")} }`);
      return lines.join("\n") + "\n";
    }
    case "gemini":
    case "cursor":
      // Printed as the whole file's shape: merge "intendant" into an existing mcpServers.
      return JSON.stringify({ mcpServers: { intendant: entry } }, null, 2) + "\n";
    default:
      throw new InvalidInputError(
        `Invalid --print-config "${client}": expected ${MCP_CLIENTS.join(", ")}`,
      );
  }
}

/** Where each client's snippet goes (said on stderr, so stdout stays pasteable). */
export const CLIENT_CONFIG_PLACE: Record<McpClient, string> = {
  claude: "run this command (Claude Code)",
  codex: "add to ~/.codex/config.toml (Codex CLI)",
  gemini: "merge into ~/.gemini/settings.json (Gemini CLI)",
  cursor: "merge into ~/.cursor/mcp.json (Cursor)",
};
