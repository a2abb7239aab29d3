/**
 * Configuration: the names of every environment variable we read, the one boolean
 * parser, and the pure `resolveConfig(env, args)` that turns them into a fully filled
 * ResolvedConfig. Only main.ts reads the real environment, argv, cwd and home; it hands
 * them here, so library code and tests never touch the real machine's state. The two
 * readers here (readHostname, readPgpassFile) serve team search: lib/team stays pure and
 * calls them only when a team command needs the machine name or a password.
 */
import { join, resolve } from "node:path";
import { type HomeRule, type HomeSource, SOURCE_HOME_RULES } from "./source_homes.ts";
import { readContained } from "./durable/mod.ts";
import { parseByteSize } from "./text/mod.ts";

/** State root override; default `$HOME/.intendant`. */
export const ENV_INTENDANT_HOME = "INTENDANT_HOME";
export const ENV_HOME = "HOME";
/** What the runner hands its command subprocesses: the session directory. */
export const ENV_INTENDANT_LOG_DIR = "INTENDANT_LOG_DIR";
/** Write turns/turn_NNN_messages.json even when the provider has a request snapshot. */
export const ENV_LOG_MESSAGES_JSON = "INTENDANT_LOG_MESSAGES_JSON";
/** Keep every context snapshot sidecar instead of latest-only per stream. */
export const ENV_CONTEXT_SNAPSHOT_KEEP_ALL = "INTENDANT_CONTEXT_SNAPSHOT_KEEP_ALL";
/** Confine message-search discovery to the daemon's own state root. */
export const ENV_MESSAGE_SEARCH_DAEMON_HOME_ONLY = "INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY";
/** Message-search retention window in days, or "forever". @default 14 */
export const ENV_MESSAGE_SEARCH_WINDOW_DAYS = "INTENDANT_MESSAGE_SEARCH_WINDOW_DAYS";
/**
 * Extraction workers of the message index (one per core by default; 1 = extract in the
 * indexer's own thread).
 */
export const ENV_INDEX_WORKERS = "INTENDANT_INDEX_WORKERS";
/** Dashboard port. @default 8765 */
export const ENV_PORT = "INTENDANT_PORT";
/** The transcript vault (lib/vault): "off" stops keeping copies. @default on */
export const ENV_VAULT = "INTENDANT_VAULT";
/**
 * The vault's disk budget: compressed bytes of everything kept (`20G`, `512M`, bytes).
 * Generous by default: a year of heavy use of several agents compresses to a few GiB
 * (bench/RESULTS.md); the oldest superseded versions go first when it bites.
 */
export const ENV_VAULT_MAX_BYTES = "INTENDANT_VAULT_MAX_BYTES";
/** @see ENV_VAULT_MAX_BYTES */
export const DEFAULT_VAULT_MAX_BYTES = 20 * 1024 ** 3;
export const ENV_CODEX_HOME = "CODEX_HOME";
export const ENV_CLAUDE_CONFIG_DIR = "CLAUDE_CONFIG_DIR";
export const ENV_KIMI_CODE_HOME = "KIMI_CODE_HOME";
export const ENV_PI_CODING_AGENT_DIR = "PI_CODING_AGENT_DIR";
export const ENV_TMPDIR = "TMPDIR";
/** Gemini CLI's replacement for $HOME: transcripts under `<it>/.gemini`. */
export const ENV_GEMINI_CLI_HOME = "GEMINI_CLI_HOME";
/** Qwen Code's runtime base (wins over QWEN_HOME). */
export const ENV_QWEN_RUNTIME_DIR = "QWEN_RUNTIME_DIR";
export const ENV_QWEN_HOME = "QWEN_HOME";
export const ENV_COPILOT_HOME = "COPILOT_HOME";
export const ENV_CURSOR_CONFIG_DIR = "CURSOR_CONFIG_DIR";
/** OpenCode's database, absolute or relative to its data dir. */
export const ENV_OPENCODE_DB = "OPENCODE_DB";
/** Goose's path root: its data dir is `<it>/data`. */
export const ENV_GOOSE_PATH_ROOT = "GOOSE_PATH_ROOT";
/** Base of OpenCode's and Goose's data dirs. @default ~/.local/share */
export const ENV_XDG_DATA_HOME = "XDG_DATA_HOME";
/** Where Copilot CLI before 1.0.4 kept its home (`<it>/.copilot`). */
export const ENV_XDG_CONFIG_HOME = "XDG_CONFIG_HOME";

/** The shared PostgreSQL of team search (`--team URL` wins; lib/team/team_url.ts). */
export const ENV_TEAM_URL = "INTENDANT_TEAM_URL";
/** This machine's name in the team database. @default the hostname */
export const ENV_MACHINE = "INTENDANT_MACHINE";
/** libpq's password variable: the team password when the URL carries none. */
export const ENV_PGPASSWORD = "PGPASSWORD";
/** libpq's password file location. @default ~/.pgpass */
export const ENV_PGPASSFILE = "PGPASSFILE";

/**
 * glibc malloc settings for the daemon (issue 28, measured on the bench corpus, 531k
 * messages, a cold backfill in process then rest): the extraction workers allocate in
 * their own malloc arenas, and what they free stays mapped there after they end. With two
 * arenas and a 128 KiB trim/mmap threshold, the RSS 30 s after the backfill fell from 195
 * to 150 MiB and the backfill's peak from 769 to 646 MiB, the backfill's time unchanged
 * within noise (bench/RESULTS.md). Other allocators ignore them.
 */
export const DAEMON_ALLOCATOR_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_TRIM_THRESHOLD_: "131072",
  MALLOC_MMAP_THRESHOLD_: "131072",
};

/** Every variable the program reads, for the README and the permission profile. */
export const ENV_VARS_READ: readonly string[] = [
  ENV_INTENDANT_HOME,
  ENV_HOME,
  ENV_LOG_MESSAGES_JSON,
  ENV_CONTEXT_SNAPSHOT_KEEP_ALL,
  ENV_MESSAGE_SEARCH_DAEMON_HOME_ONLY,
  ENV_MESSAGE_SEARCH_WINDOW_DAYS,
  ENV_INDEX_WORKERS,
  ENV_PORT,
  ENV_VAULT,
  ENV_VAULT_MAX_BYTES,
  ENV_CODEX_HOME,
  ENV_CLAUDE_CONFIG_DIR,
  ENV_KIMI_CODE_HOME,
  ENV_PI_CODING_AGENT_DIR,
  ENV_TMPDIR,
  ENV_GEMINI_CLI_HOME,
  ENV_QWEN_RUNTIME_DIR,
  ENV_QWEN_HOME,
  ENV_COPILOT_HOME,
  ENV_CURSOR_CONFIG_DIR,
  ENV_OPENCODE_DB,
  ENV_GOOSE_PATH_ROOT,
  ENV_XDG_DATA_HOME,
  ENV_XDG_CONFIG_HOME,
  ENV_TEAM_URL,
  ENV_MACHINE,
  ENV_PGPASSWORD,
  ENV_PGPASSFILE,
  // Read only to leave a user's own allocator settings alone (DAEMON_ALLOCATOR_ENV).
  ...Object.keys(DAEMON_ALLOCATOR_ENV),
];

export const DEFAULT_PORT = 8765;
export const DEFAULT_WINDOW_DAYS = 14;

/** The one boolean parser: true/yes/on/1 (any case) are true; anything else is false. */
export function parseBool(value: string | undefined | null): boolean {
  if (value === undefined || value === null) return false;
  return ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

/** An agent home and whether the user chose it explicitly (env) or it is the default. */
export interface AgentHome {
  path: string;
  explicit: boolean;
}

/** Where one external source is read, resolved from its home rule (lib/source_homes.ts). */
export interface SourceHomes {
  /** Its homes: the main one first, then a legacy one whose variable is set. */
  homes: AgentHome[];
  /** The variable that moved the main home, or that would (null: none exists). */
  env: string | null;
  /** Files a variable names (OPENCODE_DB), absolute, with that variable. */
  files: { path: string; env: string }[];
}

/** Every field filled; nothing downstream falls back to the environment. */
export interface ResolvedConfig {
  home: string;
  cwd: string;
  stateRoot: string;
  logsDir: string;
  /** `--log-file DIR`: pins the session directory; null when not given. */
  logFile: string | null;
  tmpDir: string;
  logMessagesJson: boolean;
  contextSnapshotKeepAll: boolean;
  sessionNamesPath: string;
  daemonJsonPath: string;
  /**
   * The daemon's private unix socket (`<state-root>/run/http.sock`): Deno.serve listens
   * there behind the TCP front. A fixed path, because the locked profile must name it
   * exactly (`--allow-net=unix:<path>`; Deno 2.9.6 scopes unix sockets by exact path).
   */
  daemonSocketPath: string;
  messageSearch: {
    /** `<state-root>/cache/message_search` (parent of v1/, staging/, leased-active/). */
    cacheRoot: string;
    storeRoot: string;
    homeOnly: boolean;
    /** null means keep forever. */
    windowDays: number | null;
    /** Extraction workers; null = one per core (decided where the pool is made). */
    workers: number | null;
  };
  /** The transcript vault: `<state-root>/vault`, on unless INTENDANT_VAULT=off. */
  vault: { enabled: boolean; dir: string; maxBytes: number };
  agentHomes: { codex: AgentHome; claude: AgentHome; kimi: AgentHome; pi: AgentHome };
  /** Every external source's homes, keyed by source id, in the rules' order. */
  sourceHomes: Record<HomeSource, SourceHomes>;
  server: { host: "127.0.0.1"; port: number };
  /**
   * The allocator settings the daemon (`serve --locked`) is started with
   * ({@link DAEMON_ALLOCATOR_ENV}), less any the user set: theirs are inherited as they are.
   */
  daemonAllocatorEnv: Record<string, string>;
  /**
   * Team search settings, raw: lib/team validates them when a team command runs, so a bad
   * INTENDANT_MACHINE never breaks a purely local command.
   */
  team: {
    /** `--team URL` or INTENDANT_TEAM_URL; null: no team configured. */
    url: string | null;
    /** INTENDANT_MACHINE; null: use the hostname ({@link readHostname}). */
    machine: string | null;
    pgpassword: string | null;
    /** PGPASSFILE (absolute) or `<home>/.pgpass` ({@link readPgpassFile}). */
    pgpassFile: string;
  };
}

/** Flags that influence configuration (already parsed from argv by main.ts). */
export interface ConfigArgs {
  cwd: string;
  logFile?: string;
  port?: number;
  /** `--team URL` (wins over INTENDANT_TEAM_URL). */
  team?: string;
}

/** Builds the ResolvedConfig from an environment snapshot and parsed flags. Pure. */
export function resolveConfig(
  env: Readonly<Record<string, string | undefined>>,
  args: ConfigArgs,
): ResolvedConfig {
  const cwd = resolve(args.cwd);
  const home = nonEmpty(env[ENV_HOME]);
  const explicitRoot = nonEmpty(env[ENV_INTENDANT_HOME]);
  if (!explicitRoot && !home) {
    throw new RangeError(`Cannot place the state root: set ${ENV_INTENDANT_HOME} or ${ENV_HOME}`);
  }
  // Every path is absolute and normalized here (resolve), so a permission flag can carry it
  // exactly (lib/permissions.ts) and two spellings of one directory compare equal.
  const stateRoot = resolve(cwd, explicitRoot ?? join(home!, ".intendant"));
  const homeDir = home ? resolve(cwd, home) : stateRoot;
  const cacheRoot = join(stateRoot, "cache", "message_search");
  const port = args.port ?? parsePort(env[ENV_PORT]);
  const sourceHomes = Object.fromEntries(
    Object.entries(SOURCE_HOME_RULES).map(([id, rule]) => [
      id,
      resolveSourceHomes(rule, { env, home: homeDir, cwd }),
    ]),
  ) as Record<HomeSource, SourceHomes>;
  const main = (s: HomeSource) => sourceHomes[s].homes[0]!;
  return {
    home: homeDir,
    cwd,
    stateRoot,
    logsDir: join(stateRoot, "logs"),
    logFile: args.logFile ? resolve(cwd, args.logFile) : null,
    tmpDir: resolve(cwd, nonEmpty(env[ENV_TMPDIR]) ?? "/tmp"),
    logMessagesJson: parseBool(env[ENV_LOG_MESSAGES_JSON]),
    contextSnapshotKeepAll: parseBool(env[ENV_CONTEXT_SNAPSHOT_KEEP_ALL]),
    sessionNamesPath: join(stateRoot, "session_names.json"),
    daemonJsonPath: join(stateRoot, "daemon.json"),
    daemonSocketPath: join(stateRoot, "run", "http.sock"),
    messageSearch: {
      cacheRoot,
      // v2: binary segments (message_search/store/types.ts says why not v1).
      storeRoot: join(cacheRoot, "v2"),
      homeOnly: parseBool(env[ENV_MESSAGE_SEARCH_DAEMON_HOME_ONLY]),
      windowDays: parseWindowDays(env[ENV_MESSAGE_SEARCH_WINDOW_DAYS]),
      workers: parseWorkers(env[ENV_INDEX_WORKERS]),
    },
    vault: {
      enabled: parseVaultSwitch(env[ENV_VAULT]),
      dir: join(stateRoot, "vault"),
      maxBytes: parseVaultMaxBytes(env[ENV_VAULT_MAX_BYTES]),
    },
    // The original four by their historical keys (the same objects as in sourceHomes).
    agentHomes: {
      codex: main("codex"),
      claude: main("claude-code"),
      kimi: main("kimi"),
      pi: main("pi"),
    },
    sourceHomes,
    server: { host: "127.0.0.1", port },
    daemonAllocatorEnv: Object.fromEntries(
      Object.entries(DAEMON_ALLOCATOR_ENV).filter(([k]) => env[k] === undefined),
    ),
    team: {
      url: nonEmpty(args.team) ?? nonEmpty(env[ENV_TEAM_URL]) ?? null,
      machine: nonEmpty(env[ENV_MACHINE]) ?? null,
      // Not trimmed: a password may legitimately start or end with a space.
      pgpassword: env[ENV_PGPASSWORD] ? env[ENV_PGPASSWORD]! : null,
      pgpassFile: nonEmpty(env[ENV_PGPASSFILE])
        ? expandPath(env[ENV_PGPASSFILE]!, homeDir, cwd)
        : join(homeDir, ".pgpass"),
    },
  };
}

/**
 * This machine's hostname, or null where it may not be read (Deno.hostname needs the
 * `sys` permission, which the locked profiles do not grant: set INTENDANT_MACHINE there).
 * Read only when a team command needs the machine name, never at startup.
 */
export function readHostname(): string | null {
  try {
    return Deno.hostname();
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return null;
    }
    throw err;
  }
}

/** Largest password file read (libpq has no cap; 1 MiB is thousands of entries). */
export const PGPASS_MAX_BYTES = 1 << 20;

/**
 * The libpq password file at `path` with its mode, for lib/team's lookup; null when it
 * does not exist or this process may not read it (libpq also skips an unreadable file).
 * Like libpq it follows a symlink (dotfile managers link ~/.pgpass) and takes the mode of
 * the file it points at; a non-regular file is returned with `isFile: false` so the lookup
 * ignores it with a warning. The read itself is the contained one (no FIFO can block it).
 * A file over PGPASS_MAX_BYTES is a RangeError naming the path.
 */
export async function readPgpassFile(
  path: string,
): Promise<{ path: string; text: string; mode: number | null; isFile: boolean } | null> {
  let real: string;
  let st: Deno.FileInfo;
  try {
    real = await Deno.realPath(path);
    st = await Deno.stat(real);
  } catch (err) {
    if (
      err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotCapable ||
      err instanceof Deno.errors.PermissionDenied
    ) return null;
    throw err;
  }
  if (!st.isFile) return { path, text: "", mode: st.mode, isFile: false };
  const r = await readContained(real, { maxBytes: PGPASS_MAX_BYTES, hardlinks: "allow" });
  if (!r.ok) {
    if (r.reason === "too_large") {
      throw new RangeError(
        `Password file ${JSON.stringify(path)} is larger than ${PGPASS_MAX_BYTES} bytes`,
      );
    }
    // Replaced between the stat and the open (a race): treat it as absent this time.
    return null;
  }
  return { path, text: new TextDecoder().decode(r.bytes), mode: st.mode, isFile: true };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== "" ? v : undefined;
}

/**
 * A variable's path: a leading `~` expanded (Pi documents it for PI_CODING_AGENT_DIR; a
 * shell that did not expand it leaves it for us), relative paths resolved against cwd.
 */
export function expandPath(v: string, home: string, cwd: string): string {
  const expanded = v === "~" ? home : v.startsWith("~/") ? join(home, v.slice(2)) : v;
  return resolve(cwd, expanded);
}

/**
 * One source's homes from its rule: the first set variable of `env` / `envFallback` (plus
 * `envSuffix`), else the default (under the XDG base when the rule names one and it is
 * set, else under $HOME); then the legacy home while its variable is set; then the file a
 * `fileEnv` variable names (relative to the main home).
 */
function resolveSourceHomes(
  rule: HomeRule,
  o: { env: Readonly<Record<string, string | undefined>>; home: string; cwd: string },
): SourceHomes {
  const { env, home, cwd } = o;
  const vars = [rule.env, ...(rule.envFallback ?? [])].filter((v): v is string => v !== null);
  const setVar = vars.find((v) => nonEmpty(env[v]) !== undefined);
  let main: AgentHome;
  let used: string | null = rule.env ?? rule.xdg?.base.env ?? null;
  if (setVar) {
    const base = expandPath(nonEmpty(env[setVar])!, home, cwd);
    main = { path: resolve(base, ...(rule.envSuffix ?? [])), explicit: true };
    used = setVar;
  } else if (rule.xdg && nonEmpty(env[rule.xdg.base.env])) {
    const base = expandPath(nonEmpty(env[rule.xdg.base.env])!, home, cwd);
    main = { path: resolve(base, ...rule.xdg.under), explicit: true };
    used = rule.xdg.base.env;
  } else {
    main = { path: resolve(cwd, home, ...rule.defaultUnderHome), explicit: false };
  }
  const homes = [main];
  const legacyBase = rule.legacy ? nonEmpty(env[rule.legacy.env]) : undefined;
  if (rule.legacy && legacyBase) {
    const path = resolve(expandPath(legacyBase, home, cwd), ...rule.legacy.under);
    if (path !== main.path) homes.push({ path, explicit: true });
  }
  const files: SourceHomes["files"] = [];
  const file = rule.fileEnv ? nonEmpty(env[rule.fileEnv]) : undefined;
  if (rule.fileEnv && file) {
    // OpenCode resolves a relative OPENCODE_DB against its data dir, not the cwd.
    const path = file.startsWith("~") ? expandPath(file, home, cwd) : resolve(main.path, file);
    files.push({ path, env: rule.fileEnv });
  }
  return { homes, env: used, files };
}

function parsePort(value: string | undefined): number {
  const v = nonEmpty(value);
  if (!v) return DEFAULT_PORT;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new RangeError(`Invalid ${ENV_PORT} "${v}": expected an integer 0-65535`);
  }
  return n;
}

/** Parses the retention window: a positive number of days, or "forever" (null). */
export function parseWindowDays(value: string | undefined): number | null {
  const v = nonEmpty(value);
  if (!v) return DEFAULT_WINDOW_DAYS;
  if (["forever", "inf", "infinite", "0"].includes(v.trim().toLowerCase())) return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw new RangeError(
      `Invalid ${ENV_MESSAGE_SEARCH_WINDOW_DAYS} "${v}": expected days > 0 or "forever"`,
    );
  }
  return n;
}

/**
 * INTENDANT_VAULT: unset, on/yes/true/1 keep the vault on; off/no/false/0 turn it off.
 * Anything else is refused: a typo must not silently stop keeping history.
 */
export function parseVaultSwitch(value: string | undefined): boolean {
  const v = nonEmpty(value)?.toLowerCase();
  if (v === undefined || ["on", "yes", "true", "1"].includes(v)) return true;
  if (["off", "no", "false", "0"].includes(v)) return false;
  throw new RangeError(`Invalid ${ENV_VAULT} "${value}": expected "on" or "off"`);
}

/** INTENDANT_VAULT_MAX_BYTES: a byte size (lib/text parseByteSize), unset = the default. */
export function parseVaultMaxBytes(value: string | undefined): number {
  const v = nonEmpty(value);
  if (!v) return DEFAULT_VAULT_MAX_BYTES;
  try {
    return parseByteSize(v);
  } catch (err) {
    throw new RangeError(`Invalid ${ENV_VAULT_MAX_BYTES}: ${(err as Error).message}`);
  }
}

/** Most extraction workers accepted (a typo like 1000 must not start a thousand isolates). */
export const INDEX_WORKERS_MAX = 64;

/** Parses the extraction worker count: an integer 1–INDEX_WORKERS_MAX, or unset (null). */
export function parseWorkers(value: string | undefined): number | null {
  const v = nonEmpty(value);
  if (!v) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > INDEX_WORKERS_MAX) {
    throw new RangeError(
      `Invalid ${ENV_INDEX_WORKERS} "${v}": expected an integer 1-${INDEX_WORKERS_MAX}`,
    );
  }
  return n;
}
