/**
 * The only door of extract/: the framework's contract (framework/plugin.ts), the source
 * plugins the wiring builds, and the few per-source constants other modules share.
 * Everything outside extract/ (indexer, wiring, extractor_set, pool, catalog) imports
 * this file only; a source folder is private to it.
 * `SOURCE_PLUGINS` is the registry: a source listed here is swept, rebuilt in pool
 * workers, listed in coverage and counted in the store-wide parser version. Order is the
 * sweep order (intendant first). A source not listed here has no extractor yet: its id
 * exists (record.ts SOURCES, the source table) but nothing is indexed for it.
 */
import { join } from "node:path";
import type { Source } from "../record.ts";
import type { SourcePlugin } from "./framework/plugin.ts";
import { createIntendantExtractor, INTENDANT_PARSER_VERSION } from "./intendant/intendant.ts";
import { CODEX_PARSER_VERSION, createCodexExtractor } from "./codex/codex.ts";
import { CLAUDE_PARSER_VERSION, createClaudeExtractor } from "./claude/claude.ts";
import { createKimiExtractor, KIMI_PARSER_VERSION } from "./kimi/kimi.ts";
import { createPiExtractor, PI_PARSER_VERSION } from "./pi/pi.ts";
import { createGeminiExtractor, GEMINI_PARSER_VERSION } from "./gemini/gemini.ts";
import { createQwenExtractor, QWEN_PARSER_VERSION } from "./qwen/qwen.ts";
import { COPILOT_PLUGIN } from "./copilot/copilot.ts";
import { CURSOR_PLUGIN } from "./cursor/cursor.ts";
import { DROID_PLUGIN } from "./droid/droid.ts";
import {
  createOpenCodeExtractor,
  OPENCODE_EXPORT,
  OPENCODE_PARSER_VERSION,
} from "./opencode/opencode.ts";
import { createGooseExtractor, GOOSE_EXPORT, GOOSE_PARSER_VERSION } from "./goose/goose.ts";
import type { SqliteExportSpec } from "./framework/sqlite_export.ts";

export type * from "./framework/plugin.ts";
export { countSkip, nextRewriteEpoch, resolveLimits, runEntryFlow } from "./framework/plugin.ts";
export { createIntendantExtractor, INTENDANT_PARSER_VERSION };
export { SPAN_HASH_MAX_BYTES } from "./intendant/intendant_events.ts";
export { CODEX_PARSER_VERSION, createCodexExtractor };
export { CLAUDE_PARSER_VERSION, createClaudeExtractor };
export {
  createKimiExtractor,
  KIMI_PARSER_VERSION,
  KIMI_WIRE_MAX_RECORD_BYTES,
} from "./kimi/kimi.ts";
export { createPiExtractor, PI_PARSER_VERSION };
export { createGeminiExtractor, GEMINI_PARSER_VERSION };
export { createQwenExtractor, QWEN_PARSER_VERSION };
export { COPILOT_PARSER_VERSION, createCopilotExtractor } from "./copilot/copilot.ts";
export { createCursorExtractor, CURSOR_PARSER_VERSION } from "./cursor/cursor.ts";
export { createDroidExtractor, DROID_PARSER_VERSION } from "./droid/droid.ts";
export { createOpenCodeExtractor, OPENCODE_PARSER_VERSION };
export { createGooseExtractor, GOOSE_PARSER_VERSION };
export { closeSharedSnapshots } from "./framework/sqlite_snapshot.ts";
export {
  EXPORT_FORMAT,
  exportSessionRows,
  exportStoreSession,
  storeStampMs,
} from "./framework/sqlite_export.ts";
export type { SessionExport, SqliteExportSpec } from "./framework/sqlite_export.ts";

/**
 * The sources whose sessions are rows of a SQLite store, and what of a session the vault
 * exports (the spec lives in the source's folder).
 */
export const SQLITE_EXPORTS: Readonly<Partial<Record<Source, SqliteExportSpec>>> = {
  opencode: OPENCODE_EXPORT,
  goose: GOOSE_EXPORT,
};

/**
 * A SQLite source's snapshot directory: the wiring always passes one inside the state
 * root; a plugin built without it (never in production) refuses rather than pick a
 * directory of its own.
 */
function snapshotDirOf(source: Source, dir: string | undefined): string {
  if (dir === undefined) {
    throw new TypeError(`Cannot build the ${source} extractor: no snapshotDir`);
  }
  return dir;
}

/** Every source with an extractor, in sweep order. */
export const SOURCE_PLUGINS: readonly SourcePlugin[] = [
  {
    source: "intendant",
    parserVersion: INTENDANT_PARSER_VERSION,
    build: (r) => createIntendantExtractor({ logsDir: r.logsDir }),
  },
  {
    source: "codex",
    parserVersion: CODEX_PARSER_VERSION,
    build: (r) => createCodexExtractor({ homes: r.homes }),
    // What codex_discover walks; the home also holds a busy `log/` and history.jsonl.
    watchDirs: (r) => r.homes.flatMap((h) => [join(h, "sessions"), join(h, "archived_sessions")]),
  },
  {
    source: "claude-code",
    parserVersion: CLAUDE_PARSER_VERSION,
    // Claude homes are CLAUDE_CONFIG_DIR roots (or staged entries holding projects/).
    build: (r) => createClaudeExtractor({ projectRoots: r.homes.map((h) => join(h, "projects")) }),
    // The home also holds todos, shell snapshots and file history, written all the time.
    watchDirs: (r) => r.homes.map((h) => join(h, "projects")),
  },
  {
    source: "kimi",
    parserVersion: KIMI_PARSER_VERSION,
    build: (r) => createKimiExtractor({ homes: r.homes }),
  },
  {
    source: "pi",
    parserVersion: PI_PARSER_VERSION,
    build: (r) => createPiExtractor({ agentDirs: r.homes }),
  },
  {
    source: "gemini",
    parserVersion: GEMINI_PARSER_VERSION,
    // Gemini homes are the `.gemini` folders themselves (GEMINI_CLI_HOME + "/.gemini").
    build: (r) => createGeminiExtractor({ geminiDirs: r.homes }),
  },
  {
    source: "qwen",
    parserVersion: QWEN_PARSER_VERSION,
    build: (r) => createQwenExtractor({ runtimeDirs: r.homes }),
  },
  COPILOT_PLUGIN,
  CURSOR_PLUGIN,
  DROID_PLUGIN,
  {
    source: "opencode",
    parserVersion: OPENCODE_PARSER_VERSION,
    build: (r) =>
      createOpenCodeExtractor(
        { dataDirs: r.homes, dbFiles: r.files ?? [] },
        { snapshotDir: snapshotDirOf("opencode", r.snapshotDir) },
      ),
    // Each unit names the whole database: a worker would copy it again per unit.
    pooled: false,
  },
  {
    source: "goose",
    parserVersion: GOOSE_PARSER_VERSION,
    build: (r) =>
      createGooseExtractor(
        { dataDirs: r.homes },
        { snapshotDir: snapshotDirOf("goose", r.snapshotDir) },
      ),
    pooled: false,
  },
];

/** The sources {@link SOURCE_PLUGINS} registers, in sweep order. */
export const WIRED_SOURCES: readonly Source[] = SOURCE_PLUGINS.map((p) => p.source);
