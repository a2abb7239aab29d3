/**
 * Codex rollout activity (codex-rs protocol models.rs / protocol.rs):
 * - calls are `response_item`s: `function_call` (name, optional namespace, `arguments`
 *   as a JSON string), `custom_tool_call` (freeform `input`, e.g. apply_patch),
 *   `local_shell_call` (`action.command` argv; call_id, else id), `tool_search_call`,
 *   and `web_search_call` / `image_generation_call`, which carry their own status and
 *   have no output item;
 * - results are `function_call_output` / `custom_tool_call_output` / `tool_search_output`
 *   paired by call_id. `output` is a string, an array of content items, or (one fork)
 *   `{content, success}`. Its header names the exit code — "Exit code: N" (shell),
 *   "Process exited with code N" (unified exec) — and older Codex wrapped it as JSON
 *   `{"output": …, "metadata": {"exit_code": N}}`;
 * - `event_msg` `exec_command_end` (persisted only in extended mode) adds exit_code and
 *   its status; an unpaired one from `source: "user_shell"` is a command the USER ran.
 *   `patch_apply_end` (success) and `mcp_tool_call_end` (Err / isError) add failure;
 * - turns: a real `user_message` event (kind absent or "plain") starts one, images-only
 *   prompts included; context markers: `compacted` (its `context_compacted` event twin
 *   folds into it);
 * - prose anchors: an assistant message item's `id` → its line (records without an id
 *   carry their line in the locator).
 * A record's line: external_line → its line; external_record_id → the `@L<line>` suffix a
 * repeated id gets, else the first line carrying that item id.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ToolCallEntry } from "../types.ts";
import { ActivityCollector } from "./collector.ts";
import { walkJsonl } from "./jsonl_walk.ts";
import {
  argvLine,
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
import type { FileActivity, SourcePos } from "./types.ts";

/** Reads one rollout's (decompressed) bytes. */
export function codexActivity(bytes: Uint8Array): FileActivity {
  const c = new ActivityCollector();
  walkJsonl(bytes, c.skipped, (line, row) => {
    const ts = isoMs(row.timestamp);
    const p = row.payload;
    const pos = { line, part: 0 };
    if (row.type === "compacted" && isObj(p)) {
      const detail: Record<string, unknown> = { kind: "compacted" };
      if (typeof p.message === "string") detail.summary = excerptOf(p.message);
      if (Array.isArray(p.replacement_history)) {
        detail.replaced_items = p.replacement_history.length;
      }
      c.snapshot(pos, ts, detail);
    } else if (row.type === "response_item" && isObj(p)) item(c, p, pos, ts);
    else if (row.type === "event_msg" && isObj(p)) event(c, p, pos, ts);
  });
  return c.done();
}

function item(c: ActivityCollector, p: Obj, pos: SourcePos, ts: number | null): void {
  switch (p.type) {
    case "message":
      if (p.role === "assistant") c.id(str(p.id), pos.line);
      return;
    case "function_call": {
      const name = str(p.name) ?? "function";
      const ns = str(p.namespace);
      c.call(pos, "agent", str(p.call_id), newCall(ns ? `${ns}.${name}` : name, args(p), ts));
      return;
    }
    case "custom_tool_call":
      c.call(pos, "agent", str(p.call_id), newCall(str(p.name) ?? "custom_tool", p.input, ts));
      return;
    case "local_shell_call": {
      const a = isObj(p.action) ? p.action : {};
      const argv = Array.isArray(a.command) && a.command.every((x) => typeof x === "string")
        ? a.command as string[]
        : null;
      const call = newCall("local_shell", argv ? argvLine(argv) : a, ts);
      c.call(pos, "agent", str(p.call_id) ?? str(p.id), call);
      return;
    }
    case "tool_search_call": {
      const { type: _t, id: _i, call_id, status: _s, ...rest } = p;
      c.call(pos, "agent", str(call_id), newCall("tool_search", rest, ts));
      return;
    }
    case "web_search_call":
    case "image_generation_call": {
      const a = isObj(p.action) ? p.action : {};
      const what = p.type === "web_search_call"
        ? str(a.query) ?? str(a.url) ?? a
        : str(p.revised_prompt) ?? "";
      const call = newCall(
        p.type === "web_search_call" ? "web_search" : "image_generation",
        what,
        ts,
      );
      if (p.status === "completed") settle(call, "ok");
      else if (p.status === "failed") settle(call, "error");
      c.call(pos, "agent", null, call);
      return;
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "tool_search_output":
      if (!c.result(str(p.call_id), (call) => output(call, p.output))) c.orphan();
      return;
  }
}

/** `arguments` is a JSON string; shown parsed when it parses, else as written. */
function args(p: Obj): unknown {
  if (typeof p.arguments !== "string") return p.arguments ?? {};
  try {
    return JSON.parse(p.arguments);
  } catch {
    // A model can emit invalid JSON arguments; Codex records them verbatim.
    return p.arguments;
  }
}

/** The exit code a shell output's header states (before its "Output:" line). */
function headerExit(text: string): number | null {
  const cut = text.indexOf("\nOutput:");
  const head = text.slice(0, cut >= 0 ? cut : Math.min(text.length, 512));
  const m = /^(?:Exit code:|Process exited with code) (-?\d+)\s*$/m.exec(head);
  return m ? Number(m[1]) : null;
}

function output(call: ToolCallEntry, out: unknown): void {
  let text: string;
  let failed = false;
  if (isObj(out)) {
    text = typeof out.content === "string" ? out.content : blocksText(out.content);
    failed = out.success === false;
  } else text = blocksText(out);
  let exit = headerExit(text);
  if (text.startsWith('{"output"')) {
    try {
      const o = JSON.parse(text) as unknown;
      if (isObj(o) && typeof o.output === "string") {
        text = o.output;
        exit = isObj(o.metadata) ? num(o.metadata.exit_code) : null;
      }
    } catch {
      // Plain output that merely starts like the old JSON wrapper: shown as written.
    }
  }
  putOutput(call, "output", text);
  if (exit !== null) exitWith(call, exit);
  settle(call, failed ? "error" : "ok");
}

function event(c: ActivityCollector, e: Obj, pos: SourcePos, ts: number | null): void {
  switch (e.type) {
    case "user_message":
      // Old-era injections carry a kind other than "plain": not a user turn.
      if (e.kind === undefined || e.kind === "plain") c.turn(pos);
      return;
    case "context_compacted":
      if (c.lastSnapshot()?.kind === "compacted") return; // the `compacted` item's twin
      c.snapshot(pos, ts, { kind: "context_compacted" });
      return;
    case "exec_command_end":
      return execEnd(c, e, pos, ts);
    case "patch_apply_end":
      c.enrich(str(e.call_id), (call) => {
        if (!call.output.output) putOutput(call, "output", textOf(e.stdout) + textOf(e.stderr));
        settle(call, e.success === false ? "error" : "ok");
      });
      return;
    case "mcp_tool_call_end":
      return mcpEnd(c, e, pos, ts);
  }
}

const textOf = (v: unknown) => (typeof v === "string" ? v : "");

function execEnd(c: ActivityCollector, e: Obj, pos: SourcePos, ts: number | null): void {
  const fill = (call: ToolCallEntry) => {
    const out = textOf(e.aggregated_output) || textOf(e.stdout) + textOf(e.stderr);
    if (!call.output.output && out !== "") putOutput(call, "output", out);
    const code = num(e.exit_code);
    if (code !== null) exitWith(call, code);
    settle(call, e.status === "failed" || e.status === "declined" ? "error" : "ok");
  };
  // Enrichment: the output item, before or after this event, still answers the call.
  if (c.enrich(str(e.call_id), fill)) return;
  if (e.source !== "user_shell") return;
  const argv = Array.isArray(e.command) && e.command.every((x) => typeof x === "string")
    ? argvLine(e.command as string[])
    : "";
  const call = newCall("shell", argv, ts);
  fill(call);
  c.call(pos, "user", null, call);
}

function mcpEnd(c: ActivityCollector, e: Obj, pos: SourcePos, ts: number | null): void {
  const r = isObj(e.result) ? e.result : {};
  const ok = isObj(r.Ok) ? r.Ok : null;
  const fill = (call: ToolCallEntry) => {
    if (!call.output.output) {
      const text = ok ? blocksText(ok.content) : textOf(r.Err);
      if (text !== "") putOutput(call, "output", text);
    }
    settle(call, ok && ok.isError !== true && ok.is_error !== true ? "ok" : "error");
  };
  if (c.enrich(str(e.call_id), fill)) return;
  // No function_call named it (an older layout): the end event is the whole call.
  const inv = isObj(e.invocation) ? e.invocation : {};
  const name = [str(inv.server), str(inv.tool)].filter((x) => x !== null).join(".") || "mcp";
  const call = newCall(name, inv.arguments ?? {}, ts);
  fill(call);
  c.call(pos, "agent", null, call);
}

/** The source line of a Codex record, or null when it cannot be placed. */
export function codexRecordLine(rec: MessageRecord, act: FileActivity): number | null {
  const l = rec.locator;
  if (l.kind === "external_line") return l.line;
  if (l.kind !== "external_record_id") return null;
  const at = /@L(\d+)$/.exec(rec.id);
  return at ? Number(at[1]) : act.ids.get(l.record_id) ?? null;
}
