/**
 * Gemini CLI session activity (primary source: gemini-cli @5411f11
 * `chatRecordingService.ts`, `chatRecordingTypes.ts`):
 * - calls are the `toolCalls` entries (id, name, args, status, result?, resultDisplay?,
 *   timestamp) of `gemini` message records. A message is re-appended whole under its id as
 *   it streams and as its calls finish (Gemini merges toolCalls by call id before each
 *   re-append), so a call is keyed by its id: it sits where its message FIRST appeared
 *   (after that message's text: part = the call's first-seen index + 1) and shows its LAST
 *   value — one call, never one per re-append. `$set.messages` checkpoints repeat whole
 *   messages: they update values, and place a message first seen there at that line;
 * - results ride in the call (`result`: Part[] with `functionResponse.response`
 *   `{output}` or `{error}`; `status` success | error | cancelled). A `user`-type record
 *   whose parts are `functionResponse`s (how the reply went back to the model) answers a
 *   call still without a result. run_shell_command's output states "Exit Code: N";
 * - turns: a `user` record that is a real prompt (not a function response, a slash
 *   command, an environment / hook / summary injection or the "Please continue." nudge);
 * - context markers: `{"$rewindTo": id}` (kind `rewind`); a checkpoint is not a marker
 *   (compression, masking and abort rollbacks all write one: §1.4, only `$rewindTo` cuts);
 * - prose anchors: message id → the line where it first appeared (the extractor orders
 *   records by first appearance and names them by message id).
 * Items are emitted sorted by position once the whole file is read (a re-append can
 * finish a call long after its message was placed). The legacy whole-file `.json` (one
 * pretty-printed object, §1.2) is read whole: each message sits on the line of its
 * `"id"` key as `JSON.stringify(…, null, 2)` lays it out.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { countSkip, walkJsonl } from "./jsonl_walk.ts";
import { exitWith, isObj, isoMs, newCall, type Obj, putOutput, settle, str } from "./tool_text.ts";
import type { FileActivity, SourcePos } from "./types.ts";

/** User texts that are never a prompt (gemini_prose.ts's rules, [src] isIgnoredUserContent). */
const NOT_A_PROMPT = ["/", "?", "<session_context>", "<hook_context>", "<state_snapshot>"];

interface Msg {
  pos: SourcePos;
  /** Call id → its slot among this message's calls (1-based, first-seen order). */
  parts: Map<string, number>;
}

interface Pending {
  seq: number;
  pos: SourcePos;
  kind: "call" | "turn" | "snapshot";
  call?: ToolCallEntry;
  detail?: Record<string, unknown>;
  ts?: number | null;
}

/** Gathers one file's messages and calls before they are emitted in position order. */
class GeminiFold {
  readonly msgs = new Map<string, Msg>();
  readonly calls = new Map<string, ToolCallEntry>();
  readonly out: Pending[] = [];
  #seq = 0;
  constructor(readonly c: ActivityCollector) {}

  push(p: Omit<Pending, "seq">): void {
    this.out.push({ ...p, seq: this.#seq++ });
  }

  /** Upserts message `m` read on `line` (its position is its first appearance). */
  message(m: Obj, line: number): void {
    const id = str(m.id);
    if (id === null) return;
    let msg = this.msgs.get(id);
    if (!msg) {
      msg = { pos: { line, part: 0 }, parts: new Map() };
      this.msgs.set(id, msg);
      this.c.id(id, line);
      if (m.type === "user" && isPrompt(m)) this.push({ kind: "turn", pos: msg.pos });
    }
    if (m.type === "gemini" && Array.isArray(m.toolCalls)) {
      for (const t of m.toolCalls) if (isObj(t)) this.#toolCall(msg, t);
    } else if (m.type === "user") this.#responses(m.content);
  }

  #toolCall(msg: Msg, t: Obj): void {
    const cid = str(t.id);
    // A call without an id cannot be told apart from its own re-appends: keyed by its slot.
    const key = cid ?? `#${msg.pos.line}:${msg.parts.size}`;
    let part = msg.parts.get(key);
    let call = this.calls.get(key);
    if (part === undefined || !call) {
      part = msg.parts.size + 1;
      msg.parts.set(key, part);
      call = newCall(str(t.name) ?? "tool", t.args ?? {}, isoMs(t.timestamp));
      this.calls.set(key, call);
      this.push({ kind: "call", pos: { line: msg.pos.line, part }, call });
    }
    fill(call, t);
  }

  /** functionResponse parts of a user-type record: answer calls still without output. */
  #responses(content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const p of content) {
      const fr = isObj(p) && isObj(p.functionResponse) ? p.functionResponse : null;
      if (!fr) continue;
      const call = str(fr.id) === null ? undefined : this.calls.get(fr.id as string);
      if (!call) {
        this.c.orphan();
        continue;
      }
      if (call.status === "pending") applyResponse(call, fr.response);
    }
  }

  done(): FileActivity {
    this.out.sort((a, b) => a.pos.line - b.pos.line || a.pos.part - b.pos.part || a.seq - b.seq);
    for (const p of this.out) {
      if (p.kind === "turn") this.c.turn(p.pos);
      else if (p.kind === "call") this.c.call(p.pos, "agent", null, p.call!);
      else this.c.snapshot(p.pos, p.ts ?? null, p.detail!);
    }
    return this.c.done();
  }
}

/** A user record that is a typed prompt (see NOT_A_PROMPT). */
function isPrompt(m: Obj): boolean {
  const parts = Array.isArray(m.content) ? m.content : [m.content];
  if (parts.some((p) => isObj(p) && isObj(p.functionResponse))) return false;
  const text = parts.map((p) => (typeof p === "string" ? p : isObj(p) ? str(p.text) ?? "" : ""))
    .join("").trim();
  if (text === "" || text === "Please continue.") return false;
  return !NOT_A_PROMPT.some((x) => text.startsWith(x));
}

/** The text of a functionResponse `response` ({output} | {error} | anything). */
export function responseText(r: unknown): { text: string; error: boolean } {
  if (typeof r === "string") return { text: r, error: false };
  if (!isObj(r)) return { text: r === undefined ? "" : JSON.stringify(r) ?? "", error: false };
  if (typeof r.output === "string") return { text: r.output, error: false };
  if (typeof r.error === "string") return { text: r.error, error: true };
  if (isObj(r.error) && typeof r.error.message === "string") {
    return { text: r.error.message, error: true };
  }
  return { text: JSON.stringify(r), error: false };
}

function applyResponse(call: ToolCallEntry, response: unknown): void {
  const r = responseText(response);
  putOutput(call, r.error ? "error" : "output", r.text);
  const code = /^Exit Code: (-?\d+)\s*$/m.exec(r.text);
  if (code) exitWith(call, Number(code[1]));
  settle(call, r.error ? "error" : "ok");
}

/** The latest value of a toolCalls entry onto its call. */
function fill(call: ToolCallEntry, t: Obj): void {
  if (Array.isArray(t.result)) {
    for (const p of t.result) {
      if (isObj(p) && isObj(p.functionResponse)) {
        applyResponse(call, p.functionResponse.response);
        break;
      }
    }
  }
  if (!call.output.output && !call.output.error && typeof t.resultDisplay === "string") {
    putOutput(call, "output", t.resultDisplay);
  }
  if (t.status === "error" || t.status === "cancelled") settle(call, "error");
  else if (t.status === "success") settle(call, "ok");
}

/** Reads one session file (JSONL log, or a legacy whole-file `.json`). */
export function geminiActivity(bytes: Uint8Array): FileActivity {
  const f = new GeminiFold(new ActivityCollector());
  if (isLegacyJson(bytes)) {
    legacy(f, bytes);
    return f.done();
  }
  walkJsonl(bytes, f.c.skipped, (line, row) => {
    if (typeof row.$rewindTo === "string") {
      f.push({
        kind: "snapshot",
        pos: { line, part: 0 },
        ts: null,
        detail: { kind: "rewind", to: row.$rewindTo },
      });
    } else if (typeof row.id === "string") f.message(row, line);
    else if (isObj(row.$set) && Array.isArray(row.$set.messages)) {
      for (const m of row.$set.messages) if (isObj(m)) f.message(m, line);
    }
  });
  return f.done();
}

/** A pretty-printed whole object: the first line is a lone "{". */
function isLegacyJson(bytes: Uint8Array): boolean {
  let i = 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x7b && (bytes[i + 1] === 0x0a || bytes[i + 1] === 0x0d);
}

function legacy(f: GeminiFold, bytes: Uint8Array): void {
  let text: string;
  let doc: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    doc = JSON.parse(text);
  } catch {
    // Mid-rewrite (`writeFileSync` is not atomic) or damaged: nothing read, counted.
    countSkip(f.c.skipped, "malformed_file");
    return;
  }
  if (!isObj(doc) || !Array.isArray(doc.messages)) {
    countSkip(f.c.skipped, "malformed_file");
    return;
  }
  // Message keys sit at indent 6 under `"messages": [` (nested objects are deeper).
  const lines: number[] = [];
  text.split("\n").forEach((l, i) => {
    if (l.startsWith('      "id": ')) lines.push(i + 1);
  });
  const exact = lines.length === doc.messages.length;
  doc.messages.forEach((m, k) => {
    if (isObj(m)) f.message(m, exact ? lines[k]! : 1);
  });
}

/** The source line of a Gemini record: where its message id first appeared. */
export function geminiRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}

/** Subagent files: `chats/<parentSessionId>/<agentId>.jsonl`. */
export function geminiSubagentFile(rel: string): boolean {
  return /(^|\/)chats\/[^/]+\/[^/]+\.jsonl$/.test(rel);
}
