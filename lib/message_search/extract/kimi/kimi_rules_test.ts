/**
 * Kimi wire rules (formats.md §3.3–3.4) on synthetic wires, through the same line
 * interpreter and pass the extractor uses: which origins are prose, the lanes never
 * indexed, time carry for legacy lines, agent-qualified ids, source order across agents,
 * and every undo rule (injections kept, compaction and clear as floors, per agent).
 */
import assert from "node:assert/strict";
import { deriveActive } from "../../record.ts";
import { type AgentOps, runKimiPass, type TimedOp } from "./kimi_pass.ts";
import { interpretWireLine } from "./kimi_wire.ts";
import { line, meta, msg, reply } from "./testing/kimi_test_util.ts";

/** Interprets `lines` (line 1 = metadata) per agent and runs one pass. */
function pass(wires: Record<string, string[]>, skipped: Record<string, number> = {}) {
  const files: AgentOps[] = Object.entries(wires).map(([agent, lines]) => {
    const ops: TimedOp[] = [];
    let carry = 0;
    lines.forEach((text, i) => {
      const w = interpretWireLine(text, skipped);
      if (w.createdAt !== null) carry = w.createdAt;
      if (w.time !== null) carry = w.time;
      if (w.op) ops.push({ line: i + 1, time: carry, op: w.op });
    });
    return { agent, subagent: agent !== "main", rel: `x/${agent}/wire.jsonl`, ops };
  });
  const out = runKimiPass(files, { sessionId: "session_x", nextOrder: 0 });
  const active = deriveActive(out.records, out.marks);
  return {
    ...out,
    rows: out.records.map((r, i) => [r.role, r.text, active[i]] as [string, string, boolean]),
  };
}

const user = (text: string, time?: number) => msg("user", text, { kind: "user" }, time);
const undo = (count: number) => line("context.undo", { count });

Deno.test("user prose: origin absent, user, user-slash commands and unknown kinds; machine origins never", () => {
  const origins: [unknown, boolean][] = [
    [undefined, true],
    [{ kind: "user" }, true],
    [{}, true],
    [{ kind: "skill_activation", trigger: "user-slash" }, true],
    [{ kind: "plugin_command", trigger: "user-slash" }, true],
    [{ kind: "some_future_kind" }, true],
    [{ kind: "skill_activation", trigger: "model-tool" }, false],
    [{ kind: "skill_activation", trigger: "nested-skill" }, false],
    [{ kind: "plugin_command" }, false],
    [{ kind: "injection", variant: "plan_mode" }, false],
    [{ kind: "system_trigger", name: "subagent" }, false],
    [{ kind: "system_trigger", name: "goal_continuation" }, false],
    [{ kind: "retry" }, false],
    [{ kind: "compaction_summary" }, false],
    [{ kind: "shell_command", phase: "input" }, false],
    [{ kind: "shell_command", phase: "output" }, false],
    [{ kind: "background_task" }, false],
    [{ kind: "cron_job" }, false],
    [{ kind: "cron_missed" }, false],
    [{ kind: "hook_result" }, false],
  ];
  for (const [origin, prose] of origins) {
    const { rows } = pass({ main: [meta(), msg("user", "typed", origin, 5)] });
    assert.equal(rows.length, prose ? 1 : 0, JSON.stringify(origin));
  }
});

Deno.test("never indexed: turn.prompt twins, think parts, tools, system/tool/assistant messages, config, summaries", () => {
  const ev = (event: Record<string, unknown>) => line("context.append_loop_event", { event }, 3);
  const { rows } = pass({
    main: [
      meta(),
      line("config.update", { systemPrompt: "system prompt" }, 1),
      line("turn.prompt", { input: [{ type: "text", text: "hi" }], origin: { kind: "user" } }, 2),
      user("hi", 2),
      ev({ type: "step.begin", uuid: "s1" }),
      ev({ type: "content.part", stepUuid: "s1", part: { type: "think", think: "hmm" } }),
      ev({ type: "tool.call", stepUuid: "s1", toolCallId: "Bash:0", name: "Bash", args: {} }),
      ev({ type: "step.end", uuid: "s1" }),
      ev({ type: "tool.result", toolCallId: "Bash:0", result: { output: "out" } }),
      msg("tool", "tool text"),
      msg("system", "system text"),
      msg("assistant", "migrated assistant text"),
      line("context.apply_compaction", { summary: "summary", compactedCount: 3 }, 4),
      ev({ type: "content.part", stepUuid: "s1", part: { type: "text", text: "   " } }),
    ],
  });
  assert.deepEqual(rows, [["user", "hi", true]]);
});

Deno.test("user text concatenates text parts, skips a lone media path tag part and accepts string content", () => {
  const content = [
    { type: "text", text: '<image path="/tmp/a.png" width="3"></image>' },
    { type: "image_url", imageUrl: { url: "file:///tmp/a.png" } },
    { type: "text", text: "look at " },
    { type: "text", text: 'this <video path="/v.mp4"></video> clip' },
  ];
  const { rows } = pass({
    main: [
      meta(),
      line("context.append_message", { message: { role: "user", content, toolCalls: [] } }, 1),
      line("context.append_message", { message: { role: "user", content: "plain string" } }, 2),
      line("context.append_message", {
        message: { message: { role: "user", content: [{ type: "text", text: "enveloped" }] } },
        meta: {},
      }, 3),
    ],
  });
  assert.deepEqual(rows.map((r) => r[1]), [
    'look at this <video path="/v.mp4"></video> clip',
    "plain string",
    "enveloped",
  ]);
});

Deno.test("ids are agent-qualified; wires merge by time keeping each wire's own order", () => {
  const out = pass({
    main: [meta("1.5", 100), user("m1", 1000), ...reply("s1", "m2", 3000)],
    "agent-0": [
      meta("1.5", 1500),
      msg("user", "task", { kind: "system_trigger" }, 1500),
      ...reply("s1", "a1", 2000),
    ],
  });
  assert.deepEqual(out.records.map((r) => [r.id, r.text, r.subagent]), [
    ["main:L2", "m1", false],
    ["agent-0:L4", "a1", true],
    ["main:L4", "m2", false],
  ]);
  assert.equal(out.firstUser, "m1");
});

Deno.test("legacy lines without time carry the previous line's time, seeded by created_at", () => {
  const out = pass({
    main: [meta("1.1", 5_000_000_000_000), msg("user", "a"), msg("user", "b", undefined, 7)],
  });
  assert.deepEqual(out.records.map((r) => r.ts_ms), [5_000_000_000_000, 7000]);
});

Deno.test("undo removes until N real inputs are gone, keeps injections, takes replies with their prompts", () => {
  const { rows, marks } = pass({
    main: [
      meta(),
      user("u1"),
      ...reply("s1", "a1"),
      user("u2"),
      msg("user", "reminder", { kind: "injection" }),
      ...reply("s2", "a2"),
      msg("user", "bg", { kind: "background_task" }),
      msg("user", "/skill", { kind: "skill_activation", trigger: "user-slash" }),
      ...reply("s3", "a3"),
      undo(2),
      user("u3"),
    ],
  });
  assert.deepEqual(rows, [
    ["user", "u1", true],
    ["assistant", "a1", true],
    ["user", "u2", false],
    ["assistant", "a2", false],
    ["user", "/skill", false],
    ["assistant", "a3", false],
    ["user", "u3", true],
  ]);
  assert.equal(marks.length, 1);
});

Deno.test("undo stops at a compaction summary but reaches entries kept past compactedCount", () => {
  const kept = pass({
    main: [
      meta(),
      user("old"),
      ...reply("s1", "old reply"),
      user("kept"),
      line("context.apply_compaction", { summary: "S", compactedCount: 2 }),
      user("new"),
      undo(5),
    ],
  });
  assert.deepEqual(kept.rows, [
    ["user", "old", true],
    ["assistant", "old reply", true],
    ["user", "kept", false],
    ["user", "new", false],
  ]);
  const summaryMessage = pass({
    main: [
      meta(),
      user("before"),
      msg("user", "S", { kind: "compaction_summary" }),
      user("after"),
      undo(3),
    ],
  });
  assert.deepEqual(summaryMessage.rows.map((r) => r[2]), [true, false]);
});

Deno.test("clear is a floor for undo; clear and compaction alone supersede nothing", () => {
  const { rows } = pass({
    main: [
      meta(),
      user("a"),
      line("context.clear", {}),
      user("b"),
      line("context.apply_compaction", { summary: "S", compactedCount: 1 }),
      user("c"),
      undo(1),
      user("d"),
      line("context.clear", {}),
      undo(1),
    ],
  });
  assert.deepEqual(rows, [["user", "a", true], ["user", "b", true], ["user", "c", false], [
    "user",
    "d",
    true,
  ]]);
});

Deno.test("undo is per agent, stacks, and an empty undo marks nothing", () => {
  const out = pass({
    main: [meta("1.5", 1), user("main prompt", 10), ...reply("s1", "main reply", 11), undo(1)],
    "agent-0": [
      meta("1.5", 1),
      msg("user", "task", { kind: "system_trigger" }, 12),
      ...reply("s1", "sub reply", 13),
      undo(1),
    ],
  });
  // main's undo (line time carried = 11) runs before the sub-agent's lines: it takes
  // only main's records; the sub-agent's undo finds no real input and takes its reply.
  assert.deepEqual(out.rows, [
    ["user", "main prompt", false],
    ["assistant", "main reply", false],
    ["assistant", "sub reply", false],
  ]);
  const stacked = pass({ main: [meta(), user("x"), user("y"), undo(1), undo(1), undo(1)] });
  assert.deepEqual(stacked.rows.map((r) => r[2]), [false, false]);
  assert.equal(stacked.marks.length, 2);
});
