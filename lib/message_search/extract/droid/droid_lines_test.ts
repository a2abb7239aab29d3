import assert from "node:assert/strict";
import { headerOf, parseDroidLine } from "./droid_lines.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const msg = (role: string, content: unknown) => ({
  type: "message",
  id: "m1",
  timestamp: "2026-05-18T11:04:13.000Z",
  message: { role, content },
});

Deno.test("droid lines: injected spans stripped from user text; tool_result-only is not prose", () => {
  const item = parseDroidLine(enc(msg("user", [
    { type: "text", text: "<system-reminder>\ncwd\n</system-reminder>" },
    { type: "text", text: "<command-name>/x</command-name>Real question" },
  ])));
  assert.deepEqual(item, {
    kind: "prose",
    id: "m1",
    role: "user",
    text: "Real question",
    ts_ms: Date.parse("2026-05-18T11:04:13.000Z"),
  });
  assert.equal(
    parseDroidLine(enc(msg("user", [{ type: "tool_result", toolUseId: "t", content: "x" }]))).kind,
    "other",
  );
  assert.equal(
    parseDroidLine(enc(msg("user", [{ type: "tool_result", tool_use_id: "t", content: "x" }])))
      .kind,
    "other",
  );
});

Deno.test("droid lines: assistant text only; state lines and unknown types are not prose", () => {
  const a = parseDroidLine(enc(msg("assistant", [
    { type: "thinking", thinking: "t", signature: "s" },
    { type: "redacted_thinking", data: "d" },
    { type: "text", text: "Said." },
    { type: "tool_use", id: "t", name: "Execute", input: {} },
  ])));
  assert.ok(a.kind === "prose" && a.text === "Said.");
  assert.equal(parseDroidLine(enc({ type: "compaction_state", summaryText: "s" })).kind, "other");
  assert.equal(parseDroidLine(enc({ type: "agent_turn_outcome" })).kind, "other");
  assert.deepEqual(parseDroidLine(enc(msg("user", 3))), {
    kind: "skip",
    reason: "malformed_record",
  });
});

Deno.test("droid lines: session_start header facts", () => {
  assert.deepEqual(
    headerOf({
      type: "session_start",
      id: "s",
      title: "T",
      sessionTitle: "ST",
      cwd: "/w",
      parent: "p",
      callingSessionId: "c",
    }),
    { id: "s", title: "ST", cwd: "/w", parent: "p", callingSessionId: "c" },
  );
  assert.equal(headerOf({ type: "message" }), null);
});
