import assert from "node:assert/strict";
import { parseEvents } from "../session_log/mod.ts";
import { buildNativeRows } from "./native_rows.ts";

const enc = new TextEncoder();
const spine = (lines: Record<string, unknown>[]) =>
  parseEvents(
    enc.encode(lines.map((l) => JSON.stringify({ ts: "12:00:00.000", ...l })).join("\n") + "\n"),
  )
    .events;
const rows = (lines: Record<string, unknown>[]) =>
  buildNativeRows(spine(lines), { createdAtMs: null, metaTask: null });

Deno.test("commands pair in start order even when they share a nonce; a denied approval keeps its rows", () => {
  const r = rows([
    {
      turn: 1,
      event: "model_response",
      file: "turns/turn_001_model.txt",
      data: { model_offset: 0, model_bytes: 4, has_tool_calls: true },
    },
    {
      turn: 1,
      event: "agent_input",
      message: "a; b",
      data: { commands: 2, nonces: ["t1", "t1"], functions: [] },
    },
    { turn: 1, event: "approval", data: { approval_id: "A1", command: "a", kind: "exec" } },
    {
      turn: 1,
      event: "auto_approved",
      data: { approval_id: "A1", command: "a", reason: "headless" },
    },
    { turn: 1, event: "command_started", data: { nonce: "t1", exec: "a", pty: false } },
    { turn: 1, event: "approval", data: { approval_id: "D1", command: "rm -rf /", kind: "exec" } },
    {
      turn: 1,
      event: "approval_resolved",
      data: { approval_id: "D1", decision: "denied", by: "me" },
    },
    {
      turn: 1,
      event: "command_finished",
      data: {
        nonce: "t1",
        exit_code: 0,
        stdout_log: "x",
        stderr_log: "y",
        stdout_bytes: 1,
        stderr_bytes: 0,
        duration_ms: 5,
      },
    },
    { turn: 1, event: "command_started", data: { nonce: "t1", exec: "b", pty: false } },
    {
      turn: 1,
      event: "command_finished",
      data: {
        nonce: "t1",
        exit_code: 1,
        stdout_log: "z",
        stderr_log: "w",
        stdout_bytes: 0,
        stderr_bytes: 0,
        duration_ms: 7,
      },
    },
    {
      turn: 1,
      event: "agent_output",
      file: "turns/turn_001_stdout.txt",
      data: { stdout_bytes: 1, stderr_bytes: 0, exit_codes: [0, 1] },
    },
  ]);
  assert.deepEqual(r.map((x) => [x.kind, x.text ?? null]), [
    ["message", null],
    ["approval", "rm -rf /"],
    ["approval", null],
  ]);
  assert.deepEqual(r[0]!.tools!.map((t) => [t.input, t.exit_code, t.status, t.files.stdout]), [
    ["a", 0, "ok", "x"],
    ["b", 1, "error", "z"],
  ]);
  assert.deepEqual(r[0]!.tools![0]!.detail.approval, { state: "auto", reason: "headless" });
  assert.equal(r[0]!.tools![1]!.detail.approval, undefined);
});

Deno.test("a turn whose commands precede any prose opens a tool_calls row; a started command without a result is pending", () => {
  const r = rows([
    { turn: 2, event: "command_started", data: { nonce: "n", exec: "sleep 99", pty: false } },
    {
      turn: 2,
      event: "model_response",
      file: "turns/turn_002_model.txt",
      data: { model_offset: 0, model_bytes: 4, has_tool_calls: false },
    },
  ]);
  assert.deepEqual(r.map((x) => x.kind), ["tool_calls", "message"]);
  assert.deepEqual(r[0]!.tools!.map((t) => [t.input, t.status]), [["sleep 99", "pending"]]);
  assert.equal(r[1]!.tools, undefined);
});

Deno.test("grouping stays linear on a spine written to defeat it", () => {
  const N = 100_000;
  const lines: Record<string, unknown>[] = [];
  for (let i = 0; i < N; i++) {
    lines.push({
      turn: 1,
      event: "approval",
      data: { approval_id: `D${i}`, command: "x", kind: "exec" },
    });
    lines.push({
      turn: 1,
      event: "approval_resolved",
      data: { approval_id: `D${i}`, decision: "denied", by: "me" },
    });
  }
  for (let i = 0; i < N; i++) {
    lines.push({
      turn: 1,
      event: "command_started",
      data: { nonce: "same", exec: "x", pty: false },
    });
  }
  for (let i = 0; i < N; i++) {
    lines.push({
      turn: 1,
      event: "command_finished",
      data: {
        nonce: "same",
        exit_code: 0,
        stdout_log: "o",
        stderr_log: "e",
        stdout_bytes: 0,
        stderr_bytes: 0,
        duration_ms: 1,
      },
    });
  }
  const events = spine(lines);
  const t0 = performance.now();
  const r = buildNativeRows(events, { createdAtMs: null, metaTask: null });
  const ms = performance.now() - t0;
  const calls = r.find((x) => x.kind === "tool_calls")!.tools!;
  assert.equal(calls.length, N);
  assert.ok(calls.every((c) => c.status === "ok"));
  assert.ok(ms < 5000, `${ms.toFixed(0)} ms for ${events.length} events`);
});
