/**
 * The Goose extractor (formats-more §7): one unit per Goose session, `goose:<id>`, read
 * from `sessions/sessions.db` through a private SQLite snapshot (framework/
 * sqlite_snapshot.ts, sqlite_unit.ts), or from a legacy `sessions/<name>.jsonl` for
 * sessions the database does not hold (goose_legacy.ts). Hermetic: it takes data dirs and
 * a directory inside the state root for the snapshot copies.
 *
 * Locators: `external_record_id` — record_id = `message_id` (v7+) or a content id
 * `c:<hash12>:<k>`, file = `sessions/sessions.db` or `sessions/<name>.jsonl`, hash of the
 * text. Supersession: Goose has no rewind marker; `replace_conversation` deletes and
 * re-inserts a session's rows, and a row that disappears keeps its published text,
 * superseded (policy, §7.5; framework/sqlite_rederive.ts). Timestamps are seconds ×1000.
 * Bounds: {@link GOOSE_LIMITS} through the framework's resolver.
 */
import { type Extractor, resolveLimits } from "../framework/plugin.ts";
import { SQLITE_SNAPSHOT_MAX_BYTES } from "../framework/sqlite_snapshot.ts";
import type { SqliteExportSpec } from "../framework/sqlite_export.ts";
import { extractSqliteUnit } from "../framework/sqlite_unit.ts";
import { gooseWatermark, readGooseSession } from "./goose_db.ts";
import { discoverGoose, type GooseHint, type GooseRoots } from "./goose_discover.ts";
import { extractGooseLegacy } from "./goose_legacy.ts";

export type { GooseRoots } from "./goose_discover.ts";

/** Bumped whenever extraction output for the same input changes. */
export const GOOSE_PARSER_VERSION = 1;

/** Default bounds (legacy ones are Goose's own reader's, session/legacy.rs). */
export const GOOSE_LIMITS = Object.freeze({
  maxDbBytes: SQLITE_SNAPSHOT_MAX_BYTES,
  maxMessagesPerSession: 50_000,
  maxTextChars: 1 << 20,
  maxLegacySessions: 100_000,
  maxLegacyFileBytes: 50 << 20,
  maxLegacyLineBytes: 5 << 20,
  maxLegacyMessages: 10_000,
  /**
   * Bytes of one session's row export (the vault's copy, framework/sqlite_export.ts):
   * `content_json` is kept whole (tool responses too), so this bounds the export's memory.
   */
  maxExportBytes: 128 << 20,
});

/**
 * What the vault exports of one Goose session: its `sessions` row and its `messages` rows
 * by rowid (`id`, AUTOINCREMENT: insertion order; `replace_conversation` re-inserts with
 * new ones, which is a change of the rows).
 */
export const GOOSE_EXPORT: SqliteExportSpec = Object.freeze({
  source: "goose",
  tables: [
    { table: "sessions", key: "id", order: ["id"], maxRows: 1 },
    {
      table: "messages",
      key: "session_id",
      order: ["id"],
      maxRows: GOOSE_LIMITS.maxMessagesPerSession,
    },
  ],
  maxBytes: GOOSE_LIMITS.maxExportBytes,
  maxDbBytes: GOOSE_LIMITS.maxDbBytes,
});
export type GooseLimits = { -readonly [K in keyof typeof GOOSE_LIMITS]: number };

/** Options of {@link createGooseExtractor}. */
export interface GooseExtractorOptions {
  /** A directory inside the state root for private snapshot copies. */
  snapshotDir: string;
  /** Overrides of {@link GOOSE_LIMITS} (tests shrink them). */
  limits?: Partial<GooseLimits>;
}

/** Creates the extractor over Goose data dirs. */
export function createGooseExtractor(
  roots: GooseRoots,
  options: GooseExtractorOptions,
): Extractor {
  const limits = resolveLimits<GooseLimits>("goose", { ...GOOSE_LIMITS }, options.limits);
  const r: GooseRoots = { dataDirs: [...roots.dataDirs] };
  const snapshot = { tempDir: options.snapshotDir, maxBytes: limits.maxDbBytes };
  return {
    source: "goose",
    discover: () => discoverGoose(r, { snapshot, maxLegacySessions: limits.maxLegacySessions }),
    extract: (unit, prior, ctx) => {
      const hint = unit.hint as unknown as GooseHint | undefined;
      const path = unit.files[0]?.path;
      if (path === undefined) return Promise.resolve({ kind: "gone" });
      const file = hint?.file ?? path.slice(path.lastIndexOf("/") + 1);
      if (hint?.store === "legacy") {
        return extractGooseLegacy(unit, prior, { limits, now: ctx.now, file });
      }
      return extractSqliteUnit(unit, prior, {
        dbPath: path,
        snapshot,
        now: ctx.now,
        hooks: {
          watermark: gooseWatermark,
          read: (snap, id) => readGooseSession(snap, id, { limits, file }),
        },
      });
    },
  };
}
