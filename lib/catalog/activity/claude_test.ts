import assert from "node:assert/strict";
import { ClaudeWriter, msgId, toolId } from "../../../tests/fixtures/claude_fixture.ts";
import { claudeActivity, claudeSubagentFile } from "./claude.ts";

function writer() {
  let t = Date.parse("2026-05-18T10:00:00Z");
  return new ClaudeWriter({
    sessionId: "5e551011-0000-4000-8000-000000000001",
    cwd: "/w",
    version: "2.1.150",
    clock: () => (t += 1000),
  });
}

Deno.test("claudeActivity pairs tool_use with tool_result, keeps Bash stdout/stderr and exit codes, and turns", () => {
  const w = writer();
  const p = w.user("build it", {}, null);
  const m = msgId("c:m1");
  const text = w.assistant([{ type: "text", text: "Building." }], m);
  const [a, b] = [toolId("c:a"), toolId("c:b")];
  // Two calls in one row (CC 2.0 multi-block), answered in one user row.
  w.assistant([
    { type: "tool_use", id: a, name: "Bash", input: { command: "make" } },
    { type: "tool_use", id: b, name: "Glob", input: { pattern: "*.ts" } },
  ], m);
  w.user([
    { type: "tool_result", tool_use_id: a, content: "Exit code 2\nmake: *** boom", is_error: true },
    { type: "tool_result", tool_use_id: b, content: [{ type: "text", text: "a.ts" }] },
  ]);
  const c = toolId("c:c");
  w.assistant([{ type: "tool_use", id: c, name: "Bash", input: { command: "ls" } }], msgId("c:m2"));
  w.user([{ type: "tool_result", tool_use_id: c, content: "x\ny" }], {
    toolUseResult: { stdout: "x", stderr: "y", interrupted: false },
  });
  w.user(`<system-reminder>meta</system-reminder>`, { isMeta: true });
  w.user("<bash-input>pwd</bash-input>");
  const before = w.user("<bash-stdout></bash-stdout><bash-stderr>no cwd</bash-stderr>");
  w.system("compact_boundary", {
    parentUuid: null,
    logicalParentUuid: w.tip,
    compactMetadata: { trigger: "auto", preTokens: 1000 },
  }, null);
  const boundary = w.tip!;
  w.user("This session is being continued…", { isCompactSummary: true });
  w.user([{ type: "tool_result", tool_use_id: "toolu_unknown", content: "?" }]);
  w.lines.push(w.lines[2]!); // the Bash+Glob row re-appended under its uuid
  w.lines.push(JSON.stringify({
    type: "assistant",
    sessionId: "0ther000-0000-4000-8000-000000000000",
    uuid: "replayed",
    message: { content: [{ type: "tool_use", id: "tr", name: "Read", input: {} }] },
  }));
  const act = claudeActivity(new TextEncoder().encode(w.text()), {
    sessionId: "5e551011-0000-4000-8000-000000000001",
  });
  const got = act.items.flatMap((
    i,
  ) => (i.kind === "call" ? [{ ...i.call, by: i.by, pos: i.pos }] : []));
  assert.deepEqual(got.map((x) => [x.by, x.name, x.input, x.status, x.exit_code]), [
    ["agent", "Bash", "make", "error", 2],
    ["agent", "Glob", '{"pattern":"*.ts"}', "ok", undefined],
    ["agent", "Bash", "ls", "ok", undefined],
    ["user", "bash", "pwd", "ok", undefined],
  ]);
  assert.deepEqual(got.map((x) => x.pos.part), [1, 2, 1, 0], "block index + 1 within a row");
  assert.deepEqual(Object.keys(got[2]!.output), ["stdout", "stderr"]);
  assert.deepEqual(Object.keys(got[3]!.output), ["stderr"]);
  assert.equal(got[1]!.output.output!.excerpt, "a.ts");
  // Turns: the real prompt only (not tool results, meta rows, the summary or bash rows).
  const turns = act.items.filter((i) => i.kind === "turn");
  assert.equal(turns.length, 1);
  assert.equal(turns[0]!.row, p);
  const snap = act.items.find((i) => i.kind === "snapshot")!;
  assert.equal(snap.kind === "snapshot" && snap.row, boundary);
  assert.deepEqual(snap.kind === "snapshot" && snap.detail, {
    kind: "compact_boundary",
    trigger: "auto",
    tokens_before: 1000,
    summary: { excerpt: "This session is being continued…", truncated: false, bytes: 34 },
  });
  assert.deepEqual(act.skipped, {
    orphan_result: 1,
    replayed_from_other_session: 1,
    repeated_row: 1,
  });
  assert.equal(act.ids.get(text), 2);
  // The boundary's logical parent keeps the branch.
  assert.equal(act.parents.get(boundary), before);
});

Deno.test("claudeSubagentFile knows both subagent layouts", () => {
  assert.equal(claudeSubagentFile("-p/5e55/subagents/agent-a1.jsonl"), true);
  assert.equal(claudeSubagentFile("-p/agent-5271c147.jsonl"), true);
  assert.equal(claudeSubagentFile("-p/5e551011-0000-4000-8000-000000000001.jsonl"), false);
});
