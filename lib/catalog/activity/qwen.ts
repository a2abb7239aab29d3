/**
 * Qwen Code session activity (primary source: qwen-code `chatRecordingService.ts`):
 * - calls are `functionCall` parts (id, name, args) of `assistant` records; one uuid is
 *   streamed over several lines, so a call sits after the text lines of its own uuid
 *   before it (part = part index + 1 on its own line);
 * - results are `tool_result` records: `functionResponse` parts (id, response {output}
 *   or {error}) and `toolCallResult` (callId, status success | error | cancelled,
 *   resultDisplay, error). A record with a toolCallResult but no functionResponse part
 *   still answers its callId. run_shell_command's output states "Exit Code: N";
 * - turns: a `user` record that is a prompt (no subtype or `mid_turn_user_message`;
 *   provenance absent or `real_user`, or a sidechain task prompt; no function response);
 * - context markers: `system/rewind` (truncatedCount) and `system/chat_compression`
 *   (token counts; the `<state_snapshot>` summary of compressedHistory as an excerpt);
 * - prose anchors: uuid → its first line; every line's parentUuid builds the tree, so a
 *   call on an abandoned branch takes that branch's superseded flag (the extractor
 *   supersedes records off the chain from the last leaf, §2.4).
 * Sub-agent records interleave in the same file (`isSidechain`); their calls take the
 * subagent flag of the record before them.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { responseText } from "./gemini.ts";
import { walkJsonl } from "./jsonl_walk.ts";
import {
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
import type { FileActivity, SourcePos } from "./types.ts";

/** Reads one session file. */
export function qwenActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  walkJsonl(bytes, c.skipped, (line, row) => {
    const uuid = str(row.uuid);
    c.row(uuid, line, str(row.parentUuid));
    const ts = isoMs(row.timestamp);
    const pos = { line, part: 0 };
    const parts = isObj(row.message) && Array.isArray(row.message.parts) ? row.message.parts : [];
    switch (row.type) {
      case "assistant":
        parts.forEach((p, i) => {
          const fc = isObj(p) && isObj(p.functionCall) ? p.functionCall : null;
          if (!fc) return;
          c.call(
            { line, part: i + 1 },
            "agent",
            str(fc.id),
            newCall(str(fc.name) ?? "tool", fc.args ?? {}, ts),
          );
        });
        return;
      case "tool_result":
        return toolResult(c, row, parts);
      case "user":
        if (isPrompt(row, parts)) c.turn(pos);
        return;
      case "system":
        return system(c, row, pos, ts);
    }
  });
  return c.done();
}

function isPrompt(row: Obj, parts: unknown[]): boolean {
  if (row.subtype !== undefined && row.subtype !== "mid_turn_user_message") return false;
  if (parts.some((p) => isObj(p) && isObj(p.functionResponse))) return false;
  return row.isSidechain === true || row.provenance === undefined ||
    row.provenance === "real_user";
}

function toolResult(c: ActivityCollector, row: Obj, parts: unknown[]): void {
  const meta = isObj(row.toolCallResult) ? row.toolCallResult : {};
  const responses = parts.flatMap((p) =>
    isObj(p) && isObj(p.functionResponse) ? [p.functionResponse] : []
  );
  if (responses.length === 0 && str(meta.callId)) responses.push({ id: meta.callId });
  for (const fr of responses) {
    const id = str(fr.id) ?? (responses.length === 1 ? str(meta.callId) : null);
    if (!c.result(id, (call) => apply(call, fr, meta))) c.orphan();
  }
}

function apply(call: ToolCallEntry, fr: Obj, meta: Obj): void {
  const r = "response" in fr
    ? responseText(fr.response)
    : { text: typeof meta.resultDisplay === "string" ? meta.resultDisplay : "", error: false };
  const errMsg = isObj(meta.error) ? str(meta.error.message) : str(meta.error);
  putOutput(call, r.error ? "error" : "output", r.text);
  if (errMsg !== null && !r.error) putOutput(call, "error", errMsg);
  const code = /^Exit Code: (-?\d+)\s*$/m.exec(r.text);
  if (code) exitWith(call, Number(code[1]));
  const failed = r.error || errMsg !== null || meta.status === "error" ||
    meta.status === "cancelled";
  settle(call, failed ? "error" : "ok");
}

function system(c: ActivityCollector, row: Obj, pos: SourcePos, ts: number | null): void {
  const p = isObj(row.systemPayload) ? row.systemPayload : {};
  if (row.subtype === "rewind") {
    const detail: Record<string, unknown> = { kind: "rewind" };
    if (num(p.truncatedCount) !== null) detail.truncated_count = p.truncatedCount;
    c.snapshot(pos, ts, detail);
  } else if (row.subtype === "chat_compression") {
    const detail: Record<string, unknown> = { kind: "chat_compression" };
    const info = isObj(p.info) ? p.info : p;
    if (num(info.originalTokenCount) !== null) detail.tokens_before = info.originalTokenCount;
    if (num(info.newTokenCount) !== null) detail.tokens_after = info.newTokenCount;
    const summary = snapshotText(p.compressedHistory);
    if (summary !== null) detail.summary = excerptOf(summary);
    c.snapshot(pos, ts, detail);
  }
}

/** The `<state_snapshot>` text among the first entries of a compressed history. */
function snapshotText(history: unknown): string | null {
  if (!Array.isArray(history)) return null;
  for (const h of history.slice(0, 4)) {
    const parts = isObj(h) && Array.isArray(h.parts) ? h.parts : [];
    for (const p of parts) {
      if (isObj(p) && typeof p.text === "string" && p.text.includes("<state_snapshot>")) {
        return p.text;
      }
    }
  }
  return null;
}

/** The source line of a Qwen record: the first line carrying its uuid. */
export function qwenRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}
