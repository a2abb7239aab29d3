/**
 * Cursor CLI (`cursor-agent`) transcript content → prose (formats-more.md §4.2–4.3; all
 * [3p]: agentsview cursor.go, deja-vu, cli-continues). Pure; never throws.
 *
 * JSONL (current): one `{role, message:{content}}` per line, content Anthropic-style
 * blocks (`text`, `tool_use`, `tool_result`, `thinking`) or a plain string; lines without
 * `role` (`{"type":"turn_ended"}`) are control records. No ids, no timestamps.
 * - user: the text blocks joined by "\n"; when `<user_query>…</user_query>` wrappers are
 *   present only their inner text (trimmed) is prose — the tagged blocks around them
 *   (attached files, environment info) are injected context. A user text made ONLY of
 *   tagged blocks and no wrapper is injected context too. Lines with only tool_result
 *   blocks are not prose.
 * - assistant: the text blocks joined by "\n". Never thinking, tool_use, tool_result.
 * Legacy `.txt`: a line `user:` or `assistant:` opens a block; in assistant blocks
 * `[Thinking]`, `[Tool call] <name>` and `[Tool result]` open sub-blocks whose bodies are
 * the following indented or empty lines — all skipped; the rest is prose. User blocks
 * are reduced like JSONL user text.
 */
import { isJsonObject as isObject, parseJsonLine } from "../framework/plugin.ts";

/** What one JSONL line contributes. */
export type CursorItem =
  | { kind: "prose"; role: "user" | "assistant"; text: string }
  | { kind: "other" }
  | { kind: "skip"; reason: "invalid_utf8" | "malformed_line" | "malformed_record" };

const USER_QUERY = /<user_query>([\s\S]*?)<\/user_query>/g;
const ONLY_TAGGED = /^\s*(?:<([A-Za-z_][\w-]*)(?:\s[^>]*)?>[\s\S]*?<\/\1>\s*)+$/;

/** The human part of a user text (null: nothing the human typed). */
export function userProse(text: string): string | null {
  const queries = [...text.matchAll(USER_QUERY)].map((m) => m[1]!.trim()).filter((q) => q !== "");
  if (queries.length > 0) return queries.join("\n");
  if (text.includes("<user_query>") || ONLY_TAGGED.test(text)) return null;
  return text.trim() === "" ? null : text;
}

/** Decodes and interprets one JSONL line (bytes without "\n"). */
export function parseCursorLine(bytes: Uint8Array): CursorItem {
  // Lenient decoding (json_line.ts); a blank line is nothing Cursor wrote, not a skip.
  const line = parseJsonLine(bytes);
  if (line.kind === "skip") {
    return line.reason === "blank_line" ? { kind: "other" } : { kind: "skip", reason: line.reason };
  }
  const raw = line.value;
  if (!isObject(raw)) return { kind: "skip", reason: "malformed_record" };
  if (raw.role === undefined) {
    return typeof raw.type === "string"
      ? { kind: "other" }
      : { kind: "skip", reason: "malformed_record" };
  }
  if (raw.role !== "user" && raw.role !== "assistant") {
    return typeof raw.role === "string"
      ? { kind: "other" }
      : { kind: "skip", reason: "malformed_record" };
  }
  if (!isObject(raw.message)) return { kind: "skip", reason: "malformed_record" };
  const content = raw.message.content;
  let joined: string;
  if (typeof content === "string") joined = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const b of content) {
      if (!isObject(b)) return { kind: "skip", reason: "malformed_record" };
      if (b.type !== "text") continue;
      if (typeof b.text !== "string") return { kind: "skip", reason: "malformed_record" };
      texts.push(b.text);
    }
    joined = texts.join("\n");
  } else return { kind: "skip", reason: "malformed_record" };
  if (raw.role === "user") {
    const prose = userProse(joined);
    return prose === null ? { kind: "other" } : { kind: "prose", role: "user", text: prose };
  }
  return joined.trim() === ""
    ? { kind: "other" }
    : { kind: "prose", role: "assistant", text: joined };
}

/** One prose block of a legacy `.txt` transcript; `line` is its role marker's line. */
export interface TxtProse {
  line: number;
  role: "user" | "assistant";
  text: string;
}

const MARKER = /^\s*(user|assistant):\s*$/;
const SUB_BLOCK = /^\s*(\[Thinking\]|\[Tool call\] |\[Tool result\])/;

/** Parses a legacy `.txt` transcript (complete lines, 1-based numbers from `firstLine`). */
export function parseCursorTxt(lines: readonly string[], firstLine = 1): TxtProse[] {
  const out: TxtProse[] = [];
  let cur: { line: number; role: "user" | "assistant"; body: string[] } | null = null;
  const flush = () => {
    if (cur === null) return;
    const text = cur.role === "user" ? userProse(cur.body.join("\n")) : assistantTxt(cur.body);
    if (text !== null) out.push({ line: cur.line, role: cur.role, text });
  };
  lines.forEach((l, i) => {
    const m = MARKER.exec(l);
    if (m) {
      flush();
      cur = { line: firstLine + i, role: m[1] as "user" | "assistant", body: [] };
    } else if (cur !== null) cur.body.push(l);
  });
  flush();
  return out;
}

function assistantTxt(body: readonly string[]): string | null {
  const kept: string[] = [];
  let inSub = false;
  for (const l of body) {
    if (SUB_BLOCK.test(l)) {
      inSub = true;
      continue;
    }
    // A sub-block body is indented or empty; a non-empty line at the margin ends it.
    if (inSub && (l.trim() === "" || l.startsWith(" ") || l.startsWith("\t"))) continue;
    inSub = false;
    kept.push(l);
  }
  const text = kept.join("\n").trim();
  return text === "" ? null : text;
}
