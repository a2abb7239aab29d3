/**
 * GitHub Copilot CLI `events.jsonl` activity (primary source: copilot-sdk
 * `session-events.ts`, the CLI's own event schema):
 * - calls are `assistant.message` `toolRequests` (toolCallId, name, arguments), after the
 *   text of their own event (part = index + 1). A `tool.execution_start` (toolCallId,
 *   toolName, arguments) for an id no request named is a call of its own;
 * - results are `tool.execution_complete` (toolCallId, success, result {content,
 *   detailedContent?}, error {message, code?}); the wall time from the start event to it
 *   is the call's duration. The shell tool's result ends "<exited with exit code N>"
 *   [3p, unc]: that N is the exit code when present;
 * - turns: every `user.message` without `source` (a non-empty source is a skill or other
 *   machine injection, §3.3);
 * - context markers: `session.compaction_complete` (summaryContent as an excerpt,
 *   messagesRemoved, preCompactionTokens) and `session.truncation` (its counters). A
 *   rewind leaves no marker: `session.snapshot_rewind` is ephemeral and the CLI rewrites
 *   the file shorter (the extractor's rewrite detector keeps the vanished prose);
 * - prose anchors: event `id` → its line (the extractor's record id).
 * Sub-agent events carry an envelope `agentId`; their prose records are flagged subagent,
 * and their calls take the flag of the record before them.
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

/** Counters of a truncation event copied into its marker (bounded). */
const MAX_MARKER_FIELDS = 8;

/** Reads one `events.jsonl`. */
export function copilotActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  const started = new Map<string, number>();
  walkJsonl(bytes, c.skipped, (line, row) => {
    const ts = isoMs(row.timestamp);
    const d = isObj(row.data) ? row.data : {};
    const pos = { line, part: 0 };
    switch (row.type) {
      case "user.message":
        c.id(str(row.id), line);
        if (!str(d.source)) c.turn(pos);
        return;
      case "assistant.message":
        c.id(str(row.id), line);
        if (!Array.isArray(d.toolRequests)) return;
        d.toolRequests.forEach((t, i) => {
          if (!isObj(t)) return;
          const call = newCall(str(t.name) ?? "tool", args(t.arguments), ts);
          c.call({ line, part: i + 1 }, "agent", str(t.toolCallId), call);
        });
        return;
      case "tool.execution_start": {
        const id = str(d.toolCallId);
        if (id !== null && ts !== null) started.set(id, ts);
        // Known from a request: the start only times it.
        if (c.enrich(id, () => {})) return;
        c.call(pos, "agent", id, newCall(str(d.toolName) ?? "tool", args(d.arguments), ts));
        return;
      }
      case "tool.execution_complete": {
        const id = str(d.toolCallId);
        const from = id === null ? undefined : started.get(id);
        const ok = c.result(id, (call) => {
          complete(call, d);
          if (from !== undefined && ts !== null && ts >= from) call.duration_ms = ts - from;
        });
        if (!ok) c.orphan();
        return;
      }
      case "session.compaction_complete": {
        const detail: Record<string, unknown> = { kind: "compaction" };
        if (typeof d.summaryContent === "string") detail.summary = excerptOf(d.summaryContent);
        if (num(d.messagesRemoved) !== null) detail.messages_removed = d.messagesRemoved;
        if (num(d.preCompactionTokens) !== null) detail.tokens_before = d.preCompactionTokens;
        if (d.success === false) detail.failed = true;
        c.snapshot(pos, ts, detail);
        return;
      }
      case "session.truncation": {
        const detail: Record<string, unknown> = { kind: "truncation" };
        for (const [k, v] of Object.entries(d).slice(0, MAX_MARKER_FIELDS)) {
          if (num(v) !== null && k.length <= 64) detail[k] = v;
        }
        c.snapshot(pos, ts, detail);
        return;
      }
    }
  });
  return c.done();
}

/** Arguments as recorded; a JSON string is shown parsed when it parses. */
function args(a: unknown): unknown {
  if (typeof a !== "string") return a ?? {};
  try {
    return JSON.parse(a);
  } catch {
    // Arguments as the model streamed them, invalid JSON included: shown as written.
    return a;
  }
}

function complete(call: ToolCallEntry, d: Obj): void {
  const r = isObj(d.result) ? d.result : {};
  const text = typeof r.content === "string" ? r.content : blocksText(r.content);
  if (text !== "" || !isObj(d.error)) putOutput(call, "output", text);
  const err = isObj(d.error) ? str(d.error.message) : str(d.error);
  if (err !== null) putOutput(call, "error", err);
  const code = /<exited with exit code (-?\d+)>\s*$/.exec(text);
  if (code) exitWith(call, Number(code[1]));
  settle(call, d.success === false || err !== null ? "error" : "ok");
}

/** The source line of a Copilot record: the event carrying its id. */
export function copilotRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}
