import assert from "node:assert/strict";
import { join } from "node:path";
import { createCopilotExtractor } from "../../message_search/mod.ts";
import { CopilotSessionWriter, uuidFrom } from "../../../tests/helpers/fixtures/copilot.ts";
import { extractedModel, rowShapes } from "../../../tests/helpers/fixtures/external_model.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { attachActivity } from "./attach.ts";
import { ActivityCache } from "./cache.ts";
import { copilotActivity } from "./copilot.ts";

/** Calls ok / failed / still running, a sub-agent's call, a compaction. */
function session(): CopilotSessionWriter {
  let t = Date.parse("2026-05-18T10:00:00Z");
  const w = new CopilotSessionWriter({
    sessionId: uuidFrom("act"),
    cwd: "/w",
    clock: () => (t += 1000),
  });
  w.user("Why does the navbar flicker?");
  w.assistant("Let me look.", {
    tools: [{
      name: "bash",
      args: { command: "rg key src" },
      result: "src/Nav.tsx:3\n<exited with exit code 0>",
    }],
  });
  w.skill("review");
  w.compaction();
  w.user("Run the build");
  w.event("assistant.message", {
    messageId: "m-x",
    content: "Building.",
    toolRequests: [
      { toolCallId: "t-fail", name: "bash", arguments: '{"command":"make"}' },
      { toolCallId: "t-run", name: "view", arguments: { path: "a" } },
    ],
  });
  w.event("tool.execution_start", { toolCallId: "t-fail", toolName: "bash", arguments: {} });
  w.event("tool.execution_start", { toolCallId: "t-run", toolName: "view", arguments: {} });
  w.event("tool.execution_complete", {
    toolCallId: "t-fail",
    success: false,
    error: { message: "make: *** [all] Error 2", code: "failure" },
  });
  w.subagent("Find the build config", "It is in Makefile.");
  return w;
}

Deno.test("copilotActivity pairs toolRequests with execution_complete, times them, reads compaction", () => {
  const w = session();
  const text = w.text();
  const lines = text.split("\n");
  lines.splice(3, 0, "not json");
  const act = copilotActivity(new TextEncoder().encode(lines.join("\n") + '{"type":"user.mes'));
  const calls = act.items.flatMap((
    i,
  ) => (i.kind === "call" ? [{ ...i.call, part: i.pos.part }] : []));
  assert.deepEqual(calls.map((c) => [c.name, c.input, c.status, c.exit_code, c.part]), [
    ["bash", "rg key src", "ok", 0, 1],
    ["bash", "make", "error", undefined, 1],
    ["view", '{"path":"a"}', "pending", undefined, 2],
  ]);
  assert.equal(calls[0]!.duration_ms, 1000);
  assert.equal(calls[1]!.output.error!.excerpt, "make: *** [all] Error 2");
  const snaps = act.items.flatMap((i) => (i.kind === "snapshot" ? [i.detail] : []));
  assert.deepEqual(snaps.map((d) => [d.kind, d.messages_removed, d.tokens_before]), [
    ["compaction", 40, 91234],
  ]);
  // Real prompts and the sub-agent's task prompt are turns; the skill injection is not.
  assert.equal(act.items.filter((i) => i.kind === "turn").length, 3);
  assert.deepEqual(act.skipped, { malformed_line: 1, torn_tail: 1 });
});

Deno.test("attachActivity places Copilot calls under the assistant message that asked for them", () =>
  withTempDir(async (home) => {
    const copilot = join(home, ".copilot");
    const w = session();
    await w.write(copilot);
    const m = await extractedModel(
      createCopilotExtractor({ homes: [copilot] }),
      `copilot:${uuidFrom("act")}`,
    );
    const out = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(out.activity?.state, "ok");
    assert.deepEqual(rowShapes(out), [
      "user: Why does the navbar flicker?",
      "assistant: Let me look. [rg key src=ok]",
      "marker compaction",
      "user: Run the build",
      'assistant: Building. [make=error, {"path":"a"}=pending]',
      "user(sub): Find the build config",
      "assistant(sub): It is in Makefile.",
    ]);
  }));
