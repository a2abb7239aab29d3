import assert from "node:assert/strict";
import { join } from "node:path";
import { createCursorExtractor } from "../../message_search/mod.ts";
import { CursorTranscriptWriter } from "../../../tests/helpers/fixtures/cursor.ts";
import { extractedModel, rowShapes } from "../../../tests/helpers/fixtures/external_model.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { attachActivity } from "./attach.ts";
import { ActivityCache } from "./cache.ts";
import { cursorActivity, cursorSubagentFile } from "./cursor.ts";

const CHAT = "0a1b2c3d-0000-4000-8000-000000000001";

/** Calls ok / failed (is_error) / still running, control lines. */
function transcript(): CursorTranscriptWriter {
  const w = new CursorTranscriptWriter({ chatId: CHAT, cwd: "/w/app" });
  w.user("Why does the navbar flicker?", { context: true });
  w.assistant("Reading it.", {
    tools: [
      { name: "Read", input: { path: "src/Nav.tsx" }, result: "export function Nav() {}" },
      { name: "Shell", input: { command: "npm test" }, result: "1 passed" },
    ],
  });
  w.turnEnded();
  w.user("Fix it");
  w.lines.push(JSON.stringify({
    role: "assistant",
    message: {
      content: [{ type: "text", text: "Editing." }, {
        type: "tool_use",
        id: "toolu_x",
        name: "Edit",
        input: { path: "src/Nav.tsx" },
      }, { type: "tool_use", id: "toolu_y", name: "Shell", input: { command: "npm run lint" } }],
    },
  }));
  w.lines.push(JSON.stringify({
    role: "user",
    message: {
      content: [{
        type: "tool_result",
        tool_use_id: "toolu_x",
        content: "no match",
        is_error: true,
      }],
    },
  }));
  return w;
}

Deno.test("cursorActivity pairs tool_use with tool_result blocks; a .txt transcript is no activity", () => {
  const w = transcript();
  const act = cursorActivity(new TextEncoder().encode(w.text() + "{oops}\n" + '{"role":"us'));
  const calls = act.items.flatMap((i) => (i.kind === "call" ? [i.call] : []));
  assert.deepEqual(calls.map((c) => [c.name, c.status, c.ts_ms]), [
    ["Read", "ok", null],
    ["Shell", "ok", null],
    ["Edit", "error", null],
    ["Shell", "pending", null],
  ]);
  assert.equal(calls[2]!.output.output!.excerpt, "no match");
  assert.equal(act.items.filter((i) => i.kind === "turn").length, 2);
  assert.deepEqual(act.skipped, { malformed_line: 1, torn_tail: 1 });
  const txt = cursorActivity(new TextEncoder().encode(w.legacyText()));
  assert.deepEqual([txt.items.length, txt.skipped], [0, { text_transcript: 1 }]);
  assert.ok(cursorSubagentFile(`projects/w-app/agent-transcripts/${CHAT}/subagents/a.jsonl`));
  assert.ok(!cursorSubagentFile(`projects/w-app/agent-transcripts/${CHAT}/${CHAT}.jsonl`));
});

Deno.test("attachActivity places Cursor calls by line, a sub-agent transcript's flagged", () =>
  withTempDir(async (home) => {
    const root = join(home, ".cursor");
    const w = transcript();
    await w.write(root);
    const sub = new CursorTranscriptWriter({ chatId: CHAT, cwd: "/w/app", subagent: true });
    sub.user("Find the Nav tests");
    sub.assistant("", { tools: [{ name: "Glob", input: { pattern: "*.test.tsx" }, result: "a" }] });
    await sub.writeSubagent(root, CHAT, "explore");
    const m = await extractedModel(createCursorExtractor({ homes: [root] }), `cursor:${CHAT}`);
    const out = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(out.activity?.state, "ok");
    assert.deepEqual(rowShapes(out), [
      "user: Why does the navbar flicker?",
      'assistant: Reading it. [{"path":"src/Nav.tsx"}=ok, npm test=ok]',
      "user: Fix it",
      'assistant: Editing. [{"path":"src/Nav.tsx"}=error, npm run lint=pending]',
      "user(sub): Find the Nav tests",
      'tools(sub) [{"pattern":"*.test.tsx"}=ok]',
    ]);
  }));
