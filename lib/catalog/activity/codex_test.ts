import assert from "node:assert/strict";
import { RolloutWriter } from "../../../tests/fixtures/codex_fixture.ts";
import { codexActivity } from "./codex.ts";
import type { ActivityItem } from "./types.ts";

const calls = (items: ActivityItem[]) =>
  items.flatMap((it) => (it.kind === "call" ? [{ by: it.by, line: it.pos.line, ...it.call }] : []));

Deno.test("codexActivity pairs calls and outputs by call_id, with exit codes from headers and exec events", () => {
  const w = new RolloutWriter("019a0000-0000-7000-8000-000000000001", Date.now(), true);
  w.meta({ cwd: "/w", cli_version: "0.137.0" });
  w.user("go");
  w.assistant(["Looking."], false, false);
  const a = w.call("exec_command", { cmd: "make" }, "Exit code: 2\nWall time: 1s\nOutput:\nboom");
  w.customCall("apply_patch", "*** Begin Patch", "Success.");
  const b = w.localShell(["/bin/bash", "-lc", "ls -la"], null);
  w.execEnd(b, { exit_code: 0, stdout: "total 0" });
  w.call("shell", { command: ["git", "commit", "-m", "a b"] }, null);
  w.execEnd(a, { exit_code: 2 }); // after its output: enriches, never duplicates
  w.compact("the summary");
  const act = codexActivity(w.bytes());
  const got = calls(act.items);
  assert.deepEqual(got.map((c) => [c.name, c.input, c.status, c.exit_code]), [
    ["exec_command", "make", "error", 2],
    ["apply_patch", "*** Begin Patch", "ok", undefined],
    ["local_shell", "ls -la", "ok", 0],
    ["shell", "git commit -m 'a b'", "pending", undefined],
  ]);
  assert.equal(got[0]!.output.output!.excerpt, "Exit code: 2\nWall time: 1s\nOutput:\nboom");
  assert.equal(got[2]!.output.output!.excerpt, "total 0");
  assert.deepEqual(act.items.map((i) => i.kind), [
    "turn",
    "call",
    "call",
    "call",
    "call",
    "snapshot",
  ]);
  const snap = act.items.at(-1)!;
  assert.equal(snap.kind === "snapshot" && snap.detail.kind, "compacted");
  assert.deepEqual(act.skipped, {});
  // The assistant item id maps to its line (how external_record_id records are placed).
  const line = w.lines.findIndex((l) => l.includes('"role":"assistant"')) + 1;
  assert.equal([...act.ids.values()][0], line);
});

Deno.test("codexActivity reads the older and rarer shapes: JSON-wrapped output, content items, failures, user shell", () => {
  const ts = new Date().toISOString();
  const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: ts, type, payload });
  const rows = [
    line("response_item", {
      type: "function_call",
      name: "shell",
      arguments: "{bad",
      call_id: "c1",
    }),
    line("response_item", {
      type: "function_call_output",
      call_id: "c1",
      output: JSON.stringify({
        output: "nope\n",
        metadata: { exit_code: 127, duration_seconds: 0 },
      }),
    }),
    line("response_item", {
      type: "function_call",
      name: "view_image",
      arguments: "{}",
      call_id: "c2",
    }),
    line("response_item", {
      type: "function_call_output",
      call_id: "c2",
      output: [{ type: "input_text", text: "seen" }, { type: "input_image", image_url: "data:" }],
    }),
    line("response_item", { type: "function_call", name: "x", arguments: "{}", call_id: "c3" }),
    line("response_item", {
      type: "function_call_output",
      call_id: "c3",
      output: { content: "denied", success: false },
    }),
    line("response_item", {
      type: "function_call",
      namespace: "mcp__fs",
      name: "read",
      arguments: '{"p":1}',
      call_id: "c4",
    }),
    line("event_msg", {
      type: "mcp_tool_call_end",
      call_id: "c4",
      invocation: { server: "fs", tool: "read" },
      result: { Err: "server crashed" },
    }),
    line("response_item", {
      type: "custom_tool_call",
      name: "apply_patch",
      input: "p",
      call_id: "c5",
    }),
    line("event_msg", {
      type: "patch_apply_end",
      call_id: "c5",
      success: false,
      stderr: "conflict",
    }),
    line("event_msg", {
      type: "exec_command_end",
      call_id: "u1",
      source: "user_shell",
      command: ["bash", "-lc", "pwd"],
      stdout: "/w\n",
      stderr: "",
      aggregated_output: "/w\n",
      exit_code: 0,
    }),
    line("response_item", {
      type: "web_search_call",
      status: "completed",
      action: { query: "deno" },
    }),
    line("response_item", { type: "function_call_output", call_id: "nobody", output: "?" }),
    line("event_msg", { type: "user_message", message: "ctx", kind: "environment_context" }),
    line("event_msg", { type: "context_compacted" }),
  ];
  const act = codexActivity(new TextEncoder().encode(rows.join("\n") + "\n"));
  const got = calls(act.items);
  assert.deepEqual(got.map((c) => [c.by, c.name, c.input, c.status, c.exit_code]), [
    ["agent", "shell", "{bad", "error", 127],
    ["agent", "view_image", "{}", "ok", undefined],
    ["agent", "x", "{}", "error", undefined],
    ["agent", "mcp__fs.read", '{"p":1}', "error", undefined],
    ["agent", "apply_patch", "p", "error", undefined],
    ["user", "shell", "pwd", "ok", 0],
    ["agent", "web_search", "deno", "ok", undefined],
  ]);
  assert.equal(got[0]!.output.output!.excerpt, "nope\n");
  assert.equal(got[1]!.output.output!.excerpt, "seen\n[image]");
  assert.equal(got[3]!.output.output!.excerpt, "server crashed");
  assert.equal(got[4]!.output.output!.excerpt, "conflict");
  assert.deepEqual(act.skipped, { orphan_result: 1 });
  // An injection event is not a turn; a lone context_compacted is a marker.
  assert.deepEqual(act.items.filter((i) => i.kind !== "call").map((i) => i.kind), ["snapshot"]);
});
