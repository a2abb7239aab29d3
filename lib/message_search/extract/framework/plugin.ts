/**
 * The contract between the extractor framework and a source (issue 17). A source is one
 * folder `extract/<source>/` that builds an {@link Extractor} from the pieces below, plus
 * one {@link SourceRow} in the source table. It imports only this folder (framework/),
 * record.ts, cursor.ts / cursor_types.ts and lib/durable — never another source's folder.
 *
 * What a source supplies, and what the framework does for it:
 * - discover → units: the source walks its own layout with the bounded walker
 *   ({@link listDirBounded}, {@link spendBudget}), counting refusals in ONE vocabulary
 *   ({@link SkipReason}); a missing home is "not present" (no units, no error).
 * - parse a unit from an offset/state → records + marks + cursors + state + meta: the
 *   source supplies {@link EntryFlow} hooks (`parseState`, `append`, `full`), and
 *   {@link runEntryFlow} runs the one incremental entry flow: classify every file against
 *   its cursor → gone / unchanged → try the append (null or a CursorMismatchError falls
 *   through) → full parse → ONE retry of the full parse on CursorMismatchError.
 * - a full re-read stamps its cursors with {@link nextRewriteEpoch} (the one place that
 *   computes `(rewrite_epoch ?? 0) + 1`).
 * - bounds: the source declares its defaults and resolves overrides with
 *   {@link resolveLimits} (unknown keys and non-positive-integer values are RangeErrors).
 * - SQLite sources read through framework/sqlite_snapshot.ts (owned by 17d).
 *
 * Stability: this file only changes additively. A breaking change is announced here as a
 * line "CHANGED: …" at the top of this comment.
 */
import type { Source } from "../../record.ts";
import type { HomeRule } from "../../../source_homes.ts";
import type { Extractor } from "./types.ts";

export type {
  Discovery,
  ExtractContext,
  Extractor,
  ExtractOutcome,
  PriorShard,
  SessionUnit,
  ShardContent,
} from "./types.ts";
export { countSkip } from "./types.ts";
/** A shard's session facts (project, title, parent, files), as `meta` of a shard. */
export type { EntryMeta } from "../../store/types.ts";
/** Counts a source-file open for the I/O figures (a source that opens files itself). */
export { noteSourceOpen } from "../../io_stats.ts";
export {
  type ClassifiedFile,
  type EntryFlow,
  type FlowAppendInput,
  type FlowFullInput,
  nextRewriteEpoch,
  runEntryFlow,
} from "./entry_flow.ts";
export {
  createWalkBudget,
  type CutCounting,
  listDirBounded,
  type ListDirOptions,
  type SkipReason,
  spendBudget,
  type WalkBudget,
} from "./walker.ts";
export { type LimitsSpec, resolveLimits } from "./limits.ts";
export {
  assertLineLimit,
  decodeLine,
  type LineBytesRead,
  type LinesRead,
  readLineBytes,
  readLines,
  type ReadLinesOptions,
  type SourceLine,
  type SourceLineBytes,
} from "./read_lines.ts";
export { flowExtractor, type FlowExtractorParts } from "./flow_extractor.ts";
export { firstLineTitle, foldedTitle, TITLE_MAX_CHARS } from "./title.ts";
export { isJsonObject, type JsonLine, parseJsonLine } from "./json_line.ts";
export { RootSetCache } from "./root_set_cache.ts";
export {
  columnOrNull,
  type ListedSession,
  type ListSessions,
  type ListStoreOptions,
  listStoreSessions,
  perSnapshotWatermarks,
  STORE_SESSIONS_MAX,
  type StoreListing,
  type WatermarkOf,
  type Watermarks,
} from "./sqlite_sessions.ts";

/** The roots one source's extractor is built from (paths only: hermetic). */
export interface PluginRoots {
  /** The native session logs directory (the intendant source reads it). */
  logsDir: string;
  /** This source's homes (global, leased, staged, persisted), as the wiring resolved them. */
  homes: string[];
  /** Files a variable names for this source (OPENCODE_DB), absolute. @default [] */
  files?: string[];
  /**
   * A private directory inside the state root for SQLite snapshot copies (created 0700 by
   * the snapshot reader on first use).
   */
  snapshotDir?: string;
}

/**
 * A source as the wiring sees it: registered once in extract/mod.ts (`SOURCE_PLUGINS`),
 * which is what makes the indexer sweep it, the pool rebuild it in a worker, coverage list
 * it and the store-wide parser version include its `parserVersion`.
 */
export interface SourcePlugin {
  source: Source;
  /** Bumped whenever extraction output for the same input changes (only ever increases). */
  parserVersion: number;
  /** Builds the extractor over `roots`. */
  build(roots: PluginRoots): Extractor;
  /**
   * false: never hand this source's extract calls to the worker pool (a SQLite source: each
   * unit names the whole database, and every worker would copy it again). @default true
   */
  pooled?: boolean;
  /**
   * The directories a daemon watches for this source (each recursively), from the same
   * roots build() takes: the ones discovery lists, so a log the agent writes beside its
   * transcripts (Codex's `log/`) does not wake a sweep. A file in `roots.files` is always
   * watched through its directory, flat (a SQLite database changes through its `-wal`).
   * @default the homes (the intendant source: the logs directory)
   */
  watchDirs?(roots: PluginRoots): string[];
}

/** What a resume command may use about one listed session. */
export interface ResumeFacts {
  source: Source;
  sessionId: string;
  /** The session's project directory, when known. */
  project: string | null;
  /** Source files of an external session (absolute paths, main file first). */
  files: readonly string[];
}

/**
 * One row of the source table (lib/message_search/source_table.ts): everything outside
 * extract/ needs to know about a source. The UI keeps its own copy of `label` and the
 * colours (it cannot import server code), kept equal by a test.
 */
export interface SourceRow {
  id: Source;
  /** Display name ("Claude Code"). */
  label: string;
  /** Badge colour, CSS colour values for the light and the dark theme. */
  colour: { light: string; dark: string };
  /**
   * The shell command that resumes a session in its own tool. Every value that came from
   * a file must pass through the given `quote` (POSIX shell quoting).
   */
  resume(f: ResumeFacts, quote: (s: string) => string): string;
  /**
   * The agent's home: the environment variable that overrides it (null: none), the
   * default as path segments under $HOME, and the further rules (a suffix on the
   * variable's value, fallback variables, an XDG base, a legacy home, read roots) in
   * lib/source_homes.ts, where the configuration and the profile read them. null for the
   * native source (its logs live in the state root).
   */
  home: HomeRule | null;
  /**
   * Subdirectories of a home that hold transcripts: what the permission profile grants and
   * what a lease stages. Empty for the native source.
   */
  transcriptSubdirs: string[];
  /**
   * How the vault (lib/vault) keeps this source's sessions: "files" — its transcript
   * files, byte for byte, restorable to their place; "state_root" — they already live in
   * Intendant's state root; "database" — rows of a shared SQLite database, which cannot be
   * restored file by file: the vault keeps an export of each session's rows
   * (sqlite_export.ts), which a restore writes only under a directory the user names.
   * `restore` says, for the README and `intendant vault status`, what a restore gives the
   * agent back.
   */
  keep: { kind: "files" | "state_root" | "database"; restore: string };
}
