/**
 * The permission profile: exactly what each long-running mode may touch, computed from a
 * ResolvedConfig. The static parts (net host, env names, no run/ffi/sys for the daemon)
 * are also declared as deno.json permission sets (`serve`, `run`); a test keeps the two
 * identical. The path parts cannot live in deno.json: permission sets expand neither `~`
 * nor `$HOME` nor any variable (verified with Deno 2.9.6), and the state root and agent
 * homes are per user. So `deno task start` launches main.ts under the small `launch` set,
 * which computes this profile and re-executes the program under it (see relaunch.ts).
 *   serve: net 127.0.0.1:<port> and the daemon's unix socket; read the state root and
 *          every agent home it indexes (for a source whose home rule names read roots,
 *          only those: lib/source_homes.ts);
 *          write the state root only; env only the variables we read; no run, no ffi.
 *   run:   the headless runner: read/write the state root (or the pinned --log-file dir),
 *          read the project, write TMPDIR (private fallback), run `sh` and `setsid`.
 *   mcp:   the MCP server (`intendant mcp`): net only 127.0.0.1:<configured port> (its own
 *          daemon's; a daemon on another port is simply not used: the store answers);
 *          read what serve reads; write only the message index (`cache/message_search`,
 *          which its cold path refreshes); env only the variables we read; no run, no ffi.
 *   team:  `intendant team …`: net only the team database's host:port, read only the libpq
 *          password file (and only when the URL and PGPASSWORD carry no password), no write,
 *          env the variables we read plus the ones the postgres client reads; no run, no ffi.
 * Team search (issue 19): when a team URL is configured, serve and mcp also get net to
 * exactly the team host:port (an IPv6 literal in brackets, as Deno's flag wants it), the
 * client's env names (TEAM_CLIENT_ENV) and read access to the password file when it will be
 * consulted. Without a team URL their profiles are exactly what they were. The password
 * file is granted by the path configured (PGPASSFILE or ~/.pgpass); a symlinked file whose
 * target lies elsewhere is not followed by the grant (this module stays pure): point
 * PGPASSFILE at the real file, or put the password in PGPASSWORD.
 * Every path must be expressible EXACTLY in a flag (reliability-plan F6): Deno splits an
 * `--allow-read=` value on "," with no escape, so `CLAUDE_CONFIG_DIR='/x,/'` used to grant
 * read access to "/". A path with a comma, a control character (NUL cannot pass argv at
 * all; a newline is never a real home), or that is not absolute and normalized is refused
 * with InvalidInputError (exit 2) naming where it came from — never split, never dropped.
 */
import { isAbsolute, join, normalize } from "node:path";
import { ENV_VARS_READ, type ResolvedConfig } from "./config.ts";
import { InvalidInputError } from "./errors.ts";
import { type HomeRule, type HomeSource, SOURCE_HOME_RULES } from "./source_homes.ts";
import { parseTeamUrl } from "./team/mod.ts";

/** One mode's grants. */
export interface PermissionProfile {
  net: string[];
  read: string[];
  write: string[];
  env: string[];
  run: string[];
}

/**
 * Environment names the postgres client (porsager 3.4.9, src/index.js parseOptions) reads
 * every time lib/team/connect.ts creates a pool: one `PG<OPTION>` per option it does not
 * pass (Deno throws NotCapable on a denied name, so each must be granted), plus PGAPPNAME and
 * PGTARGETSESSIONATTRS. PGPASSWORD is among ENV_VARS_READ already. Checked by a test that
 * runs the real client under the team profile.
 */
export const TEAM_CLIENT_ENV: readonly string[] = [
  "PGSSLNEGOTIATION",
  "PGIDLE_TIMEOUT",
  "PGMAX_LIFETIME",
  "PGMAX_PIPELINE",
  "PGBACKOFF",
  "PGKEEP_ALIVE",
  "PGPREPARE",
  "PGDEBUG",
  "PGFETCH_TYPES",
  "PGPUBLICATIONS",
  "PGTARGET_SESSION_ATTRS",
  "PGAPPNAME",
  "PGTARGETSESSIONATTRS",
];

/** Static parts, mirrored in deno.json "permissions". */
export const STATIC_PROFILES = {
  serve: { env: [...ENV_VARS_READ], run: [] as string[] },
  run: { env: [...ENV_VARS_READ], run: ["sh", "setsid"] },
  mcp: { env: [...ENV_VARS_READ], run: [] as string[] },
  team: { env: [...ENV_VARS_READ, ...TEAM_CLIENT_ENV], run: [] as string[] },
} as const;

/** What a configured team URL adds to a profile; null when no team is configured. */
export function teamGrants(
  cfg: ResolvedConfig,
): { net: string[]; read: string[]; env: string[] } | null {
  if (cfg.team.url === null) return null;
  // Parsed without secrets: only the host, the port and whether the URL has a password.
  const url = parseTeamUrl(cfg.team.url);
  const pgpassNeeded = url.passwordSource === null && cfg.team.pgpassword === null;
  return {
    net: [`${url.ipv6 ? `[${url.host}]` : url.host}:${url.port}`],
    read: pgpassNeeded ? [cfg.team.pgpassFile] : [],
    env: [...TEAM_CLIENT_ENV],
  };
}

/** Why `path` cannot be carried by a permission flag, or null when it can. */
export function flagPathProblem(path: string): string | null {
  if (path.includes(",")) return "contains a comma (the permission flags' list separator)";
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(path)) return "contains a control character";
  if (!isAbsolute(path) || normalize(path) !== path.replace(/(.)\/+$/, "$1")) {
    return "is not an absolute, normalized path";
  }
  return null;
}

/** Throws InvalidInputError when a path of `p` cannot be expressed exactly; `from` names its source. */
function checkPaths(p: PermissionProfile, from: Map<string, string>): PermissionProfile {
  for (const path of new Set([...p.read, ...p.write])) {
    const problem = flagPathProblem(path);
    if (problem) {
      const origin = from.get(path) ?? "a configured path";
      throw new InvalidInputError(
        `Cannot lock the profile down: ${origin} ${
          JSON.stringify(path)
        } ${problem}; point it at a directory whose path has none`,
      );
    }
  }
  return p;
}

/**
 * What the serve profile grants for each source home, with the variable it came from:
 * the rule's `readRoots` under every home (absent: the whole home), and a file a variable
 * names with its SQLite `-wal` (the snapshot reader copies both) and `-journal` (it
 * lstats that one: a hot rollback journal means a writer is mid-transaction).
 */
export function sourceReadGrants(cfg: ResolvedConfig): { path: string; origin: string }[] {
  const out: { path: string; origin: string }[] = [];
  for (const [id, sh] of Object.entries(cfg.sourceHomes)) {
    const rule: HomeRule = SOURCE_HOME_RULES[id as HomeSource];
    sh.homes.forEach((h, i) => {
      const origin = i === 0
        ? `${sh.env ?? "HOME"}${sh.env ? " (or HOME)" : ""}`
        : `${rule.legacy?.env ?? "HOME"} (the legacy ${id} home)`;
      for (const r of rule.readRoots ?? [""]) {
        out.push({ path: r ? join(h.path, r) : h.path, origin });
      }
    });
    for (const f of sh.files) {
      for (const suffix of ["", "-wal", "-journal"]) {
        out.push({ path: `${f.path}${suffix}`, origin: f.env });
      }
    }
  }
  return out;
}

/** Where each configured path came from, for the refusal message. */
function originsOf(cfg: ResolvedConfig, more: [string, string][] = []): Map<string, string> {
  const m = new Map<string, string>(more);
  m.set(cfg.stateRoot, "the state root (INTENDANT_HOME, or HOME)");
  for (const g of sourceReadGrants(cfg)) if (!m.has(g.path)) m.set(g.path, g.origin);
  if (cfg.logFile) m.set(cfg.logFile, "--log-file");
  m.set(cfg.tmpDir, "TMPDIR");
  if (!m.has(cfg.team.pgpassFile)) m.set(cfg.team.pgpassFile, "PGPASSFILE (or HOME)");
  return m;
}

/** The serve profile for `cfg`, plus any extra homes (leased or persisted) known at launch. */
export function serveProfile(
  cfg: ResolvedConfig,
  extraReadPaths: string[] = [],
): PermissionProfile {
  const homes = sourceReadGrants(cfg).map((g) => g.path);
  const read = cfg.messageSearch.homeOnly
    ? [cfg.stateRoot, ...extraReadPaths]
    : [cfg.stateRoot, ...homes, ...extraReadPaths];
  return checkPaths(
    withTeam(cfg, {
      // Port 0 asks the OS for a free port: the host is granted without a port then. The
      // unix socket behind the daemon's TCP front is inside the state root (already checked).
      net: [
        cfg.server.port === 0 ? cfg.server.host : `${cfg.server.host}:${cfg.server.port}`,
        `unix:${cfg.daemonSocketPath}`,
      ],
      read: unique(read),
      write: [cfg.stateRoot],
      env: [...STATIC_PROFILES.serve.env],
      run: [],
    }),
    originsOf(cfg, extraReadPaths.map((x) => [x, "a leased agent home"])),
  );
}

/** `p` plus the team grants when a team is configured; `p` unchanged otherwise. */
function withTeam(cfg: ResolvedConfig, p: PermissionProfile): PermissionProfile {
  const t = teamGrants(cfg);
  if (t === null) return p;
  return {
    net: unique([...p.net, ...t.net]),
    read: unique([...p.read, ...t.read]),
    write: p.write,
    env: unique([...p.env, ...t.env]),
    run: p.run,
  };
}

/** The `intendant team` profile: the team database and the password file only. */
export function teamProfile(cfg: ResolvedConfig): PermissionProfile {
  const t = teamGrants(cfg);
  return checkPaths({
    net: t?.net ?? [],
    read: t?.read ?? [],
    write: [],
    env: [...STATIC_PROFILES.team.env],
    run: [],
  }, originsOf(cfg));
}

/**
 * The MCP server profile: reads what serve reads, writes only the message index, and
 * reaches only its own daemon's configured port on 127.0.0.1 (no unix socket: it talks
 * to the daemon through the same checked TCP front as every client).
 */
export function mcpProfile(cfg: ResolvedConfig): PermissionProfile {
  const serve = serveProfile(cfg);
  return checkPaths(
    withTeam(cfg, {
      net: [cfg.server.port === 0 ? cfg.server.host : `${cfg.server.host}:${cfg.server.port}`],
      read: serve.read,
      write: [cfg.messageSearch.cacheRoot],
      env: [...STATIC_PROFILES.mcp.env],
      run: [],
    }),
    originsOf(cfg, [[cfg.messageSearch.cacheRoot, "the message index (in the state root)"]]),
  );
}

/** The runner profile: the state root (or pinned dir), the project, TMPDIR. */
export function runProfile(cfg: ResolvedConfig, projectRoot: string): PermissionProfile {
  const logDir = cfg.logFile ? [cfg.logFile] : [];
  return checkPaths(
    {
      net: [],
      read: unique([cfg.stateRoot, projectRoot, cfg.tmpDir, ...logDir]),
      write: unique([cfg.stateRoot, cfg.tmpDir, ...logDir]),
      env: [...STATIC_PROFILES.run.env],
      run: [...STATIC_PROFILES.run.run],
    },
    originsOf(cfg, [[projectRoot, "the project directory (--project, or the current directory)"]]),
  );
}

/** deno run flags for a profile (none of --allow-all, --allow-ffi, --allow-sys). */
export function profileFlags(p: PermissionProfile): string[] {
  // The builders already refused such paths; a profile assembled elsewhere is checked too.
  checkPaths(p, new Map());
  const flags = ["--no-prompt"];
  const list = (name: string, values: string[]) => {
    if (values.length > 0) flags.push(`--allow-${name}=${values.join(",")}`);
  };
  list("net", p.net);
  list("read", p.read);
  list("write", p.write);
  list("env", p.env);
  list("run", p.run);
  return flags;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
