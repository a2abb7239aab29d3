/**
 * Qwen Code transcript lines → typed facts, and the prose rules. Pure: no I/O.
 *
 * On-disk facts (FORMAT.md §2–3, [src] QwenLM/qwen-code
 * `services/chatRecordingService.ts` `ChatRecord`, `UserPromptRecordPayload`): every
 * line is one ChatRecord `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
 * version, gitBranch?, message?: {role, parts[]}, systemPayload?, provenance?,
 * isSidechain?, agentId?, forkedFrom?, …}`; one uuid may span several lines (its parts
 * concatenate in file order; the first line's parentUuid and timestamp stand).
 * Prose:
 * - user, no subtype: `systemPayload.displayText` (the typed prompt before `@`-expansion
 *   and hook context) when present, else the non-thought `text` parts with
 *   `<qwen:user-prompt-submit-context>` hook blocks cut. With a `provenance`, only
 *   `real_user` is a person (sidechain records are exempt: a subagent's first user record
 *   is its task prompt, written by the parent agent, and is tagged subagent);
 * - user `mid_turn_user_message`: displayText, else the parts minus Qwen's machine prefix;
 * - assistant: non-thought `text` parts;
 * - never: tool_result, system/* (compression snapshots, slash-command output, titles,
 *   turn_result copies…), notification/cron/background_task_completed and any unknown
 *   user subtype, functionCall/functionResponse/inlineData parts.
 * Errors: none thrown; a bad line is counted (`invalid_utf8`, `malformed_line`,
 * `malformed_record`) and yields null.
 */

type Obj = Record<string, unknown>;

/** One transcript line, reduced. */
export interface QwenLine {
  uuid: string;
  parentUuid: string | null;
  type: string;
  subtype: string | null;
  sidechain: boolean;
  /** Non-thought text parts of this line, joined. */
  text: string;
  /** `systemPayload.displayText`, when a string. */
  display: string | null;
  provenance: string | null;
  /** The line's timestamp (null: missing or unparsable). */
  ts_ms: number | null;
  cwd: string | null;
  /** `systemPayload.customTitle` of a custom_title record. */
  title: string | null;
  /** Parent session of a sub-session (`parent_session`) or a fork (`forkedFrom`). */
  parentSession: string | null;
}

/** Longest uuid accepted (the locator's record_id cap). */
export const QWEN_ID_MAX_CHARS = 512;
const MID_TURN_PREFIX = "[User message received during tool execution]: ";
const HOOK_BLOCK = /<qwen:user-prompt-submit-context>[\s\S]*?<\/qwen:user-prompt-submit-context>/g;
const NO_PROSE_USER_SUBTYPES = new Set(["notification", "cron", "background_task_completed"]);

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A usable uuid: no control characters, bounded. */
export function isUuid(v: unknown): v is string {
  if (typeof v !== "string" || v.length === 0 || v.length > QWEN_ID_MAX_CHARS) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

function count(skipped: Record<string, number>, reason: string): void {
  skipped[reason] = (skipped[reason] ?? 0) + 1;
}

function partsText(message: unknown): string {
  if (!isObj(message) || !Array.isArray(message.parts)) return "";
  let out = "";
  for (const p of message.parts) {
    if (isObj(p) && typeof p.text === "string" && p.thought !== true) out += p.text;
  }
  return out;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v.length > 0 ? v : null;
}

/** Parses one line; `text` null means invalid UTF-8. */
export function parseLine(text: string | null, skipped: Record<string, number>): QwenLine | null {
  if (text === null) {
    count(skipped, "invalid_utf8");
    return null;
  }
  if (text.trim().length === 0) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not JSON (garbage, or a torn write that later got a newline): counted, never fatal.
    count(skipped, "malformed_line");
    return null;
  }
  if (!isObj(raw)) {
    count(skipped, "malformed_line");
    return null;
  }
  const parent = raw.parentUuid === undefined || raw.parentUuid === null || raw.parentUuid === ""
    ? null
    : raw.parentUuid;
  if (!isUuid(raw.uuid) || (parent !== null && !isUuid(parent)) || typeof raw.type !== "string") {
    count(skipped, "malformed_record");
    return null;
  }
  const payload = isObj(raw.systemPayload) ? raw.systemPayload : {};
  const ts = typeof raw.timestamp === "string" ? Date.parse(raw.timestamp) : NaN;
  const forked = isObj(raw.forkedFrom) ? str(raw.forkedFrom.sessionId) : null;
  return {
    uuid: raw.uuid,
    parentUuid: parent,
    type: raw.type,
    subtype: str(raw.subtype),
    sidechain: raw.isSidechain === true,
    text: partsText(raw.message),
    display: typeof payload.displayText === "string" ? payload.displayText : null,
    provenance: str(raw.provenance),
    ts_ms: Number.isSafeInteger(ts) ? ts : null,
    cwd: str(raw.cwd),
    title: raw.subtype === "custom_title" ? str(payload.customTitle) : null,
    parentSession: (raw.subtype === "parent_session" ? str(payload.parentSessionId) : null) ??
      forked,
  };
}

/** The aggregate of one uuid's lines that prose depends on. */
export interface QwenNode {
  uuid: string;
  parentUuid: string | null;
  type: string;
  subtype: string | null;
  sidechain: boolean;
  provenance: string | null;
  /** First line's time. */
  ts_ms: number | null;
  /** Concatenated text parts so far. */
  text: string;
  /** Last displayText seen. */
  display: string | null;
}

/** A node from its first line. */
export function nodeOf(l: QwenLine): QwenNode {
  return {
    uuid: l.uuid,
    parentUuid: l.parentUuid,
    type: l.type,
    subtype: l.subtype,
    sidechain: l.sidechain,
    provenance: l.provenance,
    ts_ms: l.ts_ms,
    text: l.text,
    display: l.display,
  };
}

/** Folds a later line of the same uuid into its node. */
export function mergeLine(n: QwenNode, l: QwenLine): void {
  n.text += l.text;
  // A display comes only with the line that made the node: the display replaces the text
  // as the prose, so a later line reusing the uuid (a replay, a hand-made line) taking it
  // over would erase what was said (the reliability fuzz found exactly that). Qwen writes
  // a user record once; repeated uuids are assistant chunks, which carry no display.
  if (l.display !== null && n.display === null && n.text === l.text) n.display = l.display;
}

/** The node's prose role and text, or null (see the header). */
export function proseOfNode(n: QwenNode): { role: "user" | "assistant"; text: string } | null {
  let role: "user" | "assistant";
  let text: string;
  if (n.type === "assistant") [role, text] = ["assistant", n.text];
  else if (n.type === "user") {
    if (n.subtype === "mid_turn_user_message") {
      text = n.display ??
        (n.text.startsWith(MID_TURN_PREFIX) ? n.text.slice(MID_TURN_PREFIX.length) : n.text);
    } else if (n.subtype !== null || NO_PROSE_USER_SUBTYPES.has(n.subtype ?? "")) return null;
    else {
      if (!n.sidechain && n.provenance !== null && n.provenance !== "real_user") return null;
      text = n.display ?? n.text.replace(HOOK_BLOCK, "");
    }
    role = "user";
  } else return null;
  return text.trim().length > 0 ? { role, text } : null;
}

/** Lines that may be the active leaf: conversation records and the rewind marker. */
export function isLeafEligible(l: { type: string; subtype: string | null; sidechain: boolean }) {
  if (l.sidechain) return false;
  return l.type === "user" || l.type === "assistant" || l.type === "tool_result" ||
    (l.type === "system" && l.subtype === "rewind");
}
