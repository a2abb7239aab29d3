/**
 * One GitHub Copilot CLI `events.jsonl` line → what it means for search (formats-more.md
 * §3.2–3.3). Pure: bytes in, a {@link CopilotItem} out; never throws.
 *
 * Envelope on every line: `{type, data, id, timestamp, parentId, agentId?}` [src
 * copilot-sdk session-events.ts]. Prose is exactly:
 * - `user.message.data.content` when `data.source` is absent or empty (a non-empty
 *   `source` marks a non-human origin, e.g. `skill-…` injections). Never
 *   `transformedContent` (the model-bound copy with injected context), never attachments;
 * - `assistant.message.data.content` when non-empty. Never `reasoningText`,
 *   `reasoningOpaque`, `encryptedContent` or `toolRequests`.
 * Everything else (system.message, assistant.reasoning, tool.*, session.compaction_*
 * with its `summaryContent`, subagent.*, hook.*, …) is not prose. `session.start` and
 * `session.context_changed` / `session.resume` carry the cwd.
 * An event with an envelope `agentId` (or an assistant message with `parentToolCallId`)
 * comes from a sub-agent: indexed under the same session with the subagent flag.
 * Malformed input is a `skip` with a reason: not UTF-8, not JSON, not an object envelope,
 * or a prose event whose fields have the wrong types (its text is never guessed).
 */
import { isJsonObject as isObject, parseJsonLine } from "../framework/plugin.ts";

/** What one line contributes. */
export type CopilotItem =
  | {
    kind: "prose";
    /** Envelope event id (UUID): the record id and locator. */
    id: string;
    role: "user" | "assistant";
    text: string;
    /** Envelope timestamp in epoch ms; null when absent or unparseable. */
    ts_ms: number | null;
    subagent: boolean;
  }
  /** A non-prose event; may move the cwd or carry the session id. */
  | { kind: "event"; ts_ms: number | null; cwd: string | null; sessionId: string | null }
  | { kind: "skip"; reason: CopilotSkip };

/** Why a line was not read (counted in the shard's `skipped`). */
export type CopilotSkip =
  | "invalid_utf8"
  | "malformed_line"
  | "malformed_record"
  | "blank_line";

/** Decodes and interprets one line's bytes (without its "\n"). */
export function parseCopilotLine(bytes: Uint8Array): CopilotItem {
  // Lenient decoding; blank and non-JSON lines are skips the caller counts (json_line.ts).
  const line = parseJsonLine(bytes);
  return line.kind === "skip" ? line : interpretEvent(line.value);
}

function tsOf(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

function cwdOf(ctx: unknown): string | null {
  if (!isObject(ctx)) return null;
  return typeof ctx.cwd === "string" && ctx.cwd !== "" ? ctx.cwd : null;
}

/** Interprets a parsed envelope. */
export function interpretEvent(raw: unknown): CopilotItem {
  if (!isObject(raw) || typeof raw.type !== "string" || raw.type === "") {
    return { kind: "skip", reason: "malformed_record" };
  }
  const data = raw.data;
  const ts_ms = tsOf(raw.timestamp);
  const type = raw.type;
  if (type === "user.message" || type === "assistant.message") {
    if (typeof raw.id !== "string" || raw.id === "" || raw.id.length > 256 || !isObject(data)) {
      return { kind: "skip", reason: "malformed_record" };
    }
    const content = data.content;
    if (content !== undefined && content !== null && typeof content !== "string") {
      return { kind: "skip", reason: "malformed_record" };
    }
    const agent = typeof raw.agentId === "string" && raw.agentId !== "";
    const event = { kind: "event" as const, ts_ms, cwd: null, sessionId: null };
    if (typeof content !== "string" || content.trim() === "") return event;
    if (type === "user.message") {
      // A non-empty `source` marks a message the CLI made (skill context, automation).
      if (data.source !== undefined && data.source !== null && data.source !== "") return event;
      return { kind: "prose", id: raw.id, role: "user", text: content, ts_ms, subagent: agent };
    }
    const viaTool = typeof data.parentToolCallId === "string" && data.parentToolCallId !== "";
    return {
      kind: "prose",
      id: raw.id,
      role: "assistant",
      text: content,
      ts_ms,
      subagent: agent || viaTool,
    };
  }
  if (type === "session.start") {
    const d = isObject(data) ? data : {};
    return {
      kind: "event",
      ts_ms: ts_ms ?? tsOf(d.startTime),
      cwd: cwdOf(d.context),
      sessionId: typeof d.sessionId === "string" && d.sessionId !== "" ? d.sessionId : null,
    };
  }
  if (type === "session.resume") {
    const d = isObject(data) ? data : {};
    return { kind: "event", ts_ms, cwd: cwdOf(d.context), sessionId: null };
  }
  if (type === "session.context_changed") {
    return { kind: "event", ts_ms, cwd: cwdOf(data), sessionId: null };
  }
  return { kind: "event", ts_ms, cwd: null, sessionId: null };
}
