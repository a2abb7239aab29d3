/**
 * Where each external source keeps its transcripts and which environment variables move
 * it: pure data, one rule per source, read by the source table (its rows' `home`), the
 * configuration (lib/config.ts resolves every rule into paths) and the permission profile
 * (lib/permissions.ts grants each home's `readRoots`).
 * Why a module of its own: config.ts may import only a subsystem's mod.ts, and importing
 * lib/message_search/mod.ts from config.ts would close an import cycle (the subsystem
 * imports config values) whose evaluation order depends on which module a program loads
 * first. This file imports nothing, so the source table (bundled into the UI), the
 * configuration and the profile can all read it.
 * Invariants: every variable named here is listed in config.ts ENV_VARS_READ (a test keeps
 * them equal); a rule's paths are relative segments (never absolute, never ".."); a rule
 * without `readRoots` grants its whole home (the original five sources read files beside
 * their transcript directories), a rule with them grants exactly those and nothing wider.
 */

/** An XDG base directory: the variable, and its default as segments under $HOME. */
export interface XdgBase {
  env: string;
  defaultUnderHome: readonly string[];
}

/** How one source's home is found. */
export interface HomeRule {
  /** The variable that overrides the home (null: none is known). */
  env: string | null;
  /** Further variables tried, in order, when `env` is unset or empty (Qwen's QWEN_HOME). */
  envFallback?: readonly string[];
  /**
   * Segments appended to the variable's value: GEMINI_CLI_HOME replaces $HOME (the home is
   * `<it>/.gemini`), GOOSE_PATH_ROOT holds `data/` (the home is `<it>/data`).
   */
  envSuffix?: readonly string[];
  /** The default home as segments under $HOME (when no variable is set). */
  defaultUnderHome: readonly string[];
  /**
   * An XDG base the default lives under: `<$base.env or ~/base.defaultUnderHome>/<under>`
   * (OpenCode and Goose use `$XDG_DATA_HOME`). Without it the default is under $HOME.
   */
  xdg?: { base: XdgBase; under: readonly string[] };
  /**
   * A further home read only while its variable is set: Copilot CLI before 1.0.4 moved its
   * home to `$XDG_CONFIG_HOME/.copilot` (formats-more §3.1); sessions written then stay there.
   */
  legacy?: { env: string; under: readonly string[] };
  /**
   * What the locked profile grants under each home, as relative paths ("" is the home
   * itself). Absent: the whole home.
   */
  readRoots?: readonly string[];
  /**
   * A variable naming one more file to read (OPENCODE_DB): an absolute path, or a name
   * relative to the main home. The profile grants the file, its `-wal` and `-journal`.
   */
  fileEnv?: string;
}

const XDG_DATA: XdgBase = { env: "XDG_DATA_HOME", defaultUnderHome: [".local", "share"] };

/** Every external source's home rule, keyed by source id (record.ts SOURCES order). */
export const SOURCE_HOME_RULES = {
  codex: { env: "CODEX_HOME", defaultUnderHome: [".codex"] },
  "claude-code": { env: "CLAUDE_CONFIG_DIR", defaultUnderHome: [".claude"] },
  kimi: { env: "KIMI_CODE_HOME", defaultUnderHome: [".kimi-code"] },
  pi: { env: "PI_CODING_AGENT_DIR", defaultUnderHome: [".pi", "agent"] },
  // formats-more §1.1: GEMINI_CLI_HOME replaces $HOME for Gemini CLI. projects.json maps
  // project roots to the short slug directories under tmp/.
  gemini: {
    env: "GEMINI_CLI_HOME",
    envSuffix: [".gemini"],
    defaultUnderHome: [".gemini"],
    readRoots: ["tmp", "projects.json"],
  },
  // formats-more §2.1: QWEN_RUNTIME_DIR wins over QWEN_HOME; each names the base itself.
  qwen: {
    env: "QWEN_RUNTIME_DIR",
    envFallback: ["QWEN_HOME"],
    defaultUnderHome: [".qwen"],
    readRoots: ["projects"],
  },
  copilot: {
    env: "COPILOT_HOME",
    defaultUnderHome: [".copilot"],
    legacy: { env: "XDG_CONFIG_HOME", under: [".copilot"] },
    readRoots: ["session-state"],
  },
  // Cursor's chats/ holds store.db blobs the extractor does not read (formats-more §4).
  cursor: { env: "CURSOR_CONFIG_DIR", defaultUnderHome: [".cursor"], readRoots: ["projects"] },
  droid: { env: null, defaultUnderHome: [".factory"], readRoots: ["sessions", "projects"] },
  // The databases sit at the data dir's top level (opencode.db, opencode-<channel>.db)
  // beside the legacy storage/ tree: the data dir itself is the read root. Decision: it
  // also holds OpenCode's auth.json, and Deno cannot grant listing a directory without
  // granting its files, while the channel databases' names are only known by listing it.
  // So the grant is the data dir, and our code never opens a name there but the database
  // files and storage/ (opencode_discover.ts matches `opencode*.db` only; every open goes
  // through the contained reader); the daemon has no network to carry anything away.
  opencode: {
    env: null,
    defaultUnderHome: [".local", "share", "opencode"],
    xdg: { base: XDG_DATA, under: ["opencode"] },
    readRoots: [""],
    fileEnv: "OPENCODE_DB",
  },
  // GOOSE_PATH_ROOT is not the data dir: Goose keeps data/, config/, state/ under it.
  goose: {
    env: "GOOSE_PATH_ROOT",
    envSuffix: ["data"],
    defaultUnderHome: [".local", "share", "goose"],
    xdg: { base: XDG_DATA, under: ["goose"] },
    readRoots: ["sessions"],
  },
} as const satisfies Record<string, HomeRule>;

/** An external source id with a home rule. */
export type HomeSource = keyof typeof SOURCE_HOME_RULES;

/** Every environment variable the rules read, in rule order, without repeats. */
export function homeRuleEnvNames(): string[] {
  const out = new Set<string>();
  for (const r of Object.values(SOURCE_HOME_RULES) as HomeRule[]) {
    for (
      const v of [r.env, ...(r.envFallback ?? []), r.xdg?.base.env, r.legacy?.env, r.fileEnv]
    ) {
      if (v) out.add(v);
    }
  }
  return [...out];
}
