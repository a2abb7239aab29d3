import assert from "node:assert/strict";
import { join } from "node:path";
import { KimiSession } from "../../../tests/fixtures/kimi_fixture.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { kimiActivity, kimiRecordLine, kimiSubagentFile } from "./kimi.ts";
import type { FileActivity } from "./types.ts";

Deno.test("kimiActivity reads loop-event calls, message-form calls, the user's shell and context markers", () =>
  withTempDir(async (root) => {
    const s = new KimiSession(join(root, ".kimi-code"), "/w", Date.now() - 60_000);
    const main = s.wire("main", "1.5");
    main.user("go", { kind: "user" });
    main.step([]);
    main.say("Working.");
    main.loop({ type: "tool.call", toolCallId: "Bash:0", name: "Bash", args: { command: "ls" } });
    main.endStep();
    main.toolResult("Bash:0", "ls: denied", true);
    // Older/migrated wires: calls on an assistant message, results as role "tool".
    main.rec("context.append_message", {
      message: {
        role: "assistant",
        content: [],
        toolCalls: [{
          type: "function",
          id: "t1",
          function: { name: "Read", arguments: '{"path":"a"}' },
        }],
      },
    });
    main.rec("context.append_message", {
      message: { role: "tool", toolCallId: "t1", content: [{ type: "text", text: "A" }] },
    });
    main.msg("user", "!pwd", { kind: "shell_command", phase: "input" });
    main.msg("user", "no such dir", { kind: "shell_command", phase: "output", isError: true });
    main.compact("sum");
    main.rec("context.apply_compaction", {
      summary: { role: "user", content: [{ type: "text", text: "v3 summary" }] },
      count: 4,
    });
    main.rec("context.clear", {});
    main.toolResult("Nobody:0", "?");
    await s.write({}, { main: { type: "main" } });
    const act = kimiActivity(await Deno.readFile(main.path));
    const calls = act.items.flatMap((i) => (i.kind === "call" ? [{ by: i.by, ...i.call }] : []));
    assert.deepEqual(calls.map((c) => [c.by, c.name, c.input, c.status]), [
      ["agent", "Bash", "ls", "error"],
      ["agent", "Read", '{"path":"a"}', "ok"],
      ["user", "shell", "!pwd", "error"],
    ]);
    assert.equal(calls[0]!.output.output!.excerpt, "ls: denied");
    assert.equal(calls[2]!.output.output!.excerpt, "no such dir");
    const snaps = act.items.flatMap((i) => (i.kind === "snapshot" ? [i.detail] : []));
    assert.deepEqual(snaps.map((d) => [d.kind, (d.summary as { excerpt?: string })?.excerpt]), [
      ["compaction", "sum"],
      ["compaction", "v3 summary"],
      ["clear", undefined],
    ]);
    assert.equal(snaps[1]!.compacted_count, 4);
    assert.equal(act.items.filter((i) => i.kind === "turn").length, 1);
    assert.deepEqual(act.skipped, { orphan_result: 1 });
  }));

Deno.test("kimiRecordLine reads the line out of the record id; agent-N wires are sub-agents", () => {
  const act: FileActivity = {
    items: [],
    ids: new Map(),
    parents: new Map(),
    skipped: {},
    bytes: 0,
  };
  const rec = (id: string) => ({ id }) as Parameters<typeof kimiRecordLine>[0];
  assert.equal(kimiRecordLine(rec("main:L13"), act), 13);
  assert.equal(kimiRecordLine(rec("main/agent-1:L3"), act), 3);
  assert.equal(kimiRecordLine(rec("main@root:L4"), act), 4);
  assert.equal(kimiRecordLine(rec("odd"), act), null);
  assert.equal(kimiSubagentFile("sessions/b/s/agents/agent-0/wire.jsonl"), true);
  assert.equal(kimiSubagentFile("sessions/b/s/agents/main/wire.jsonl"), false);
  assert.equal(kimiSubagentFile("sessions/b/s/wire.jsonl"), false);
});
