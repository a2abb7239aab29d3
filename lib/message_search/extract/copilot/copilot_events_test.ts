import assert from "node:assert/strict";
import { interpretEvent, parseCopilotLine } from "./copilot_events.ts";

const env = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  type,
  data,
  id: "e1",
  timestamp: "2026-05-18T10:02:03.417Z",
  parentId: null,
  ...extra,
});

Deno.test("copilot events: content is prose; transformedContent, source-tagged and empty are not", () => {
  const ts = Date.parse("2026-05-18T10:02:03.417Z");
  assert.deepEqual(
    interpretEvent(env("user.message", { content: "hi", transformedContent: "X hi Y" })),
    {
      kind: "prose",
      id: "e1",
      role: "user",
      text: "hi",
      ts_ms: ts,
      subagent: false,
    },
  );
  assert.equal(
    interpretEvent(env("user.message", { content: "<skill-context/>", source: "skill-x" })).kind,
    "event",
  );
  assert.equal(interpretEvent(env("user.message", { content: "hi", source: "" })).kind, "prose");
  assert.equal(
    interpretEvent(env("assistant.message", { content: "  ", toolRequests: [{}] })).kind,
    "event",
  );
  assert.equal(interpretEvent(env("assistant.reasoning", { content: "think" })).kind, "event");
  assert.equal(
    interpretEvent(env("session.compaction_complete", { summaryContent: "s" })).kind,
    "event",
  );
  assert.equal(interpretEvent(env("system.message", { content: "sys" })).kind, "event");
});

Deno.test("copilot events: sub-agent origin by agentId or parentToolCallId; cwd from start/context", () => {
  const sub = interpretEvent(env("assistant.message", { content: "a" }, { agentId: "ag1" }));
  assert.ok(sub.kind === "prose" && sub.subagent);
  const viaTool = interpretEvent(
    env("assistant.message", { content: "a", parentToolCallId: "t1" }),
  );
  assert.ok(viaTool.kind === "prose" && viaTool.subagent);
  const start = interpretEvent(env("session.start", { sessionId: "s1", context: { cwd: "/w" } }));
  assert.deepEqual(start, {
    kind: "event",
    ts_ms: Date.parse("2026-05-18T10:02:03.417Z"),
    cwd: "/w",
    sessionId: "s1",
  });
  assert.equal(
    (interpretEvent(env("session.context_changed", { cwd: "/x" })) as { cwd: string }).cwd,
    "/x",
  );
});

Deno.test("copilot events: wrong shapes are skips with a reason, never prose", () => {
  const enc = (v: unknown) =>
    new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
  assert.deepEqual(parseCopilotLine(enc("{x")), { kind: "skip", reason: "malformed_line" });
  // Bytes that are not UTF-8 decode to U+FFFD (as in every extractor): a line of them alone
  // is not JSON, so it is a malformed line; inside a valid line they cost nothing.
  assert.deepEqual(parseCopilotLine(new Uint8Array([0xc3, 0x28])), {
    kind: "skip",
    reason: "malformed_line",
  });
  assert.deepEqual(parseCopilotLine(enc({ data: {} })), {
    kind: "skip",
    reason: "malformed_record",
  });
  assert.deepEqual(parseCopilotLine(enc(env("user.message", { content: ["a"] }))), {
    kind: "skip",
    reason: "malformed_record",
  });
  assert.deepEqual(parseCopilotLine(enc(env("user.message", "nope"))), {
    kind: "skip",
    reason: "malformed_record",
  });
  const noTs = parseCopilotLine(enc({ ...env("user.message", { content: "x" }), timestamp: 5 }));
  assert.ok(noTs.kind === "prose" && noTs.ts_ms === null);
});
