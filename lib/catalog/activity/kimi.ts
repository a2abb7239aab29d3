/**
 * Kimi Code wire activity (kimi-code agent-core-v2 loopEventFold.ts):
 * - calls are `context.append_loop_event` events of type `tool.call` (toolCallId, name,
 *   args); results are `tool.result` events (toolCallId, result {output: string or
 *   content parts, isError?, note?}). Older or migrated wires keep them as messages
 *   instead: an assistant `context.append_message` with `toolCalls` [{id, name,
 *   arguments}] and `role: "tool"` messages naming toolCallId;
 * - the user's own shell (`!cmd`): a user message with origin `shell_command`, phase
 *   "input", answered by the next phase "output" message (origin.isError);
 * - turns: every `turn.prompt` record;
 * - context markers: `context.apply_compaction` (summary, compactedCount, tokensBefore,
 *   tokensAfter) and `context.clear`;
 * - prose anchors need no id map: a Kimi record id is `<agent>:L<line>` (kimi_pass.ts),
 *   the line of the record that minted it.
 * Every wire of the session (agents/main, agents/agent-N, a legacy root wire.jsonl) is
 * read alike; agent-N wires are sub-agents.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { walkJsonl } from "./jsonl_walk.ts";
import {
  blocksText,
  excerptOf,
  isObj,
  newCall,
  num,
  type Obj,
  putOutput,
  settle,
  str,
} from "./tool_text.ts";
import type { FileActivity, SourcePos } from "./types.ts";

/** Reads one agent wire. */
export function kimiActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  let shell: ToolCallEntry | null = null;
  walkJsonl(bytes, c.skipped, (line, row) => {
    const ts = num(row.time);
    const pos = { line, part: 0 };
    switch (row.type) {
      case "turn.prompt":
        c.turn(pos);
        return;
      case "context.append_loop_event":
        if (isObj(row.event)) loopEvent(c, row.event, pos, ts);
        return;
      case "context.append_message": {
        if (!isObj(row.message)) return;
        const m = row.message;
        const origin = isObj(m.origin) ? m.origin : {};
        if (m.role === "user" && origin.kind === "shell_command") {
          const text = blocksText(m.content);
          if (origin.phase === "input") {
            shell = newCall("shell", text, ts);
            c.call(pos, "user", null, shell);
          } else if (shell) {
            putOutput(shell, "output", text);
            settle(shell, origin.isError === true ? "error" : "ok");
            shell = null;
          }
        } else if (m.role === "assistant" && Array.isArray(m.toolCalls)) {
          messageCalls(c, m.toolCalls, line, ts);
        } else if (m.role === "tool") {
          const r = { output: m.content, isError: m.isError };
          if (!c.result(str(m.toolCallId), (call) => result(call, r))) c.orphan();
        }
        return;
      }
      case "context.apply_compaction": {
        const detail: Record<string, unknown> = { kind: "compaction" };
        const summary = typeof row.summary === "string"
          ? row.summary
          : isObj(row.summary)
          ? blocksText(row.summary.content)
          : str(row.contextSummary);
        if (summary) detail.summary = excerptOf(summary);
        const count = num(row.compactedCount) ?? num(row.count);
        if (count !== null) detail.compacted_count = count;
        if (num(row.tokensBefore) !== null) detail.tokens_before = row.tokensBefore;
        if (num(row.tokensAfter) !== null) detail.tokens_after = row.tokensAfter;
        c.snapshot(pos, ts, detail);
        return;
      }
      case "context.clear":
        c.snapshot(pos, ts, { kind: "clear" });
        return;
    }
  });
  return c.done();
}

function loopEvent(c: ActivityCollector, e: Obj, pos: SourcePos, ts: number | null): void {
  if (e.type === "tool.call") {
    c.call(pos, "agent", str(e.toolCallId), newCall(str(e.name) ?? "tool", e.args ?? {}, ts));
  } else if (e.type === "tool.result") {
    const r = isObj(e.result) ? e.result : { output: e.result };
    if (!c.result(str(e.toolCallId), (call) => result(call, r))) c.orphan();
  }
}

function messageCalls(c: ActivityCollector, calls: unknown[], line: number, ts: number | null) {
  calls.forEach((t, i) => {
    if (!isObj(t)) return;
    const fn = isObj(t.function) ? t.function : t;
    let args: unknown = fn.arguments ?? {};
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        // Arguments as the model streamed them, invalid JSON included: shown as written.
      }
    }
    c.call({ line, part: i + 1 }, "agent", str(t.id), newCall(str(fn.name) ?? "tool", args, ts));
  });
}

function result(call: ToolCallEntry, r: Obj): void {
  putOutput(call, "output", blocksText(r.output));
  if (typeof r.note === "string" && r.note !== "") putOutput(call, "note", r.note);
  settle(call, r.isError === true ? "error" : "ok");
}

/** The source line of a Kimi record: its id is `<agent>:L<line>`. */
export function kimiRecordLine(rec: MessageRecord, _act: FileActivity): number | null {
  const m = /:L(\d+)$/.exec(rec.id);
  return m ? Number(m[1]) : null;
}

/** Sub-agent wires: `agents/<id>/wire.jsonl` for any id but main. */
export function kimiSubagentFile(rel: string): boolean {
  return /(^|\/)agents\/[^/]+\/wire\.jsonl$/.test(rel) && !/(^|\/)agents\/main\//.test(rel);
}
