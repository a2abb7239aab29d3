/**
 * A remote session's detail from the team replica: the session's facts (marked remote,
 * with its machine), one page of its indexed prose in source order (`ord`), each record
 * with its ORIGINAL text (restoreText puts U+0000 back), role, ts, seq, locator, flags
 * and `active` (= not superseded, as materialized by the owning machine), plus the
 * session's supersession marks as published. Only what the replica holds: tool calls
 * and context markers live in the other machine's source files and are not shown.
 * Reads run in one REPEATABLE READ snapshot, so the page and `total` agree.
 * Errors: NotFoundError when the machine has no such session (deleted, tombstoned, never
 * published); RangeError for a bad offset/limit.
 */
import { NotFoundError } from "../errors.ts";
import type { Source, SupersessionMark } from "../message_search/mod.ts";
import type { TeamDb } from "./connect.ts";
import { restoreText } from "./record_row.ts";
import {
  capLabel,
  capMessage,
  capped,
  ID_CAP_CHARS,
  PROJECT_CAP_CHARS,
  REMOTE_MARKS_MAX_CHARS,
  REMOTE_PAGE_TEXT_CHARS,
  TEXT_CAP_CHARS,
  TITLE_CAP_CHARS,
} from "./read_caps.ts";

/** Records per page when the caller names none. */
export const REMOTE_PAGE_DEFAULT = 200;
/** Largest page. */
export const REMOTE_PAGE_MAX = 1000;

/** One record of a remote session. */
export interface RemoteRecord {
  record_id: string;
  ord: number;
  role: "user" | "assistant";
  ts_ms: number;
  seq: number | null;
  text: string;
  truncated: boolean;
  subagent: boolean;
  active: boolean;
  superseded: boolean;
  /** encodeLocator form (opaque; it points into the other machine's files). */
  locator: string;
}

/** A remote session's facts. */
export interface RemoteSessionMeta {
  remote: true;
  machine: string;
  session_key: string;
  source: Source;
  session_id: string;
  title: string | null;
  project: string | null;
  parent_session_id: string | null;
  newest_ts_ms: number;
  oldest_ts_ms: number;
  source_gone: boolean;
}

/** One page of a remote session. */
export interface RemoteSession {
  meta: RemoteSessionMeta;
  records: RemoteRecord[];
  marks: SupersessionMark[];
  /** True when the published marks were over REMOTE_MARKS_MAX_CHARS and were dropped. */
  marks_cut: boolean;
  /** Records of the session in the replica (all pages). */
  total: number;
  offset: number;
  limit: number;
}

/** Loads one page of `machine`'s session `sessionKey` from the replica. */
export async function loadRemoteSession(
  db: TeamDb,
  o: { machine: string; sessionKey: string; offset?: number; limit?: number },
): Promise<RemoteSession> {
  const offset = o.offset ?? 0;
  const limit = o.limit ?? REMOTE_PAGE_DEFAULT;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError(`"offset" must be a non-negative integer: got "${offset}"`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > REMOTE_PAGE_MAX) {
    throw new RangeError(`"limit" must be an integer 1..${REMOTE_PAGE_MAX}: got "${limit}"`);
  }
  if (typeof o.machine !== "string" || typeof o.sessionKey !== "string") {
    throw new TypeError("A remote session needs a machine and a session key");
  }
  // U+0000 cannot travel to PostgreSQL; no stored key holds one (pgLabel), so none matches.
  if (o.machine.includes("\u0000") || o.sessionKey.includes("\u0000")) {
    throw new NotFoundError(`No session "${o.sessionKey}" on machine "${o.machine}"`);
  }
  return await db.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    // Nothing is taken whole from another machine's rows (H6, read_caps.ts).
    const [s] = await tx.unsafe<Record<string, unknown>[]>(
      `SELECT source, ${capped("session_id", ID_CAP_CHARS, "session_id")},
              ${capped("title", TITLE_CAP_CHARS, "title")},
              ${capped("project", PROJECT_CAP_CHARS, "project")},
              ${capped("parent_session_id", ID_CAP_CHARS, "parent_session_id")},
              newest_ts_ms, oldest_ts_ms, source_gone,
              CASE WHEN octet_length(marks::text) <= ${REMOTE_MARKS_MAX_CHARS} THEN marks END
                AS marks,
              octet_length(marks::text) > ${REMOTE_MARKS_MAX_CHARS} AS marks_cut,
              (SELECT count(*) FROM intendant.records r
                WHERE r.machine = s.machine AND r.session_key = s.session_key) AS total
         FROM intendant.sessions s WHERE machine = $1 AND session_key = $2`,
      [o.machine, o.sessionKey],
    );
    if (!s) throw new NotFoundError(`No session "${o.sessionKey}" on machine "${o.machine}"`);
    // The page's rows, each text capped, and the page ended once the texts before a row
    // reach REMOTE_PAGE_TEXT_CHARS (a row always comes: a page never stalls).
    const rows = await tx.unsafe<Record<string, unknown>[]>(
      `SELECT * FROM (
         SELECT ${capped("record_id", ID_CAP_CHARS, "record_id")}, ord, role, ts_ms, seq,
                ${capped("text", TEXT_CAP_CHARS, "text")}, nul_at, truncated, subagent,
                superseded, ${capped("locator", ID_CAP_CHARS, "locator")},
                coalesce(sum(least(length(text), ${TEXT_CAP_CHARS})) OVER
                  (ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
           FROM (SELECT * FROM intendant.records WHERE machine = $1 AND session_key = $2
                  ORDER BY ord LIMIT $3 OFFSET $4) page
       ) r WHERE before = 0 OR before < ${REMOTE_PAGE_TEXT_CHARS} ORDER BY ord`,
      [o.machine, o.sessionKey, limit, offset],
    );
    const marks = s.marks === null
      ? []
      : typeof s.marks === "string"
      ? JSON.parse(s.marks)
      : s.marks;
    return {
      meta: {
        remote: true as const,
        machine: o.machine,
        session_key: o.sessionKey,
        source: s.source as Source,
        session_id: capLabel(s.session_id as string, ID_CAP_CHARS)!,
        title: capLabel(s.title as string | null, TITLE_CAP_CHARS),
        project: capLabel(s.project as string | null, PROJECT_CAP_CHARS),
        parent_session_id: capLabel(s.parent_session_id as string | null, ID_CAP_CHARS),
        newest_ts_ms: Number(s.newest_ts_ms),
        oldest_ts_ms: Number(s.oldest_ts_ms),
        source_gone: s.source_gone as boolean,
      },
      records: rows.map((r) => {
        const text = capMessage(restoreText(r.text as string, r.nul_at as number[] | null));
        return {
          record_id: capLabel(r.record_id as string, ID_CAP_CHARS)!,
          ord: Number(r.ord),
          role: r.role === 2 ? "assistant" as const : "user" as const,
          ts_ms: Number(r.ts_ms),
          seq: r.seq === null ? null : Number(r.seq),
          text: text.text,
          truncated: (r.truncated as boolean) || text.cut,
          subagent: r.subagent as boolean,
          active: !r.superseded,
          superseded: r.superseded as boolean,
          locator: capLabel(r.locator as string, ID_CAP_CHARS)!,
        };
      }),
      marks: Array.isArray(marks) ? marks as SupersessionMark[] : [],
      marks_cut: s.marks_cut === true,
      total: Number(s.total),
      offset,
      limit,
    };
  });
}
