/**
 * Factory Droid session activity (droid-sdk-typescript
 * `protocol/messages.ts` block schema, [3p] Maestro / cli-continues for the lines):
 * - line 1 is `session_start` (no activity); `message` lines carry
 *   `{id, timestamp, parentId?, message: {role, content: [blocks]}}`;
 * - calls are `tool_use` blocks (id, name, input) of assistant messages, after the text
 *   of their own message (part = block index + 1);
 * - results are `tool_result` blocks of the following user message, naming the call as
 *   `tool_use_id` (on disk) or `toolUseId` (the SDK schema): both are accepted; content
 *   is a string or blocks, `is_error` marks failure;
 * - turns: a user message with anything but tool results;
 * - context markers: `compaction_state` (summaryText as an excerpt, removedCount,
 *   summaryKind, anchorMessage). Rewind and /compact start a NEW session file (§5.4):
 *   nothing in a file is cut, so no rewind marker exists;
 * - prose anchors: message `id` → its first line (the extractor skips a replayed id,
 *   keeping the first).
 * A sub-agent is its own session file joined to its caller's unit; its path does not say
 * so (`sessions/<cwd>/<id>.jsonl` like any session), so the flag comes from its records,
 * which the extractor marks subagent: calls take the flag of the record before them.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { walkJsonl } from "./jsonl_walk.ts";
import {
  blocksText,
  excerptOf,
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
export function droidActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  walkJsonl(bytes, c.skipped, (line, row) => {
    const ts = isoMs(row.timestamp);
    const pos = { line, part: 0 };
    if (row.type === "compaction_state") {
      const detail: Record<string, unknown> = { kind: "compaction_state" };
      if (typeof row.summaryText === "string") detail.summary = excerptOf(row.summaryText);
      if (num(row.removedCount) !== null) detail.removed_count = row.removedCount;
      if (str(row.summaryKind)) detail.summary_kind = row.summaryKind;
      if (str(row.anchorMessage)) detail.anchor_message = row.anchorMessage;
      c.snapshot(pos, ts, detail);
      return;
    }
    if (row.type !== "message" || !isObj(row.message)) return;
    c.id(str(row.id), line);
    const m = row.message;
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    if (m.role === "assistant") {
      blocks.forEach((b, i) => {
        if (!isObj(b) || b.type !== "tool_use") return;
        c.call(
          { line, part: i + 1 },
          "agent",
          str(b.id),
          newCall(str(b.name) ?? "tool", b.input ?? {}, ts),
        );
      });
    } else if (m.role === "user") {
      const results = blocks.filter((b) => isObj(b) && b.type === "tool_result") as Obj[];
      for (const b of results) {
        const id = str(b.tool_use_id) ?? str(b.toolUseId);
        if (!c.result(id, (call) => toolResult(call, b))) c.orphan();
      }
      if (results.length < blocks.length) c.turn(pos);
    }
  });
  return c.done();
}

function toolResult(call: ToolCallEntry, b: Obj): void {
  putOutput(call, "output", blocksText(b.content));
  settle(call, b.is_error === true || b.isError === true ? "error" : "ok");
}

/** The source line of a Droid record: the first message line carrying its id. */
export function droidRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}
