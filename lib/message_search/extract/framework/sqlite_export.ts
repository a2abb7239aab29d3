/**
 * An export of one session's rows of an agent's SQLite store (OpenCode `opencode.db`,
 * Goose `sessions.db`): what the vault keeps of a session that is rows, not a file (issue
 * 29). A source declares which tables hold its session (a {@link SqliteExportSpec} in its
 * folder); this module reads them from the process-wide private snapshot
 * (sqlite_snapshot.ts: the live database is never opened, only its contained copy) and
 * writes one JSON document.
 *
 * The document (EXPORT_FORMAT, v 1), one row per line so two versions diff by row:
 *   {"format":…,"v":1,"source":…,"store":<db file name>,"session_id":…,"tables":{
 *   "<table>":[
 *   {"<column>":<value>,…},
 *   …
 *   ],
 *   …
 *   }}
 * Invariants:
 *  - deterministic: tables in spec order, rows by the spec's `order` columns (the
 *    primary key or creation time), columns by name (code-unit order), no clock and no
 *    path in it — the same rows give the same bytes, so the vault records "same";
 *  - every column of every row, whole: NULL → null; INTEGER → a number, or
 *    {"$int":"<digits>"} past 2^53; REAL → a number, or {"$real":"Infinity"|…};
 *    TEXT → its string exactly (read as bytes, decoded strictly), or
 *    {"$text_base64":…} when it is not UTF-8; BLOB → {"$blob_base64":…}. A REAL that
 *    holds a whole number prints like an integer (the column's declared type tells);
 *  - bounded: at most a table's `maxRows` rows and `maxBytes` bytes in all, past which
 *    the export fails `session_too_large` (nothing partial is ever returned);
 *  - a session whose row is gone is `missing`; a table the spec requires that is absent,
 *    or lacks an `order` column, is `db_schema`; a hostile table (a view …) `db_hostile`.
 * Errors: every failure is a value (the snapshot's reasons too), never a throw.
 */
import { Buffer } from "node:buffer";
import { basename } from "node:path";
import {
  classifySqliteError,
  sharedSnapshot,
  type SnapshotOptions,
  type SqliteSnapshot,
  statSqliteStore,
} from "./sqlite_snapshot.ts";

/** The document's `format` field. */
export const EXPORT_FORMAT = "intendant.sqlite_session_export";

/** One table of a session's rows. */
export interface ExportTable {
  table: string;
  /** The column that names the session (`id` of the session table, `session_id` else). */
  key: string;
  /** Columns rows are ordered by (the primary key, or creation time then id). */
  order: readonly string[];
  maxRows: number;
  /** An absent table is left out (a version without it) rather than refused. */
  optional?: boolean;
}

/** What a source exports of one session. */
export interface SqliteExportSpec {
  source: string;
  /** The session table first: no row there means the session is gone. */
  tables: readonly ExportTable[];
  maxBytes: number;
  /** Snapshot copy cap (the extractor's `maxDbBytes`). */
  maxDbBytes: number;
}

/** An export, or why there is none. */
export type SessionExport =
  | { ok: true; bytes: Uint8Array; stampMs: number }
  | { ok: false; reason: string };

const FATAL = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;
const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

/** The store's change time (ms, its database or WAL, whichever is newer); null: no database. */
export function storeStampMs(dbPath: string): number | null | "refused" {
  const sig = statSqliteStore(dbPath);
  if (sig === null || sig === "refused") return sig;
  return Math.max(sig.db.mtime_ms, sig.wal?.mtime_ms ?? 0);
}

/** One value as the header says. */
function valueJson(type: unknown, v: unknown): string {
  switch (type) {
    case "null":
      return "null";
    case "integer": {
      const n = typeof v === "bigint" ? v : BigInt(v as number);
      const safe = n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);
      return safe ? String(Number(n)) : JSON.stringify({ $int: n.toString() });
    }
    case "real": {
      const r = Number(v);
      return Number.isFinite(r) ? JSON.stringify(r) : JSON.stringify({ $real: String(r) });
    }
    case "text": {
      const bytes = v instanceof Uint8Array ? v : new Uint8Array(0);
      try {
        return JSON.stringify(FATAL.decode(bytes));
      } catch {
        // SQLite stores what it is given; node:sqlite would replace bad bytes silently.
        return JSON.stringify({ $text_base64: b64(bytes) });
      }
    }
    default:
      return JSON.stringify({ $blob_base64: b64(v instanceof Uint8Array ? v : new Uint8Array(0)) });
  }
}

/** The rows of one table as JSON lines, or the reason they cannot be read. */
function tableLines(
  snap: SqliteSnapshot,
  t: ExportTable,
  sessionId: string,
  budget: { left: number },
): { ok: true; lines: Uint8Array[] | null } | { ok: false; reason: string } {
  const have = snap.columns(t.table);
  if (have.size === 0) {
    return t.optional ? { ok: true, lines: null } : { ok: false, reason: "db_schema" };
  }
  if (!have.has(t.key) || !t.order.every((c) => have.has(c))) {
    return { ok: false, reason: "db_schema" };
  }
  const cols = [...have].sort();
  const select = cols.map((c, i) =>
    `typeof(${ident(c)}) AS t${i}, CASE WHEN typeof(${ident(c)}) IN ('text', 'blob') THEN CAST(${
      ident(c)
    } AS BLOB) ELSE ${ident(c)} END AS v${i}`
  ).join(", ");
  const sql = `SELECT ${select} FROM ${ident(t.table)} WHERE ${ident(t.key)} = ? ORDER BY ${
    t.order.map(ident).join(", ")
  } LIMIT ?`;
  const lines: Uint8Array[] = [];
  try {
    const stmt = snap.db.prepare(sql);
    // Every integer as a BigInt: a rowid or a nanosecond time past 2^53 stays exact.
    stmt.setReadBigInts(true);
    for (const row of stmt.iterate(sessionId, t.maxRows + 1) as Iterable<Record<string, unknown>>) {
      if (lines.length === t.maxRows) return { ok: false, reason: "session_too_large" };
      const fields = cols.map((c, i) =>
        `${JSON.stringify(c)}:${valueJson(row[`t${i}`], row[`v${i}`])}`
      );
      const line = enc.encode(`${lines.length ? ",\n" : ""}{${fields.join(",")}}`);
      budget.left -= line.length;
      if (budget.left < 0) return { ok: false, reason: "session_too_large" };
      lines.push(line);
    }
  } catch (err) {
    return { ok: false, reason: classifySqliteError(err) };
  }
  return { ok: true, lines };
}

/** The export of `sessionId`'s rows from a snapshot (see the header). */
export function exportSessionRows(
  snap: SqliteSnapshot,
  spec: SqliteExportSpec,
  o: { sessionId: string; store: string },
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  const hostile = snap.refusal(spec.tables.map((t) => t.table));
  if (hostile) return { ok: false, reason: hostile };
  const budget = { left: spec.maxBytes };
  const head = enc.encode(
    `{"format":${JSON.stringify(EXPORT_FORMAT)},"v":1,"source":${JSON.stringify(spec.source)},` +
      `"store":${JSON.stringify(o.store)},"session_id":${JSON.stringify(o.sessionId)},"tables":{`,
  );
  const parts: Uint8Array[] = [head];
  let first = true;
  for (const [i, t] of spec.tables.entries()) {
    const r = tableLines(snap, t, o.sessionId, budget);
    if (!r.ok) return r;
    if (r.lines === null) continue;
    if (i === 0 && r.lines.length === 0) return { ok: false, reason: "missing" };
    parts.push(enc.encode(`${first ? "\n" : ",\n"}${JSON.stringify(t.table)}:[\n`), ...r.lines);
    parts.push(enc.encode(r.lines.length ? "\n]" : "]"));
    first = false;
  }
  parts.push(enc.encode("\n}}\n"));
  const size = parts.reduce((n, p) => n + p.length, 0);
  if (size > spec.maxBytes) return { ok: false, reason: "session_too_large" };
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { ok: true, bytes };
}

/**
 * The export of `sessionId` from the store at `dbPath`, through the process-wide shared
 * snapshot (the sweep that listed the session usually took it already). `stampMs` is the
 * change time of the store the snapshot copied: the export is exactly its rows.
 */
export async function exportStoreSession(
  dbPath: string,
  spec: SqliteExportSpec,
  o: { sessionId: string; snapshotDir: string },
): Promise<SessionExport> {
  const sig = statSqliteStore(dbPath);
  if (sig === null) return { ok: false, reason: "missing" };
  if (sig === "refused") return { ok: false, reason: "db_refused" };
  const snapshot: SnapshotOptions = { tempDir: o.snapshotDir, maxBytes: spec.maxDbBytes };
  const snap = await sharedSnapshot(dbPath, sig, snapshot);
  if (!snap.ok) {
    return { ok: false, reason: snap.reason === "db_missing" ? "missing" : snap.reason };
  }
  // No await from here on: the shared snapshot cannot be replaced (closed) under the reads.
  const s = snap.snapshot;
  const r = exportSessionRows(s, spec, { sessionId: o.sessionId, store: basename(dbPath) });
  if (!r.ok) return r;
  return {
    ok: true,
    bytes: r.bytes,
    stampMs: Math.max(s.sig.db.mtime_ms, s.sig.wal?.mtime_ms ?? 0),
  };
}
