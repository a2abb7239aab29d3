/**
 * The OpenCode extractor (formats-more §6): one unit per OpenCode session, `opencode:<ses_…>`,
 * read from `opencode.db` (and channel databases) through a private SQLite snapshot
 * (framework/sqlite_snapshot.ts, sqlite_unit.ts), or from the legacy JSON tree for
 * sessions no database holds (opencode_legacy.ts). Hermetic: it takes data dirs and
 * database paths, and a directory inside the state root for the snapshot copies.
 *
 * Locators: `external_record_id` — record_id `<messageID>/<partID>`, file = the database
 * name (`opencode.db`) or the legacy session file relative to the data dir, hash of the
 * record text. Record ids are part ids (`prt_…`).
 * Supersession: `session.revert` hides messages at/after `revert.messageID` (parts from
 * `partID` on); clearing it un-hides them; rows deleted by the next prompt's cleanup keep
 * their published text, superseded (framework/sqlite_rederive.ts).
 * Bounds: {@link OPENCODE_LIMITS} through the framework's resolver.
 */
import { type Extractor, resolveLimits } from "../framework/plugin.ts";
import { SQLITE_SNAPSHOT_MAX_BYTES } from "../framework/sqlite_snapshot.ts";
import type { SqliteExportSpec } from "../framework/sqlite_export.ts";
import { extractSqliteUnit } from "../framework/sqlite_unit.ts";
import { openCodeWatermark, readOpenCodeSession } from "./opencode_db.ts";
import {
  type DbHint,
  discoverOpenCode,
  type LegacyHint,
  type OpenCodeRoots,
} from "./opencode_discover.ts";
import { extractOpenCodeLegacy } from "./opencode_legacy.ts";

export type { OpenCodeRoots } from "./opencode_discover.ts";

/** Bumped whenever extraction output for the same input changes. */
export const OPENCODE_PARSER_VERSION = 1;

/** Default bounds (production databases reach many GB: the copy cap fails closed). */
export const OPENCODE_LIMITS = Object.freeze({
  maxDbBytes: SQLITE_SNAPSHOT_MAX_BYTES,
  maxMessagesPerSession: 50_000,
  maxPartsPerSession: 200_000,
  /** Characters of one text part (≈ 1 MiB of UTF-8 at most 4 MiB). */
  maxPartTextChars: 1 << 20,
  maxLegacySessions: 100_000,
  maxLegacyMessages: 20_000,
  maxLegacyParts: 100_000,
  maxLegacyFileBytes: 8 << 20,
  /**
   * Bytes of one session's row export (the vault's copy, framework/sqlite_export.ts):
   * columns are kept whole (tool output too), so this bounds the export's memory.
   */
  maxExportBytes: 128 << 20,
});
export type OpenCodeLimits = { -readonly [K in keyof typeof OPENCODE_LIMITS]: number };

/**
 * What the vault exports of one OpenCode session: its `session` row, its `message` and
 * `part` rows (ids are time-ordered: prefix + hex of ms × 4096 + counter, so id order is
 * creation order) and its `todo` rows where the table exists.
 */
export const OPENCODE_EXPORT: SqliteExportSpec = Object.freeze({
  source: "opencode",
  tables: [
    { table: "session", key: "id", order: ["id"], maxRows: 1 },
    {
      table: "message",
      key: "session_id",
      order: ["id"],
      maxRows: OPENCODE_LIMITS.maxMessagesPerSession,
    },
    {
      table: "part",
      key: "session_id",
      order: ["id"],
      maxRows: OPENCODE_LIMITS.maxPartsPerSession,
    },
    {
      table: "todo",
      key: "session_id",
      order: ["position"],
      maxRows: OPENCODE_LIMITS.maxMessagesPerSession,
      optional: true,
    },
  ],
  maxBytes: OPENCODE_LIMITS.maxExportBytes,
  maxDbBytes: OPENCODE_LIMITS.maxDbBytes,
});

/** Options of {@link createOpenCodeExtractor}. */
export interface OpenCodeExtractorOptions {
  /** A directory inside the state root for private snapshot copies. */
  snapshotDir: string;
  /** Overrides of {@link OPENCODE_LIMITS} (tests shrink them). */
  limits?: Partial<OpenCodeLimits>;
}

/** Creates the extractor over OpenCode data dirs / databases. */
export function createOpenCodeExtractor(
  roots: OpenCodeRoots,
  options: OpenCodeExtractorOptions,
): Extractor {
  const limits = resolveLimits<OpenCodeLimits>("opencode", { ...OPENCODE_LIMITS }, options.limits);
  const r: OpenCodeRoots = { dataDirs: [...roots.dataDirs], dbFiles: [...roots.dbFiles ?? []] };
  const snapshot = { tempDir: options.snapshotDir, maxBytes: limits.maxDbBytes };
  return {
    source: "opencode",
    discover: () => discoverOpenCode(r, { snapshot, maxLegacySessions: limits.maxLegacySessions }),
    extract: (unit, prior, ctx) => {
      const hint = unit.hint as unknown as DbHint | LegacyHint | undefined;
      if (hint?.store === "legacy") {
        return extractOpenCodeLegacy(unit, prior, { dataDir: hint.dataDir, limits, now: ctx.now });
      }
      const db = hint?.store === "db" ? hint.db : unit.files[0]?.path;
      if (db === undefined) return Promise.resolve({ kind: "gone" });
      const file = hint?.store === "db" ? hint.file : db.slice(db.lastIndexOf("/") + 1);
      return extractSqliteUnit(unit, prior, {
        dbPath: db,
        snapshot,
        now: ctx.now,
        hooks: {
          watermark: openCodeWatermark,
          read: (snap, id) => readOpenCodeSession(snap, id, { limits, file }),
        },
      });
    },
  };
}
