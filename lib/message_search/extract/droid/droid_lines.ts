/**
 * One Factory Droid session line → what it means for search (formats-more.md §5.2–5.3).
 * Pure; never throws.
 *
 * Line 1 is `{"type":"session_start", id, title, sessionTitle?, owner, parent?, cwd?,
 * lastCwd?, callingSessionId?, callingToolUseId?, …}` [src SDK session-metadata.ts];
 * later lines are `{"type":"message", id, timestamp, parentId?, message:{role, content}}`
 * plus `todo_state`, `compaction_state`, `agent_turn_outcome` and unknown types (not
 * prose). Prose:
 * - user: `text` blocks with injected spans removed (`<system-reminder>`,
 *   `<local-command-stdout>`, `<command-name>`, `<command-message>`, `<command-args>`),
 *   each block trimmed, empty ones dropped, the rest joined by "\n". Messages made only
 *   of tool_result blocks (either id spelling, `tool_use_id` or `toolUseId`) are not prose.
 * - assistant: `text` blocks joined by "\n". Never thinking, redacted_thinking, tool_use.
 * Never: titles, todos, compaction summaries, settings.
 */
import { isJsonObject as isObject, parseJsonLine } from "../framework/plugin.ts";

/** The session header facts used. */
export interface DroidHeader {
  id: string | null;
  title: string | null;
  cwd: string | null;
  parent: string | null;
  callingSessionId: string | null;
}

/** What one line contributes. */
export type DroidItem =
  | { kind: "header"; header: DroidHeader }
  | {
    kind: "prose";
    id: string;
    role: "user" | "assistant";
    text: string;
    ts_ms: number | null;
  }
  | { kind: "other"; ts_ms: number | null }
  | {
    kind: "skip";
    reason: "invalid_utf8" | "malformed_line" | "malformed_record" | "blank_line";
  };

const INJECTED =
  /<(system-reminder|local-command-stdout|command-name|command-message|command-args)>[\s\S]*?<\/\1>/g;

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

function tsOf(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

/** Reads a `session_start` object (null when it is not one). */
export function headerOf(raw: unknown): DroidHeader | null {
  if (!isObject(raw) || raw.type !== "session_start") return null;
  return {
    id: str(raw.id),
    title: str(raw.sessionTitle) ?? str(raw.title),
    cwd: str(raw.cwd) ?? str(raw.lastCwd),
    parent: str(raw.parent),
    callingSessionId: str(raw.callingSessionId),
  };
}

/** Decodes and interprets one line (bytes without "\n"). */
export function parseDroidLine(bytes: Uint8Array): DroidItem {
  // Lenient decoding; blank and non-JSON lines are skips the caller counts (json_line.ts).
  const line = parseJsonLine(bytes);
  if (line.kind === "skip") return line;
  const raw = line.value;
  if (!isObject(raw) || typeof raw.type !== "string") {
    return { kind: "skip", reason: "malformed_record" };
  }
  const header = headerOf(raw);
  if (header) return { kind: "header", header };
  const ts_ms = tsOf(raw.timestamp);
  if (raw.type !== "message") return { kind: "other", ts_ms };
  const m = raw.message;
  if (typeof raw.id !== "string" || raw.id === "" || raw.id.length > 256 || !isObject(m)) {
    return { kind: "skip", reason: "malformed_record" };
  }
  if (m.role !== "user" && m.role !== "assistant") {
    return typeof m.role === "string"
      ? { kind: "other", ts_ms }
      : { kind: "skip", reason: "malformed_record" };
  }
  const texts = textBlocks(m.content);
  if (texts === null) return { kind: "skip", reason: "malformed_record" };
  const prose = m.role === "user"
    ? texts.map((t) => t.replace(INJECTED, "").trim()).filter((t) => t !== "").join("\n")
    : texts.join("\n");
  if (prose.trim() === "") return { kind: "other", ts_ms };
  return { kind: "prose", id: raw.id, role: m.role, text: prose, ts_ms };
}

/** The text blocks of a content value; null when its shape is wrong. */
function textBlocks(content: unknown): string[] | null {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return null;
  const out: string[] = [];
  for (const b of content) {
    if (!isObject(b)) return null;
    if (b.type !== "text") continue;
    if (typeof b.text !== "string") return null;
    out.push(b.text);
  }
  return out;
}
