/**
 * Reading Goose's `sessions.db` (schema v5 → v13+, formats-more §7.2) from a private
 * snapshot: the session list, per-session watermarks and one session's rows. Columns vary
 * with the schema version (`message_id` from v7, `metadata_json` from v3), so queries are
 * built from `pragma_table_info`; a missing table is a counted hold (`db_schema`).
 *
 * `content_json` is walked INSIDE SQLite (`json_each`, guarded: a non-array, invalid or
 * non-TEXT value walks as `[]`, a non-object item is never `json_extract`ed), so tool
 * responses — often whole files — never reach JS; only `text` items' texts are fetched,
 * as BLOBs, and decoded with a fatal UTF-8 decoder.
 * Watermark (§7.5): sessions.updated_at + name/type + count(messages) + max(id) +
 * max(created_timestamp): `replace_conversation` re-inserts with new rowids, so max(id)
 * moves even when the count does not.
 * `hidden` sessions are internal (policy: never listed); `sub_agent` ones are subagent.
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
import { gooseProse, type GooseRow, gooseTitle } from "./goose_prose.ts";

/** Bounds of one session read. */
export interface GooseDbLimits {
  maxMessagesPerSession: number;
  /** Characters of one text item read. */
  maxTextChars: number;
}

const FATAL = new TextDecoder("utf-8", { fatal: true });

/** Why the store's tables cannot be read: hostile (a view …), or lacking a needed column. */
function schemaRefusal(snap: SqliteSnapshot): string | null {
  const hostile = snap.refusal(["sessions", "messages"]);
  if (hostile) return hostile;
  const s = snap.columns("sessions");
  const m = snap.columns("messages");
  const ok = s.has("id") && ["id", "session_id", "role", "content_json"].every((c) => m.has(c));
  return ok ? null : "db_schema";
}

/**
 * The listable sessions (never `hidden` ones). One database per data dir, so no copy
 * competes with another: no freshness is read.
 */
export const listGooseSessions: ListSessions = (snap, o) => {
  const bad = schemaRefusal(snap);
  if (bad) return { ok: false, reason: bad };
  const type = col(snap, "sessions", "session_type");
  const r = snap.all(
    `SELECT id FROM sessions WHERE typeof(id) = 'text' AND coalesce(${type}, 'user') != 'hidden'
     ORDER BY id LIMIT ?`,
    o.max + 1,
  );
  if (!r.ok) return { ok: false, reason: r.reason };
  return { ok: true, sessions: r.rows.map((row) => ({ id: row.id as string, updated: null })) };
};

function watermarks(snap: SqliteSnapshot): Watermarks {
  let out: Watermarks;
  const bad = schemaRefusal(snap);
  if (bad) out = { hold: bad };
  else {
    const sc = (n: string) => col(snap, "sessions", n);
    const s = snap.all(
      `SELECT id, ${sc("updated_at")} AS u, ${sc("name")} AS n, ${sc("session_type")} AS t, ${
        sc("working_dir")
      } AS w FROM sessions`,
    );
    const m = snap.all(
      `SELECT session_id AS id, count(*) AS c, max(id) AS mx, max(${
        col(snap, "messages", "created_timestamp")
      }) AS ct
       FROM messages GROUP BY session_id`,
    );
    if (!s.ok) out = { hold: s.reason };
    else if (!m.ok) out = { hold: m.reason };
    else {
      const agg = new Map(m.rows.map((r) => [String(r.id), `${r.c}:${r.mx}:${r.ct}`]));
      out = new Map();
      for (const r of s.rows) {
        const id = String(r.id);
        out.set(id, JSON.stringify([r.u, r.n, r.t, r.w, agg.get(id) ?? "0"]));
      }
    }
  }
  return out;
}

/** The session's watermark; null when it is not in the store. */
export const gooseWatermark: WatermarkOf = perSnapshotWatermarks(watermarks);

const ARRAY_OR_EMPTY =
  "CASE WHEN typeof(content_json) = 'text' AND json_valid(content_json) AND json_type(content_json) = 'array' THEN content_json ELSE '[]' END";
const ITEM_TYPE = "CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.type') END";

/** Reads one session's rows and applies the prose rules. */
export function readGooseSession(
  snap: SqliteSnapshot,
  sessionId: string,
  o: { limits: GooseDbLimits; file: string },
): SessionRead {
  const bad = schemaRefusal(snap);
  if (bad) return { ok: false, hold: bad };
  const sc = (n: string) => col(snap, "sessions", n);
  const mc = (n: string) => col(snap, "messages", n);
  const s = snap.all(
    `SELECT ${sc("name")} AS name, ${sc("description")} AS descr, ${sc("session_type")} AS type,
      ${sc("working_dir")} AS dir FROM sessions WHERE id = ?`,
    sessionId,
  );
  if (!s.ok) return { ok: false, hold: s.reason };
  const srow = s.rows[0];
  if (srow === undefined) return { ok: false, hold: "session_vanished" };
  const meta = mc("metadata_json");
  const m = snap.all(
    `SELECT id, role, ${mc("message_id")} AS mid, ${mc("created_timestamp")} AS ct, ${
      mc("timestamp")
    } AS ts,
      CASE WHEN typeof(${meta}) = 'text' AND json_valid(${meta}) THEN json_extract(${meta}, '$.userVisible') END AS uv,
      CASE WHEN typeof(content_json) = 'text' AND json_valid(content_json) AND json_type(content_json) = 'array' THEN 1 ELSE 0 END AS ok,
      (SELECT count(*) FROM json_each(${ARRAY_OR_EMPTY}) AS e WHERE ${ITEM_TYPE} = 'toolResponse') AS tr
     FROM messages WHERE session_id = ? ORDER BY id LIMIT ?`,
    sessionId,
    o.limits.maxMessagesPerSession + 1,
  );
  if (!m.ok) return { ok: false, hold: m.reason };
  if (m.rows.length > o.limits.maxMessagesPerSession) {
    return { ok: false, fail: "session_too_large" };
  }
  const t = snap.all(
    `SELECT m.id AS rid, json_type(e.value, '$.text') AS tt,
      CAST(substr(json_extract(e.value, '$.text'), 1, ?) AS BLOB) AS text
     FROM messages AS m, json_each(${
      ARRAY_OR_EMPTY.replaceAll("content_json", "m.content_json")
    }) AS e
     WHERE m.session_id = ? AND ${ITEM_TYPE} = 'text' ORDER BY m.id, e.key`,
    o.limits.maxTextChars,
    sessionId,
  );
  if (!t.ok) return { ok: false, hold: t.reason };
  const texts = new Map<unknown, unknown[]>();
  for (const r of t.rows) {
    let v: unknown = undefined;
    if (r.tt === "text" && r.text instanceof Uint8Array) {
      try {
        v = FATAL.decode(r.text);
      } catch {
        // Not UTF-8: the prose rules count the row and skip it.
        v = null;
      }
    } else if (r.tt === "text") v = "";
    const list = texts.get(r.rid);
    if (list) list.push(v);
    else texts.set(r.rid, [v]);
  }
  const rows: GooseRow[] = m.rows.map((r) => ({
    messageId: typeof r.mid === "string" ? r.mid : null,
    role: r.role,
    createdSec: r.ct,
    timestamp: r.ts,
    userVisible: r.uv,
    contentOk: r.ok === 1,
    hasToolResponse: typeof r.tr === "number" && r.tr > 0,
    texts: texts.get(r.id) ?? [],
  }));
  const subagent = srow.type === "sub_agent";
  const prose = gooseProse(rows, { file: o.file, subagent });
  return {
    ok: true,
    records: prose.records,
    skipped: prose.skipped,
    meta: {
      project: typeof srow.dir === "string" ? srow.dir : null,
      title: gooseTitle(srow.name || srow.descr, subagent ? null : prose.firstUser),
      parent_session_id: null,
    },
  };
}
