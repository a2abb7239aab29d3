/**
 * Gemini CLI session lines → typed events, classified in exactly the order Gemini's own
 * loader tests them ([src] gemini-cli @5411f11 `chatRecordingService.ts`
 * `loadConversationRecord`): a string `$rewindTo` is a rewind; a string `id` a message
 * (upsert); an object `$set` a metadata update, a checkpoint when `$set.messages` is an
 * array (it replaces the whole message list); `sessionId` + `projectHash` strings the
 * metadata record (line 1, or a whole legacy record on one line).
 * Pure: no I/O. Errors: none thrown; a bad line is counted in `skipped` and yields null:
 * `invalid_utf8` (the caller decodes with a fatal decoder and passes null), `malformed_line`
 * (not a JSON object), `malformed_record` (an object of no known shape, or a message whose
 * id is unusable). Any other `$`-key object is metadata Gemini ignores; so do we, silently.
 */
import { isObj } from "./gemini_prose.ts";

type Obj = Record<string, unknown>;

/** Where an event came from in its file. */
export interface EventPos {
  /** 1-based line number (legacy whole-file JSON: 1). */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
}

/** One replayable event. */
export type GeminiEvent =
  | { kind: "rewind"; id: string; pos: EventPos }
  | { kind: "message"; id: string; msg: Obj; pos: EventPos }
  /** `$set.messages`: the new whole message list (valid entries only). */
  | { kind: "checkpoint"; messages: { id: string; msg: Obj }[]; set: Obj; pos: EventPos }
  | { kind: "set"; set: Obj; pos: EventPos }
  /** The metadata record; `messages` only for a legacy whole record (upserted, no clear). */
  | { kind: "meta"; meta: Obj; messages: { id: string; msg: Obj }[]; pos: EventPos };

/** Longest message id accepted (the locator's record_id cap). */
export const GEMINI_ID_MAX_CHARS = 512;

/** A usable message id: Gemini mints UUIDs; control characters would poison keys. */
export function isMessageId(v: unknown): v is string {
  if (typeof v !== "string" || v.length === 0 || v.length > GEMINI_ID_MAX_CHARS) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

function count(skipped: Record<string, number>, reason: string): void {
  skipped[reason] = (skipped[reason] ?? 0) + 1;
}

/** The valid message entries of a list; the rest are counted. */
function messagesOf(list: unknown[], skipped: Record<string, number>): { id: string; msg: Obj }[] {
  const out: { id: string; msg: Obj }[] = [];
  for (const m of list) {
    if (isObj(m) && isMessageId(m.id)) out.push({ id: m.id, msg: m });
    else count(skipped, "malformed_record");
  }
  return out;
}

/** Classifies an already-parsed value (a line, or a legacy whole-file object). */
export function eventOf(
  raw: unknown,
  pos: EventPos,
  skipped: Record<string, number>,
): GeminiEvent | null {
  if (!isObj(raw)) {
    count(skipped, "malformed_line");
    return null;
  }
  if (typeof raw.$rewindTo === "string") return { kind: "rewind", id: raw.$rewindTo, pos };
  if (typeof raw.id === "string") {
    if (isMessageId(raw.id)) return { kind: "message", id: raw.id, msg: raw, pos };
    count(skipped, "malformed_record");
    return null;
  }
  if (isObj(raw.$set)) {
    const set = raw.$set;
    if (Array.isArray(set.messages)) {
      return { kind: "checkpoint", messages: messagesOf(set.messages, skipped), set, pos };
    }
    return { kind: "set", set, pos };
  }
  if (typeof raw.sessionId === "string" && typeof raw.projectHash === "string") {
    const messages = Array.isArray(raw.messages) ? messagesOf(raw.messages, skipped) : [];
    return { kind: "meta", meta: raw, messages, pos };
  }
  // Our own known keys with the wrong type are damage, counted; other `$` keys are
  // metadata Gemini ignores.
  if ("$rewindTo" in raw || "$set" in raw) {
    count(skipped, "malformed_record");
    return null;
  }
  if (Object.keys(raw).some((k) => k.startsWith("$"))) return null;
  count(skipped, "malformed_record");
  return null;
}

/** Parses and classifies one line; `text` null means it was not valid UTF-8. */
export function lineEvent(
  text: string | null,
  pos: EventPos,
  skipped: Record<string, number>,
): GeminiEvent | null {
  if (text === null) {
    count(skipped, "invalid_utf8");
    return null;
  }
  // Gemini's loader skips blank lines silently; so do we.
  if (text.trim().length === 0) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not JSON (a torn write that later got a newline, garbage): counted, never fatal.
    count(skipped, "malformed_line");
    return null;
  }
  return eventOf(raw, pos, skipped);
}
