/**
 * Reading OpenCode's `opencode.db` (drizzle tables, formats-more §6.2) from a private
 * snapshot: the session list (discovery), the per-session watermark and one session's
 * rows. Column sets vary by version, so every query is built from `pragma_table_info`
 * and a table or column this version lacks is a counted hold (`db_schema`), not a crash.
 *
 * JSON is read INSIDE SQLite (`json_extract`, guarded by `json_valid` on TEXT values) so
 * a part's tool output (often megabytes in overflow pages) is never copied into JS, and a
 * malformed row yields NULLs instead of failing the query. Text is fetched as a BLOB and
 * decoded with a fatal UTF-8 decoder (node:sqlite would silently replace bad bytes).
 * Watermark per session (§6.7): session.time_updated + revert + count/max(time_updated)
 * over message and part — a deletion moves a count even when no max moves.
 */
import {
  columnOrNull as col,
  type ListSessions,
  perSnapshotWatermarks,
  type WatermarkOf,
  type Watermarks,
} from "../framework/plugin.ts";
import type { SqliteSnapshot } from "../framework/sqlite_snapshot.ts";
import type { SessionRead } from "../framework/sqlite_unit.ts";
import { type OcMessage, type OcPart, opencodeProse, parseRevert } from "./opencode_prose.ts";

/** Bounds of one session read. */
export interface OpenCodeDbLimits {
  maxMessagesPerSession: number;
  maxPartsPerSession: number;
  /** Characters of one text part read (longer is cut; records cap at 256 KiB anyway). */
  maxPartTextChars: number;
}

const FATAL = new TextDecoder("utf-8", { fatal: true });

/** `json_extract(col, path)` only for TEXT that is valid JSON (else NULL, never an error). */
function jx(col: string, path: string): string {
  return `CASE WHEN typeof(${col}) = 'text' AND json_valid(${col}) THEN json_extract(${col}, '${path}') END`;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function num(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === "bigint") return Number(v);
  return null;
}

const REQUIRED = {
  session: ["id"],
  message: ["id", "session_id", "data"],
  part: ["id", "message_id", "session_id", "data"],
} as const;

/** Why the store's tables cannot be read: hostile (a view …), or lacking a needed column. */
function schemaRefusal(snap: SqliteSnapshot): string | null {
  const hostile = snap.refusal(Object.keys(REQUIRED));
  if (hostile) return hostile;
  for (const [table, cols] of Object.entries(REQUIRED)) {
    const have = snap.columns(table);
    if (!cols.every((c) => have.has(c))) return "db_schema";
  }
  return null;
}

/**
 * The sessions in the store with their `time_updated` (which copy of a session is the
 * live one, when two databases hold it); the reason when it cannot be listed.
 */
export const listOpenCodeSessions: ListSessions = (snap, o) => {
  const bad = schemaRefusal(snap);
  if (bad) return { ok: false, reason: bad };
  const r = snap.all(
    `SELECT id, ${col(snap, "session", "time_updated")} AS u FROM session
     WHERE typeof(id) = 'text' ORDER BY id LIMIT ?`,
    o.max + 1,
  );
  if (!r.ok) return { ok: false, reason: r.reason };
  return {
    ok: true,
    sessions: r.rows.map((row) => ({ id: row.id as string, updated: num(row.u) })),
  };
};

/** Every session's watermark, computed once per snapshot (3 grouped scans). */
function watermarks(snap: SqliteSnapshot): Watermarks {
  let out: Watermarks;
  const bad = schemaRefusal(snap);
  if (bad) out = { hold: bad };
  else {
    const tu = (t: string) => col(snap, t, "time_updated");
    const s = snap.all(
      `SELECT id, ${tu("session")} AS t, ${col(snap, "session", "revert")} AS r FROM session`,
    );
    const m = snap.all(
      `SELECT session_id AS id, count(*) AS n, max(${
        tu("message")
      }) AS t FROM message GROUP BY session_id`,
    );
    const p = snap.all(
      `SELECT session_id AS id, count(*) AS n, max(${
        tu("part")
      }) AS t FROM part GROUP BY session_id`,
    );
    if (!s.ok) out = { hold: s.reason };
    else if (!m.ok) out = { hold: m.reason };
    else if (!p.ok) out = { hold: p.reason };
    else {
      const agg = (rows: Record<string, unknown>[]) =>
        new Map(rows.map((row) => [String(row.id), `${row.n}:${row.t}`]));
      const ms = agg(m.rows);
      const ps = agg(p.rows);
      out = new Map();
      for (const row of s.rows) {
        const id = String(row.id);
        out.set(id, JSON.stringify([row.t, row.r, ms.get(id) ?? "0", ps.get(id) ?? "0"]));
      }
    }
  }
  return out;
}

/** The session's watermark; null when it is not in the store. */
export const openCodeWatermark: WatermarkOf = perSnapshotWatermarks(watermarks);

/** Reads one session's rows and applies the prose rules. */
export function readOpenCodeSession(
  snap: SqliteSnapshot,
  sessionId: string,
  o: { limits: OpenCodeDbLimits; file: string },
): SessionRead {
  const bad = schemaRefusal(snap);
  if (bad) return { ok: false, hold: bad };
  const L = o.limits;
  const sc = (n: string) => col(snap, "session", n);
  const s = snap.all(
    `SELECT id, ${sc("parent_id")} AS parent, ${sc("directory")} AS dir, ${sc("title")} AS title,
      ${sc("revert")} AS revert FROM session WHERE id = ?`,
    sessionId,
  );
  if (!s.ok) return { ok: false, hold: s.reason };
  const row = s.rows[0];
  if (row === undefined) return { ok: false, hold: "session_vanished" };
  const mt = col(snap, "message", "time_created");
  const m = snap.all(
    `SELECT id, ${mt} AS tc, ${jx("data", "$.time.created")} AS created, ${
      jx("data", "$.role")
    } AS role,
      ${jx("data", "$.summary")} AS summary, ${jx("data", "$.agent")} AS agent,
      ${jx("data", "$.mode")} AS mode
     FROM message WHERE session_id = ? LIMIT ?`,
    sessionId,
    L.maxMessagesPerSession + 1,
  );
  if (!m.ok) return { ok: false, hold: m.reason };
  if (m.rows.length > L.maxMessagesPerSession) return { ok: false, fail: "session_too_large" };
  const p = snap.all(
    `SELECT id, message_id AS mid, ${jx("data", "$.type")} AS type,
      ${jx("data", "$.synthetic")} AS synthetic, ${jx("data", "$.ignored")} AS ignored,
      CASE WHEN typeof(data) = 'text' AND json_valid(data) THEN json_type(data, '$.text') END AS tt,
      CAST(substr(${jx("data", "$.text")}, 1, ?) AS BLOB) AS text
     FROM part WHERE session_id = ? LIMIT ?`,
    L.maxPartTextChars,
    sessionId,
    L.maxPartsPerSession + 1,
  );
  if (!p.ok) return { ok: false, hold: p.reason };
  if (p.rows.length > L.maxPartsPerSession) return { ok: false, fail: "session_too_large" };
  const messages: OcMessage[] = m.rows.map((r) => ({
    id: String(r.id),
    created: num(r.tc) ?? num(r.created) ?? 0,
    // json_extract gives SQLite booleans as 1/0: map `summary: true` back.
    role: r.role,
    summary: r.summary === 1 ? true : r.summary,
    agent: r.agent,
    mode: r.mode,
  }));
  const parts: OcPart[] = p.rows.map((r) => ({
    id: String(r.id),
    messageId: String(r.mid),
    type: r.type,
    text: textOf(r.tt, r.text),
    synthetic: r.synthetic === 1 ? true : r.synthetic,
    ignored: r.ignored === 1 ? true : r.ignored,
  }));
  const prose = opencodeProse({
    session: {
      id: sessionId,
      parentId: str(row.parent) || null,
      directory: str(row.dir),
      title: str(row.title),
      revert: parseRevert(row.revert),
    },
    messages,
    parts,
    file: o.file,
  });
  return { ok: true, ...prose };
}

/** The part's text: a string, null when not UTF-8, undefined when absent / not a string. */
function textOf(type: unknown, blob: unknown): string | null | undefined {
  if (type !== "text") return undefined;
  if (!(blob instanceof Uint8Array)) return "";
  try {
    return FATAL.decode(blob);
  } catch {
    // Not UTF-8: the caller counts it; the rest of the session is still read.
    return null;
  }
}
