/**
 * Claude Code transcript activity (the file layout: message_search/extract/claude), main
 * files and subagent files alike:
 * - calls are `tool_use` blocks (id, name, input) of `assistant` rows; one API message is
 *   often split over several rows sharing message.id, so a call's row usually follows
 *   the row holding that message's text;
 * - results are `tool_result` blocks (tool_use_id, content string or blocks, is_error)
 *   of the following `user` rows. A row answering ONE call may carry `toolUseResult`;
 *   for Bash its string `stdout` / `stderr` are shown as those labels. A failing Bash
 *   result's text opens "Exit code N" (shown in the UI as "Error: Exit code N") [3p]:
 *   that N is the exit code;
 * - the user's own shell (bash mode): a `<bash-input>` user row, answered by the next
 *   `<bash-stdout>` / `<bash-stderr>` row;
 * - turns: a `user` row with something other than tool results that is neither isMeta
 *   nor a compaction summary;
 * - context markers: `system` rows with subtype `compact_boundary` (trigger, preTokens);
 *   the `isCompactSummary` user row after one becomes that marker's summary, never prose;
 * - prose anchors: every row's `uuid` → its line; a row re-appended under a uuid already
 *   seen (compaction, resume) is skipped (`repeated_row`), as the extractor keeps the first;
 * - resume replays: a main-file row of ANOTHER session (`--resume` copies that session's
 *   history under the same uuids) is that session's activity, shown there, not here:
 *   skipped and counted `replayed_from_other_session` (sidechain rows carry the parent's
 *   id and are kept). When the replayed session's own transcript is gone the extractor
 *   keeps its prose here; its tools are still left out — shown once, never twice.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { countSkip, walkJsonl } from "./jsonl_walk.ts";
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

const BASH_INPUT = /^<bash-input>([\s\S]*)<\/bash-input>\s*$/;
const TAG = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`);

/** Reads one transcript (main or subagent) of session `sessionId`. */
export function claudeActivity(bytes: Uint8Array, ctx: { sessionId: string }): FileActivity {
  const c = new ActivityCollector();
  let shell: ToolCallEntry | null = null;
  walkJsonl(bytes, c.skipped, (line, row) => {
    // A compact boundary starts a new root; its logical parent keeps the branch.
    const uuid = str(row.uuid);
    if (uuid !== null && c.ids.has(uuid)) {
      // A compaction or resume re-appends rows under the same uuid: the first one counts.
      countSkip(c.skipped, "repeated_row");
      return;
    }
    c.row(uuid, line, str(row.parentUuid) ?? str(row.logicalParentUuid));
    const sid = str(row.sessionId);
    if (sid !== null && sid !== ctx.sessionId && row.isSidechain !== true) {
      countSkip(c.skipped, "replayed_from_other_session");
      return;
    }
    const ts = isoMs(row.timestamp);
    const pos = { line, part: 0 };
    const msg = isObj(row.message) ? row.message : {};
    if (row.type === "assistant" && Array.isArray(msg.content)) {
      msg.content.forEach((b, i) => {
        if (!isObj(b) || b.type !== "tool_use") return;
        const call = newCall(str(b.name) ?? "tool", b.input ?? {}, ts);
        c.call({ line, part: i + 1 }, "agent", str(b.id), call);
      });
    } else if (row.type === "user") {
      if (row.isCompactSummary === true) {
        const marker = c.lastSnapshot();
        if (marker?.kind === "compact_boundary") {
          marker.summary = excerptOf(blocksText(msg.content));
        }
        return;
      }
      const content = msg.content;
      if (typeof content === "string") {
        const bash = BASH_INPUT.exec(content);
        if (bash) {
          shell = newCall("bash", bash[1]!, ts);
          c.call(pos, "user", null, shell);
          return;
        }
        if (shell && /^<bash-(stdout|stderr)>/.test(content)) {
          userShellOutput(shell, content);
          shell = null;
          return;
        }
      }
      const blocks = Array.isArray(content) ? content : [content];
      const results = blocks.filter((b) => isObj(b) && b.type === "tool_result") as Obj[];
      for (const b of results) {
        const extra = results.length === 1 && isObj(row.toolUseResult) ? row.toolUseResult : null;
        if (!c.result(str(b.tool_use_id), (call) => toolResult(call, b, extra))) c.orphan();
      }
      if (results.length < blocks.length && row.isMeta !== true) c.turn(pos);
    } else if (row.type === "system" && row.subtype === "compact_boundary") {
      const m = isObj(row.compactMetadata) ? row.compactMetadata : {};
      const detail: Record<string, unknown> = { kind: "compact_boundary" };
      if (str(m.trigger)) detail.trigger = m.trigger;
      if (num(m.preTokens) !== null) detail.tokens_before = m.preTokens;
      c.snapshot(pos, ts, detail);
    }
  });
  return c.done();
}

function toolResult(call: ToolCallEntry, b: Obj, extra: Obj | null): void {
  const text = blocksText(b.content);
  const failed = b.is_error === true;
  const out = extra && !failed ? [extra.stdout, extra.stderr] : null;
  if (out && out.some((s) => typeof s === "string")) {
    if (typeof out[0] === "string" && (out[0] !== "" || out[1] === "")) {
      putOutput(call, "stdout", out[0]);
    }
    if (typeof out[1] === "string" && out[1] !== "") putOutput(call, "stderr", out[1]);
  } else putOutput(call, "output", text);
  if (failed) {
    const code = /^(?:Error: )?Exit code (-?\d+)\b/.exec(text);
    if (code) exitWith(call, Number(code[1]));
  }
  settle(call, failed || extra?.interrupted === true ? "error" : "ok");
}

function userShellOutput(call: ToolCallEntry, content: string): void {
  const out = TAG("bash-stdout").exec(content)?.[1] ?? "";
  const err = TAG("bash-stderr").exec(content)?.[1] ?? "";
  if (out !== "" || err === "") putOutput(call, "stdout", out);
  if (err !== "") putOutput(call, "stderr", err);
  settle(call, "ok");
}

/** The source line of a Claude record: the row carrying its uuid. */
export function claudeRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  return rec.locator.kind === "external_record_id"
    ? act.ids.get(rec.locator.record_id) ?? null
    : null;
}

/** Subagent transcripts: `<sid>/subagents/agent-*.jsonl`, or old `agent-*.jsonl` siblings. */
export function claudeSubagentFile(rel: string): boolean {
  return rel.includes("/subagents/") || /(^|\/)agent-[^/]*\.jsonl$/.test(rel);
}
