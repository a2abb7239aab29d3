import assert from "node:assert/strict";
import { join } from "node:path";
import { createQwenExtractor } from "../../message_search/mod.ts";
import {
  type QwenAgent,
  QwenSessionWriter,
  qwenUuid,
  writeQwenSession,
} from "../../../tests/helpers/fixtures/qwen.ts";
import { extractedModel, rowShapes } from "../../../tests/helpers/fixtures/external_model.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { attachActivity } from "./attach.ts";
import { ActivityCache } from "./cache.ts";
import { qwenActivity } from "./qwen.ts";

const call = (id: string, name: string, args: unknown) => ({
  functionCall: { id, name, args },
});

/** Calls ok / failed / on a rewound branch / by a sub-agent / still running. */
function session(): QwenSessionWriter {
  let t = Date.parse("2026-05-18T10:00:00Z");
  const w = new QwenSessionWriter({
    sessionId: qwenUuid("act"),
    cwd: "/w",
    clock: () => (t += 1000),
  });
  w.user("Why is start-up slow?");
  w.assistant([[{ text: "Looking at init." }], [
    call("c1", "run_shell_command", { command: "time node ." }),
  ]]);
  w.toolResult("c1", "run_shell_command", "real 2.1s\nExit Code: 0");
  w.assistant([[
    { text: "Reading the loader." },
    call("c2", "read_file", { absolute_path: "/w/x" }),
  ]]);
  w.record("tool_result", {
    message: {
      role: "user",
      parts: [{
        functionResponse: { id: "c2", name: "read_file", response: { error: "File not found" } },
      }],
    },
    toolCallResult: { callId: "c2", status: "error", resultDisplay: "File not found" },
  });
  const before = w.leaf;
  w.user("Delete the plugin cache");
  w.assistant([[call("c3", "run_shell_command", { command: "rm -rf .cache" })]]);
  w.toolResult("c3", "run_shell_command", "Exit Code: 0");
  w.rewind(before, 3);
  w.user("Lazy-load the plugins instead");
  const agent: QwenAgent = { agentId: "explore-1", agentName: "Explore", leaf: null };
  w.user("Find the plugin imports", { agent });
  w.assistant([[{ text: "Searching." }, call("s1", "grep", { pattern: "import" })]], { agent });
  w.toolResult("s1", "grep", "src/plugins.ts:1", { agent });
  w.assistant([[{ text: "Editing." }, call("c4", "edit", { file_path: "/w/p.ts" })]]);
  w.system("chat_compression", {
    info: { originalTokenCount: 90000, newTokenCount: 12000, compressionStatus: 1 },
    compressedHistory: [{
      role: "user",
      parts: [{ text: "<state_snapshot>so far</state_snapshot>" }],
    }],
  });
  return w;
}

Deno.test("qwenActivity pairs functionCall parts with tool_result records and reads rewinds and compression", () => {
  const w = session();
  w.lines.splice(2, 0, "[1,2]");
  const act = qwenActivity(new TextEncoder().encode(w.text() + '{"uuid":"x'));
  const calls = act.items.flatMap((i) => (i.kind === "call" ? [i.call] : []));
  assert.deepEqual(calls.map((c) => [c.name, c.input, c.status, c.exit_code]), [
    ["run_shell_command", "time node .", "ok", 0],
    ["read_file", '{"absolute_path":"/w/x"}', "error", undefined],
    ["run_shell_command", "rm -rf .cache", "ok", 0],
    ["grep", '{"pattern":"import"}', "ok", undefined],
    ["edit", '{"file_path":"/w/p.ts"}', "pending", undefined],
  ]);
  assert.equal(calls[1]!.output.error!.excerpt, "File not found");
  const snaps = act.items.flatMap((i) => (i.kind === "snapshot" ? [i.detail] : []));
  assert.deepEqual(snaps.map((d) => [d.kind, d.truncated_count ?? d.tokens_before]), [
    ["rewind", 3],
    ["chat_compression", 90000],
  ]);
  assert.equal(
    (snaps[1]!.summary as { excerpt: string }).excerpt,
    "<state_snapshot>so far</state_snapshot>",
  );
  assert.deepEqual(act.skipped, { malformed_line: 1, torn_tail: 1 });
});

Deno.test("attachActivity places Qwen calls on their turns: rewound branch superseded, sidechain flagged", () =>
  withTempDir(async (home) => {
    const base = join(home, ".qwen");
    const w = session();
    await writeQwenSession(base, "/w", w);
    const m = await extractedModel(
      createQwenExtractor({ runtimeDirs: [base] }),
      `qwen:${w.sessionId}`,
    );
    const out = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(out.activity?.state, "ok");
    assert.deepEqual(rowShapes(out), [
      "user: Why is start-up slow?",
      "assistant: Looking at init. [time node .=ok]",
      'assistant: Reading the loader. [{"absolute_path":"/w/x"}=error]',
      "user(old): Delete the plugin cache",
      "tools(old) [rm -rf .cache=ok]",
      "marker rewind",
      "user: Lazy-load the plugins instead",
      "user(sub): Find the plugin imports",
      'assistant(sub): Searching. [{"pattern":"import"}=ok]',
      'assistant: Editing. [{"file_path":"/w/p.ts"}=pending]',
      "marker chat_compression",
    ]);
  }));
