/**
 * Sessions that are rows of an agent's SQLite store (OpenCode `opencode.db`, Goose
 * `sessions.db`; message_search SQLITE_EXPORTS): the vault keeps an export of the
 * session's rows (framework/sqlite_export.ts: a deterministic JSON document, every column
 * of the session row and of its message/part rows) through the one keep pipeline, as one
 * file of the session's catalog whose bytes come from a producer instead of a path:
 *   path   `<database path>#session=<session id>` — absolute, names the store and the
 *          session; no file is ever at it (discovery lists only `*.db` names);
 *   role   "export";
 *   mtime  the store's change time (database or WAL, the newer) the rows were read at:
 *          an unchanged store is "same" without a read; a changed store is re-exported
 *          and compared byte for byte (other sessions' writes move the store's time).
 * Same rows give the same bytes ("same"); changed rows give a new version (an export is
 * a JSON document, never a prefix of the next one, so never an "append"), the old one
 * kept. When the session's rows are gone (the agent deleted it) the export is marked
 * gone like a deleted file. A store that cannot be read is one error line of the keep.
 * A database cannot be restored file by file: restore writes the export only under a
 * directory the user names (restore.ts), as `<source>-<session id>.json`.
 * Sessions of these sources that live in legacy files (OpenCode's JSON tree, Goose's
 * `<name>.jsonl`) are not kept: the tree splits a session over many files the unit
 * does not list.
 */
import { exportStoreSession, SQLITE_EXPORTS, storeStampMs } from "../message_search/mod.ts";
import type { FileProducer, KeepUnit } from "./vault.ts";

/** The catalog role of a session's row export. */
export const EXPORT_ROLE = "export";
/** What separates the database path from the session in an export's path. */
const MARK = "#session=";

/** The catalog path of session `sessionId`'s export from the store at `dbPath`. */
export function exportPathOf(dbPath: string, sessionId: string): string {
  return `${dbPath}${MARK}${sessionId}`;
}

/** True for a catalog file that is a row export. */
export function isExportFile(f: { role: string }): boolean {
  return f.role === EXPORT_ROLE;
}

/** The database path an export's catalog path names. */
export function exportDbOf(path: string): string {
  const at = path.lastIndexOf(MARK);
  return at < 0 ? path : path.slice(0, at);
}

/**
 * The file name a restore writes an export under (`<source>-<session id>.json`); any
 * character a file name should not carry becomes `_` (ids are the agent's, and a `/`
 * or a leading `.` must not move the file out of the directory the user named).
 */
export function exportFileName(source: string, sessionId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  return `${safe(source)}-${safe(sessionId)}.json`;
}

/** A producer of the export of `sessionId` from the store at `dbPath`. */
export function exportProducerOf(
  source: string,
  o: { dbPath: string; sessionId: string; snapshotDir: string },
): FileProducer | null {
  const spec = SQLITE_EXPORTS[source as keyof typeof SQLITE_EXPORTS];
  if (!spec) return null;
  return {
    stampMs: () => storeStampMs(o.dbPath),
    produce: () =>
      exportStoreSession(o.dbPath, spec, { sessionId: o.sessionId, snapshotDir: o.snapshotDir }),
  };
}

/**
 * What the vault keeps of a listed unit: a file source's unit as it is; a database
 * source's unit as the export of its rows (its database and WAL are not kept: they hold
 * every other session too); a database source's legacy-file unit not at all (null).
 */
export function keptUnitOf(u: KeepUnit, o: { snapshotDir: string }): KeepUnit | null {
  if (!(u.source in SQLITE_EXPORTS)) return u;
  const db = u.files.find((f) => f.role === "db");
  if (!db) return null;
  const produce = exportProducerOf(u.source, {
    dbPath: db.path,
    sessionId: u.sessionId,
    snapshotDir: o.snapshotDir,
  });
  if (!produce) return null;
  return {
    key: u.key,
    source: u.source,
    sessionId: u.sessionId,
    files: [{ path: exportPathOf(db.path, u.sessionId), role: EXPORT_ROLE, produce }],
  };
}
