/**
 * OpenCode's prose rules (formats-more §6.3–§6.6), over rows already read from either
 * store (the SQLite database or the legacy JSON tree): pure, no I/O.
 *
 * - Messages in `(time_created, id)` order, parts in id order (ids are time-sortable).
 * - User prose: `text` parts that are neither `synthetic` (mode preambles, attachment
 *   narration, "[user interrupted]") nor `ignored`; a user message holding a `compaction`
 *   part is the compaction boundary — skipped whole.
 * - Assistant prose: `text` parts, except in compaction summaries (`summary: true`, or
 *   agent/mode "compaction").
 * - Never: reasoning, tool (incl. `task` outputs that wrap a subagent's answer), file,
 *   agent, subtask, step-*, snapshot, patch, retry, compaction parts.
 * - `session.revert = {messageID, partID?}` hides that message (from `partID` on, when
 *   given) and every later message: those records are superseded (§6.5).
 * - A child session (`parent_id` set) is a subagent session: every record is subagent.
 * Record id = part id (`prt_…`, unique); locator `external_record_id` with record_id
 * `<messageID>/<partID>`, file = the store's name relative to the data dir, hash of text.
 * Malformed rows are counted (`message_invalid`, `part_invalid`, `invalid_utf8`), never
 * fatal; the rest of the session is still read.
 */
import { hash16Of } from "../../locator.ts";
import { countSkip } from "../framework/plugin.ts";
import type { DerivedRecord } from "../framework/sqlite_rederive.ts";
import type { SessionMeta } from "../framework/sqlite_unit.ts";

/** One message row, its JSON already parsed into the fields the rules read. */
export interface OcMessage {
  id: string;
  /** Row `time_created` (ms), or the JSON `time.created`. */
  created: number;
  role: unknown;
  summary: unknown;
  agent: unknown;
  mode: unknown;
}

/** One part row. `text` null: not valid UTF-8. */
export interface OcPart {
  id: string;
  messageId: string;
  type: unknown;
  text: string | null | undefined;
  synthetic: unknown;
  ignored: unknown;
}

/** The session row's fields the rules read. */
export interface OcSession {
  id: string;
  parentId: string | null;
  directory: string | null;
  title: string | null;
  /** `session.revert` parsed (null: not set or not an object). */
  revert: { messageID: string; partID?: string } | null;
}

/** Placeholder titles OpenCode sets until it generates one. */
const PLACEHOLDER_TITLE = /^(New session|Child session) - \d{4}-\d{2}-\d{2}T/;
const TITLE_MAX_CODE_POINTS = 100;

/** Parses `session.revert` JSON text; null unless it names a message. */
export function parseRevert(raw: unknown): OcSession["revert"] {
  if (typeof raw !== "string" || raw.length === 0) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    // A revert that is not JSON names nothing: failing safe toward active.
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const { messageID, partID } = v as Record<string, unknown>;
  if (typeof messageID !== "string" || messageID.length === 0) return null;
  return typeof partID === "string" && partID.length > 0 ? { messageID, partID } : { messageID };
}

/** Whether a part of message `m` at part id `p` is hidden by `revert`. */
function reverted(rev: OcSession["revert"], m: string, p: string): boolean {
  if (rev === null) return false;
  if (m > rev.messageID) return true;
  if (m < rev.messageID) return false;
  return rev.partID === undefined || p >= rev.partID;
}

/** Input of {@link opencodeProse}. */
export interface ProseInput {
  session: OcSession;
  messages: OcMessage[];
  parts: OcPart[];
  /** The locator's `file` (e.g. "opencode.db", or a legacy tree path). */
  file: string;
}

/** The session's prose records, meta and skip counts. */
export function opencodeProse(
  input: ProseInput,
): { records: DerivedRecord[]; meta: SessionMeta; skipped: Record<string, number> } {
  const { session, file } = input;
  const skipped: Record<string, number> = {};
  const messages = [...input.messages].sort((a, b) =>
    a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
  const partsOf = new Map<string, OcPart[]>();
  for (const p of [...input.parts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const list = partsOf.get(p.messageId);
    if (list) list.push(p);
    else partsOf.set(p.messageId, [p]);
  }
  const subagent = session.parentId !== null;
  const records: DerivedRecord[] = [];
  let firstUser: string | null = null;
  for (const m of messages) {
    if (m.role !== "user" && m.role !== "assistant") {
      countSkip(skipped, "message_invalid");
      continue;
    }
    const parts = partsOf.get(m.id) ?? [];
    if (m.role === "user" && parts.some((p) => p.type === "compaction")) continue;
    if (
      m.role === "assistant" &&
      (m.summary === true || m.agent === "compaction" || m.mode === "compaction")
    ) continue;
    for (const p of parts) {
      if (p.type !== "text") continue;
      if (p.text === null) {
        countSkip(skipped, "invalid_utf8");
        continue;
      }
      if (typeof p.text !== "string") {
        countSkip(skipped, "part_invalid");
        continue;
      }
      if (p.synthetic === true || p.ignored === true) continue;
      if (p.text.trim().length === 0) continue;
      if (m.role === "user" && firstUser === null && !subagent) firstUser = p.text;
      records.push({
        id: p.id,
        role: m.role,
        ts_ms: Number.isSafeInteger(m.created) ? m.created : 0,
        text: p.text,
        locator: {
          v: 1,
          kind: "external_record_id",
          record_id: `${m.id}/${p.id}`.slice(0, 512),
          file,
          hash: hash16Of(p.text),
        },
        subagent,
        superseded: reverted(session.revert, m.id, p.id),
      });
    }
  }
  const title = session.title && !PLACEHOLDER_TITLE.test(session.title)
    ? session.title
    : firstUser === null
    ? null
    : [...firstUser.trim()].slice(0, TITLE_MAX_CODE_POINTS).join("");
  return {
    records,
    meta: { project: session.directory, title, parent_session_id: session.parentId },
    skipped,
  };
}
