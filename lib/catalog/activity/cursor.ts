/**
 * Cursor CLI (`cursor-agent`) transcript activity ([3p] only: the CLI
 * is closed source; agentsview, deja-vu and cli-continues read the same shapes):
 * - lines are `{role, message: {content: [blocks]}}` with Anthropic-style blocks; calls
 *   are `tool_use` blocks (id, name, input) of assistant lines, after the text of their
 *   own line (part = block index + 1);
 * - results are `tool_result` blocks (tool_use_id, content string or blocks, is_error)
 *   of the following user lines;
 * - turns: a user line with anything but tool results; `{"type":"turn_ended"}` and other
 *   lines without `role` are control records;
 * - no ids and no times: the extractor's locators are `external_line` (the line itself),
 *   and every call's time is unknown (null);
 * - no context markers are known in the JSONL.
 * The legacy `.txt` transcript (`user:` / `assistant:` blocks, tool calls as text) is not
 * JSONL: it yields no activity and is counted `text_transcript`, never a pile of
 * malformed lines. Sub-agent transcripts sit under `<chat>/subagents/`.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { countSkip, walkJsonl } from "./jsonl_walk.ts";
import { blocksText, isObj, newCall, type Obj, putOutput, settle, str } from "./tool_text.ts";
import type { FileActivity } from "./types.ts";

/** Reads one transcript (main or sub-agent). */
export function cursorActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  if (!startsWithObject(bytes)) {
    if (bytes.length > 0) countSkip(c.skipped, "text_transcript");
    return c.done();
  }
  walkJsonl(bytes, c.skipped, (line, row) => {
    const content = isObj(row.message) ? row.message.content : undefined;
    const blocks = Array.isArray(content) ? content : content === undefined ? [] : [content];
    if (row.role === "assistant") {
      blocks.forEach((b, i) => {
        if (!isObj(b) || b.type !== "tool_use") return;
        c.call(
          { line, part: i + 1 },
          "agent",
          str(b.id),
          newCall(str(b.name) ?? "tool", b.input ?? {}, null),
        );
      });
    } else if (row.role === "user") {
      const results = blocks.filter((b) => isObj(b) && b.type === "tool_result") as Obj[];
      for (const b of results) {
        if (!c.result(str(b.tool_use_id), (call) => toolResult(call, b))) c.orphan();
      }
      if (results.length < blocks.length) c.turn({ line, part: 0 });
    }
  });
  return c.done();
}

/** A JSONL transcript opens with "{" (the `.txt` one with a `user:` marker). */
function startsWithObject(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b;
  }
  return false;
}

function toolResult(call: ToolCallEntry, b: Obj): void {
  putOutput(call, "output", blocksText(b.content));
  settle(call, b.is_error === true ? "error" : "ok");
}

/** The source line of a Cursor record: its locator names it. */
export function cursorRecordLine(rec: MessageRecord, _act: FileActivity): number | null {
  return rec.locator.kind === "external_line" ? rec.locator.line : null;
}

/** Sub-agent transcripts: `<chat>/subagents/<name>.jsonl`. */
export function cursorSubagentFile(rel: string): boolean {
  return /(^|\/)subagents\/[^/]+\.jsonl$/.test(rel);
}
