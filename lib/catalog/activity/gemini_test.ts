import assert from "node:assert/strict";
import { join } from "node:path";
import { createGeminiExtractor } from "../../message_search/mod.ts";
import {
  geminiProjectDir,
  GeminiSessionWriter,
  geminiUuid,
  legacyJsonOf,
  writeGeminiSession,
} from "../../../tests/helpers/fixtures/gemini.ts";
import { extractedModel } from "../../../tests/helpers/fixtures/external_model.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { attachActivity } from "./attach.ts";
import { ActivityCache } from "./cache.ts";
import { geminiActivity, geminiSubagentFile } from "./gemini.ts";

/** A session with an ok shell call, a failed call, a rewound call and a call still running. */
function session(): { w: GeminiSessionWriter; u1: string; g: string } {
  let t = Date.parse("2026-05-18T09:00:00Z");
  const w = new GeminiSessionWriter({
    sessionId: geminiUuid("act"),
    projectRoot: "/w/app",
    clock: () => (t += 1000),
  });
  const u1 = w.user("Run the tests please");
  w.toolRound("run_shell_command", { command: "make test" }, "3 passed\nExit Code: 0");
  const g = w.gemini("Now reading the config.", {
    toolCalls: [{ id: "read_file-1", name: "read_file", args: { path: "a" }, status: "executing" }],
  });
  // The same message re-appended once the call failed (Gemini merges toolCalls by id).
  w.record({
    id: g,
    timestamp: "2026-05-18T09:01:00.000Z",
    type: "gemini",
    content: "Now reading the config.",
    toolCalls: [{
      id: "read_file-1",
      name: "read_file",
      args: { path: "a" },
      status: "error",
      result: [{
        functionResponse: {
          id: "read_file-1",
          name: "read_file",
          response: { error: "ENOENT: a" },
        },
      }],
    }],
  });
  const u2 = w.user("Delete the build dir");
  w.toolRound("run_shell_command", { command: "rm -rf build" }, "Exit Code: 1");
  w.rewindTo(u2);
  w.user("Only clean the cache instead");
  w.gemini("Cleaning.", {
    toolCalls: [{
      id: "shell-9",
      name: "run_shell_command",
      args: { command: "make clean" },
      status: "executing",
    }],
  });
  return { w, u1, g };
}

Deno.test("geminiActivity keeps one call per id with its last value, reads results, rewinds and skips", () => {
  const { w, u1, g } = session();
  w.lines.splice(3, 0, "{not json");
  const bytes = new TextEncoder().encode(w.text() + '{"id":"torn');
  const act = geminiActivity(bytes);
  const calls = act.items.flatMap((i) => (i.kind === "call" ? [{ ...i.call, pos: i.pos }] : []));
  assert.deepEqual(calls.map((c) => [c.name, c.input, c.status, c.exit_code, c.pos.part]), [
    ["run_shell_command", "make test", "ok", 0, 1],
    ["read_file", '{"path":"a"}', "error", undefined, 1],
    ["run_shell_command", "rm -rf build", "error", 1, 1],
    ["run_shell_command", "make clean", "pending", undefined, 1],
  ]);
  assert.equal(calls[0]!.output.output!.excerpt, "3 passed\nExit Code: 0");
  assert.equal(calls[1]!.output.error!.excerpt, "ENOENT: a");
  // The failed call sits on the line where its message first appeared, not the re-append.
  assert.equal(calls[1]!.pos.line, act.ids.get(g));
  const snaps = act.items.filter((i) => i.kind === "snapshot");
  assert.equal(snaps.length, 1);
  assert.equal(snaps[0]!.kind === "snapshot" && snaps[0]!.detail.kind, "rewind");
  // Prompts are turns; function-response user records are not.
  assert.equal(act.items.filter((i) => i.kind === "turn").length, 3);
  assert.equal(act.ids.get(u1), 2);
  assert.deepEqual(act.skipped, { malformed_line: 1, torn_tail: 1 });
  // Items are in source order (the join walks them with the records).
  const pos = act.items.map((i) => i.pos.line * 1000 + i.pos.part);
  assert.deepEqual(pos, [...pos].sort((a, b) => a - b));
});

Deno.test("geminiActivity reads a legacy whole-file .json on the lines of its message ids", () => {
  const { w } = session();
  const text = legacyJsonOf(w);
  const act = geminiActivity(new TextEncoder().encode(text));
  const lines = text.split("\n");
  for (const [id, line] of act.ids) assert.equal(lines[line - 1], `      "id": "${id}",`);
  // Legacy files hold the replayed list: the rewound round is gone, the rest is there.
  const calls = act.items.flatMap((i) => (i.kind === "call" ? [i.call] : []));
  assert.deepEqual(calls.map((c) => [c.input, c.status]), [
    ["make test", "ok"],
    ['{"path":"a"}', "error"],
    ["make clean", "pending"],
  ]);
  assert.deepEqual(geminiActivity(new TextEncoder().encode('{\n  "a": ')).skipped, {
    malformed_file: 1,
  });
  assert.ok(geminiSubagentFile("tmp/app/chats/7c0e/investigator.jsonl"));
  assert.ok(!geminiSubagentFile("tmp/app/chats/session-2026-05-18T09-00-7c0e.jsonl"));
});

Deno.test("attachActivity places Gemini calls under their turns; a rewound call is superseded", () =>
  withTempDir(async (home) => {
    const gemini = join(home, ".gemini");
    const { w } = session();
    await writeGeminiSession(await geminiProjectDir(gemini, "/w/app"), w);
    const m = await extractedModel(
      createGeminiExtractor({ geminiDirs: [gemini] }),
      `gemini:${w.sessionId}`,
    );
    const out = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(out.activity?.state, "ok");
    const shape = out.rows.map((r) =>
      r.kind === "record"
        ? `${r.rec.role}${r.active ? "" : "(old)"}: ${r.rec.text}` +
          (r.tools ? ` [${r.tools.map((t) => `${t.input}=${t.status}`).join(", ")}]` : "")
        : r.kind === "tool_calls"
        ? `tools${r.superseded ? "(old)" : ""} [${r.tools.map((t) => `${t.input}=${t.status}`)}]`
        : r.kind === "context_snapshot"
        ? `marker ${String(r.detail.kind)}`
        : r.kind
    );
    assert.deepEqual(shape, [
      "user: Run the tests please",
      "tools [make test=ok]",
      'assistant: Now reading the config. [{"path":"a"}=error]',
      "user(old): Delete the build dir",
      "tools(old) [rm -rf build=error]",
      "marker rewind",
      "user: Only clean the cache instead",
      "assistant: Cleaning. [make clean=pending]",
    ]);
  }));
