/**
 * Kimi Code wire records → search operations (formats.md §3.2–3.4, mirroring kimi-code's
 * own search extractor `packages/kap-server/src/search/wireExtract.ts` [src]).
 *
 * On-disk facts: line 1 is `{"type":"metadata","protocol_version","created_at"}`; every
 * later line is `{"type", …payload, "time": epoch ms}`. Protocol 1.5 adds `agentId`;
 * 1.1 has none. The agent is therefore taken from the file's directory, never from the
 * record, so both protocols read alike. Records have no ids (the caller mints them).
 *
 * Prose policy (the only lanes indexed):
 * - user: `context.append_message`, role "user", origin absent / `user` / a
 *   `skill_activation` or `plugin_command` with trigger "user-slash" / an unknown future
 *   kind. Text = the `text` parts concatenated, skipping a part that is a single media
 *   path tag. [unc] kimi-code's own search also lets `shell_command`, `background_task`,
 *   `cron_job`, `cron_missed` and `hook_result` through; they are machine-produced (a
 *   shell's output, a task notification, a hook's result), so we do NOT index them.
 * - assistant: `context.append_loop_event` with `event.type` "content.part" and
 *   `part.type` "text".
 * - never: `turn.prompt` (a twin of the user message), think parts, tool.call /
 *   tool.result, role tool/system messages, assistant append_message records (older or
 *   migrated wires; kimi-code ignores them too), config.update, compaction summaries.
 * Non-prose context messages still become history entries, because `context.undo`
 * walks the in-context history (see kimi_pass.ts).
 * Errors: never throws; malformed input is counted in `skipped` and yields no operation.
 */
import { countSkip } from "../framework/plugin.ts";

/** How a history entry behaves under `context.undo` (agent/context `undo()` [src]). */
export type EntryClass = "real" | "injection" | "summary" | "other";

/** One line's meaning for search. */
export type WireOp =
  /** A context message: a history entry, with user prose when `text` is set. */
  | { kind: "msg"; cls: EntryClass; text: string | null }
  /** step.begin: an (empty) assistant history entry that content parts fold into. */
  | { kind: "step"; uuid: string }
  | { kind: "step_end"; uuid: string }
  /** Assistant prose (a text content part). */
  | { kind: "part"; stepUuid: string | null; text: string }
  /** tool.result: a tool-role history entry. */
  | { kind: "tool" }
  | { kind: "undo"; count: number }
  /** apply_compaction: history becomes [summary, …history.slice(count)]. */
  | { kind: "compact"; count: number | null }
  /** context.clear: history becomes empty (a floor undo cannot cross). */
  | { kind: "clear" };

/** A parsed line: its operation (if any), its own time, and metadata created_at. */
export interface WireLine {
  op: WireOp | null;
  /** The record's `time` in epoch ms, or null when absent or unusable. */
  time: number | null;
  /** metadata line only: `created_at` in epoch ms. */
  createdAt: number | null;
}

/** Origin kinds that are never human prose ([unc] policy for the machine ones, see header). */
const NON_PROSE_KINDS: ReadonlySet<string> = new Set([
  "injection",
  "system_trigger",
  "retry",
  "compaction_summary",
  "shell_command",
  "background_task",
  "cron_job",
  "cron_missed",
  "hook_result",
]);

/** `<image path="…"></image>` alone in a part: an upload marker, not text (mediaRef.ts [src]). */
const MEDIA_PATH_TAG = /^\s*<(image|video|audio|file)\b[^>]*?\bpath="[^"]*"[^>]*>(?:<\/\1>)?\s*$/;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Epoch ms from a number (seconds when below 1e12, as kimi-code normalises) or ISO text. */
export function epochMs(value: unknown): number | null {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) return null;
    const ms = Math.floor(value > 1e12 ? value : value * 1000);
    // Past 2^53 it is not a record timestamp (the schema would reject the whole shard).
    return Number.isSafeInteger(ms) ? ms : null;
  }
  if (typeof value === "string" && value.length > 0 && value.length < 64) {
    const ms = Date.parse(value);
    return Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : null;
  }
  return null;
}

function originKind(origin: unknown): unknown {
  return isObj(origin) ? origin.kind : undefined;
}

/** kimi-code `isRealUserPrompt`: origin absent, `user`, or a user-typed slash command. */
function isRealUserOrigin(origin: unknown): boolean {
  if (origin === undefined || origin === null) return true;
  if (!isObj(origin)) return false;
  const kind = origin.kind;
  if (kind === undefined || kind === "user") return true;
  if (kind === "skill_activation" || kind === "plugin_command") {
    return origin.trigger === "user-slash";
  }
  return false;
}

function isProseOrigin(origin: unknown): boolean {
  if (isRealUserOrigin(origin)) return true;
  const kind = originKind(origin);
  if (kind === "skill_activation" || kind === "plugin_command") return false;
  return typeof kind === "string" && !NON_PROSE_KINDS.has(kind);
}

function classOf(role: unknown, origin: unknown): EntryClass {
  const kind = originKind(origin);
  if (kind === "injection") return "injection";
  if (kind === "compaction_summary") return "summary";
  return role === "user" && isRealUserOrigin(origin) ? "real" : "other";
}

/** The text parts of a message, concatenated; a lone media path tag part is skipped. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) {
    if (!isObj(part) || part.type !== "text" || typeof part.text !== "string") continue;
    if (MEDIA_PATH_TAG.test(part.text)) continue;
    text += part.text;
  }
  return text;
}

/** `{role, content, origin}` directly, or the `{message:{…}, meta:{origin}}` envelope. */
function messageFields(m: Obj): { role: unknown; content: unknown; origin: unknown } {
  if (isObj(m.message)) {
    const meta = isObj(m.meta) ? m.meta : {};
    return { role: m.message.role, content: m.message.content, origin: meta.origin };
  }
  return { role: m.role, content: m.content, origin: m.origin };
}

function appendMessage(rec: Obj, skipped: Record<string, number>): WireOp | null {
  if (!isObj(rec.message)) {
    countSkip(skipped, "malformed_record");
    return null;
  }
  const { role, content, origin } = messageFields(rec.message);
  const cls = classOf(role, origin);
  if (role !== "user" || !isProseOrigin(origin)) return { kind: "msg", cls, text: null };
  const text = textOf(content);
  return { kind: "msg", cls, text: text.trim().length > 0 ? text : null };
}

function loopEvent(rec: Obj, skipped: Record<string, number>): WireOp | null {
  const e = rec.event;
  if (!isObj(e) || typeof e.type !== "string") {
    countSkip(skipped, "malformed_record");
    return null;
  }
  switch (e.type) {
    case "step.begin":
    case "step.end":
      if (typeof e.uuid !== "string") return null;
      return { kind: e.type === "step.begin" ? "step" : "step_end", uuid: e.uuid };
    case "content.part": {
      const p = e.part;
      // Only text parts are prose; think (reasoning) and media parts never are.
      if (!isObj(p) || p.type !== "text" || typeof p.text !== "string") return null;
      if (p.text.trim().length === 0) return null;
      const stepUuid = typeof e.stepUuid === "string" ? e.stepUuid : null;
      return { kind: "part", stepUuid, text: p.text };
    }
    case "tool.result":
      return { kind: "tool" };
    default:
      return null;
  }
}

/** Interprets one complete wire line; `null` op for lines that mean nothing to search. */
export function interpretWireLine(text: string, skipped: Record<string, number>): WireLine {
  const none: WireLine = { op: null, time: null, createdAt: null };
  let rec: unknown;
  try {
    rec = JSON.parse(text);
  } catch {
    // Not JSON (or invalid UTF-8 that broke it): data, counted.
    countSkip(skipped, "malformed_line");
    return none;
  }
  if (!isObj(rec) || typeof rec.type !== "string") {
    countSkip(skipped, "malformed_line");
    return none;
  }
  const time = epochMs(rec.time);
  switch (rec.type) {
    case "metadata":
      return { op: null, time, createdAt: epochMs(rec.created_at) };
    case "context.append_message":
      return { op: appendMessage(rec, skipped), time, createdAt: null };
    case "context.append_loop_event":
      return { op: loopEvent(rec, skipped), time, createdAt: null };
    case "context.undo": {
      const n = rec.count;
      if (typeof n === "number" && Number.isSafeInteger(n) && n > 0) {
        return { op: { kind: "undo", count: n }, time, createdAt: null };
      }
      countSkip(skipped, "malformed_record");
      return { ...none, time };
    }
    case "context.apply_compaction": {
      const n = rec.compactedCount;
      const count = typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : null;
      return { op: { kind: "compact", count }, time, createdAt: null };
    }
    case "context.clear":
      return { op: { kind: "clear" }, time, createdAt: null };
    default:
      // turn.prompt (the user message's twin), config.update, tools.*, usage.*, … : no prose.
      return { ...none, time };
  }
}
