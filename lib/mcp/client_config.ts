/**
 * `intendant mcp --print-config <client>`: the exact snippet that registers this
 * intendant's MCP server with a client. The command is how THIS intendant runs:
 *  - from a checkout (main.ts with deno.json beside it): the absolute deno binary running
 *    `--config=<runtime/deno.json> -P=launch <main.ts> mcp --locked` (the runtime config:
 *    only the packages the program imports, installed on demand) — the small launch set that
 *    computes the MCP profile and re-executes under it (lib/relaunch.ts), exactly as
 *    `deno task start` does for serve; the config is named because clients start servers
 *    from any directory;
 *  - the single file (dist/intendant.js): `deno run --allow-env --allow-read --allow-run
 *    <file> mcp --locked` (the README's form for serve);
 *  - a compiled binary: the binary itself with `mcp` (its permissions are baked in).
 * Paths are absolute: clients start servers with their own working directory and PATH.
 * The command must outlive the shell that printed it (issue 25): a Deno that npx fetched
 * lives in npm's cache (`…/_npx/<hash>/…`), which npm may clear at any time, so such a
 * Deno is named as `npx -y deno@<version>` (npx fetches it again when it is gone); and
 * when `intendant` is installed (`deno task install`: `~/.deno/bin/intendant`, a shim
 * that runs this same main module with the Deno that installed it) the snippet runs the
 * installed command instead — the shortest stable form.
 * The environment that decides what the server reads is carried: INTENDANT_HOME and
 * every agent-home variable that is set (CODEX_HOME, CLAUDE_CONFIG_DIR, XDG_DATA_HOME, …:
 * the ones lib/source_homes.ts reads), as absolute paths, so the server a client starts
 * indexes the same homes as this shell. Never the team URL or a password.
 * Client formats: Claude Code `claude mcp add --scope user NAME [-e K=V] -- CMD ARGS…`;
 * Codex `~/.codex/config.toml` `[mcp_servers.NAME]` command/args/env; Gemini CLI
 * `~/.gemini/settings.json` and Cursor `~/.cursor/mcp.json`, both `{"mcpServers": {NAME:
 * {command, args, env}}}`.
 */
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidInputError } from "../errors.ts";
import { shellQuote } from "../catalog/mod.ts";
import { expandPath } from "../config.ts";
import { SOURCE_HOME_RULES } from "../source_homes.ts";
import { RUNTIME_CONFIG } from "../relaunch.ts";

export const MCP_CLIENTS = ["claude", "codex", "gemini", "cursor"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** How this program was started (main.ts: Deno.execPath(), Deno.mainModule). */
export interface Launcher {
  denoPath: string;
  mainModule: string;
  /** Whether deno.json sits beside main.ts (a checkout). */
  hasConfig: boolean;
  /** Deno's version (for the npx form). */
  denoVersion: string;
  /** The installed `intendant` shim that runs this main module, or null. */
  installed: string | null;
}

/** A Deno binary inside npm's cache (npx's `_npx/<hash>/node_modules/…`). */
export function isNpxCachePath(p: string): boolean {
  return /[\\/]_npx[\\/]/.test(p);
}

/**
 * The variables the server's client should pass: INTENDANT_HOME (the state root, already
 * absolute) and each agent-home variable set in `env`, made absolute the way lib/config.ts
 * reads them (a relative OPENCODE_DB stays relative: OpenCode resolves it in its data dir).
 */
export function homeVariables(
  env: Readonly<Record<string, string | undefined>>,
  o: { cwd: string; home: string; stateRoot?: string },
): Record<string, string> {
  const out: Record<string, string> = o.stateRoot ? { INTENDANT_HOME: o.stateRoot } : {};
  const names = new Set<string>();
  for (const r of Object.values(SOURCE_HOME_RULES)) {
    const rule = r as {
      env: string | null;
      envFallback?: readonly string[];
      legacy?: { env: string };
      xdg?: { base: { env: string } };
    };
    for (const n of [rule.env, ...(rule.envFallback ?? []), rule.legacy?.env, rule.xdg?.base.env]) {
      if (n) names.add(n);
    }
  }
  for (const n of names) {
    const v = env[n]?.trim();
    if (v) out[n] = expandPath(v, o.home, o.cwd);
  }
  for (const r of Object.values(SOURCE_HOME_RULES)) {
    const fileEnv = (r as { fileEnv?: string }).fileEnv;
    const v = fileEnv ? env[fileEnv]?.trim() : undefined;
    if (fileEnv && v) {
      out[fileEnv] = v.startsWith("/") || v.startsWith("~") ? expandPath(v, o.home, o.cwd) : v;
    }
  }
  return out;
}

/** The server's command line: program and arguments. */
export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The command that starts this intendant's MCP server; `env` is what it must be given. */
export function serverCommand(l: Launcher, env: Record<string, string> = {}): ServerCommand {
  const isDeno = /^deno(\.exe)?$/i.test(basename(l.denoPath));
  if (!isDeno || !l.mainModule.startsWith("file:")) {
    return { command: l.denoPath, args: ["mcp"], env };
  }
  if (l.installed) return { command: l.installed, args: ["mcp", "--locked"], env };
  const main = fileURLToPath(l.mainModule);
  const args = l.hasConfig
    ? ["run", "--quiet", `--config=${join(dirname(main), RUNTIME_CONFIG)}`, "-P=launch", main]
    : ["run", "--quiet", "--allow-env", "--allow-read", "--allow-run", main];
  if (isNpxCachePath(l.denoPath)) {
    return {
      command: "npx",
      args: ["-y", `deno@${l.denoVersion}`, ...args, "mcp", "--locked"],
      env,
    };
  }
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
