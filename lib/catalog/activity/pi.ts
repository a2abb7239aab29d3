/**
 * Pi session activity (pi-mono packages/ai types.ts, coding-agent
 * core/messages.ts and tools/bash.ts):
 * - calls are `toolCall` blocks (id, name, arguments) in an assistant message entry; a
 *   call sits after the text of its own entry (part = block index + 1);
 * - results are `toolResult` message entries (toolCallId, content blocks, isError). The
 *   bash tool fails with its output followed by "Command exited with code N": that N is
 *   the exit code;
 * - the user's own shell (`!cmd`): a `bashExecution` message entry carries command,
 *   output, exitCode, cancelled and truncated in one entry;
 * - turns: every user message entry;
 * - context markers: `compaction` (summary, tokensBefore, firstKeptEntryId) and
 *   `branch_summary` (summary of an abandoned branch, fromId) entries;
 * - prose anchors: every entry's `id` → its line.
 * Branches share one file: entries of an abandoned branch keep their place in it, and
 * their calls follow their records (the join flags them superseded with those records).
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { walkJsonl } from "./jsonl_walk.ts";
import {
  blocksText,
  excerptOf,
  exitWith,
  isObj,
  isoMs,
  newCall,
  num,
  type Obj,
  putOutput,
  settle,
  str,
} from "./tool_text.ts";
import type { FileActivity } from "./types.ts";

/** Reads one session file. */
export function piActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  walkJsonl(bytes, c.skipped, (line, row) => {
    c.row(str(row.id), line, str(row.parentId));
    const ts = isoMs(row.timestamp);
    const pos = { line, part: 0 };
    if (row.type === "compaction" || row.type === "branch_summary") {
      const detail: Record<string, unknown> = { kind: row.type };
      if (typeof row.summary === "string") detail.summary = excerptOf(row.summary);
      if (num(row.tokensBefore) !== null) detail.tokens_before = row.tokensBefore;
      if (str(row.firstKeptEntryId)) detail.first_kept_entry_id = row.firstKeptEntryId;
      if (str(row.fromId)) detail.from_id = row.fromId;
      c.snapshot(pos, ts, detail);
      return;
    }
    if (row.type !== "message" || !isObj(row.message)) return;
    const m = row.message;
    const at = num(m.timestamp) ?? ts;
    if (m.role === "user") c.turn(pos);
    else if (m.role === "assistant" && Array.isArray(m.content)) {
      m.content.forEach((b, i) => {
        if (!isObj(b) || b.type !== "toolCall") return;
        const call = newCall(str(b.name) ?? "tool", b.arguments ?? {}, at);
        c.call({ line, part: i + 1 }, "agent", str(b.id), call);
      });
    } else if (m.role === "toolResult") {
      if (!c.result(str(m.toolCallId), (call) => toolResult(call, m))) c.orphan();
    } else if (m.role === "bashExecution") {
      const call = newCall("bash", typeof m.command === "string" ? m.command : "", at);
      putOutput(call, "output", typeof m.output === "string" ? m.output : "");
      if (m.truncated === true) call.output.output!.truncated = true;
      const code = num(m.exitCode);
      if (code !== null) exitWith(call, code);
      settle(call, m.cancelled === true ? "error" : "ok");
      c.call(pos, "user", null, call);
    }
  });
  return c.done();
}

function toolResult(call: ToolCallEntry, m: Obj): void {
  const text = blocksText(m.content);
  putOutput(call, "output", text);
  if (m.isError === true) {
    const code = /Command exited with code (-?\d+)\s*$/.exec(text);
    if (code) exitWith(call, Number(code[1]));
  }
  settle(call, m.isError === true ? "error" : "ok");
}

/** The source line of a Pi record: the entry carrying its id. */
export function piRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}
