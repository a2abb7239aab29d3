import assert from "node:assert/strict";
import { join } from "node:path";
import { createDroidExtractor } from "../../message_search/mod.ts";
import { DroidSessionWriter } from "../../../tests/helpers/fixtures/droid.ts";
import { uuidFrom } from "../../../tests/helpers/fixtures/copilot.ts";
import { extractedModel, rowShapes } from "../../../tests/helpers/fixtures/external_model.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import { attachActivity } from "./attach.ts";
import { ActivityCache } from "./cache.ts";
import { droidActivity } from "./droid.ts";

const SID = uuidFrom("droid:act");

/** Calls ok / failed / still running (SDK `toolUseId` spelling too), a compaction. */
function session(): DroidSessionWriter {
  let t = Date.parse("2026-05-18T11:00:00Z");
  const w = new DroidSessionWriter({ sessionId: SID, cwd: "/w/api", clock: () => (t += 1000) });
  w.user("The auth test fails once in ten runs.");
  w.assistant("Let me rerun it.", {
    thinking: true,
    tools: [{ name: "Execute", input: { command: "npm test" }, result: "2 of 20 failed" }],
  });
  w.state();
  w.user("Look at the clock mock");
  w.body.push({
    type: "message",
    id: "m-fail",
    timestamp: "2026-05-18T11:05:00.000Z",
    message: {
      role: "assistant",
      content: [{ type: "text", text: "Reading it." }, {
        type: "tool_use",
        id: "t1",
        name: "Read",
        input: { file_path: "clock.ts" },
      }, { type: "tool_use", id: "t2", name: "Execute", input: { command: "npm test -- clock" } }],
    },
  });
  w.body.push({
    type: "message",
    id: "m-res",
    timestamp: "2026-05-18T11:05:01.000Z",
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        toolUseId: "t1",
        content: [{ type: "text", text: "ENOENT" }],
        is_error: true,
      }],
    },
  });
  return w;
}

Deno.test("droidActivity pairs tool_use with tool_result (both id spellings) and reads compaction_state", () => {
  const w = session();
  const act = droidActivity(new TextEncoder().encode(w.text() + "{bad\n" + '{"type":"mes'));
  const calls = act.items.flatMap((i) => (i.kind === "call" ? [i.call] : []));
  assert.deepEqual(calls.map((c) => [c.name, c.status, c.output.output?.excerpt]), [
    ["Execute", "ok", "2 of 20 failed"],
    ["Read", "error", "ENOENT"],
    ["Execute", "pending", undefined],
  ]);
  const snaps = act.items.flatMap((i) => (i.kind === "snapshot" ? [i.detail] : []));
  assert.deepEqual(snaps.map((d) => [d.kind, d.removed_count, d.summary_kind]), [
    ["compaction_state", 6, "auto"],
  ]);
  assert.equal(act.items.filter((i) => i.kind === "turn").length, 2);
  assert.equal(act.ids.get("m-fail"), w.body.findIndex((l) => l.id === "m-fail") + 2);
  assert.deepEqual(act.skipped, { malformed_line: 1, torn_tail: 1 });
});

Deno.test("attachActivity places Droid calls under their messages; a sub-agent session's are flagged", () =>
  withTempDir(async (home) => {
    const factory = join(home, ".factory");
    const w = session();
    await w.write(factory);
    const sub = new DroidSessionWriter({
      sessionId: uuidFrom("droid:sub"),
      cwd: "/w/api",
      clock: () => Date.parse("2026-05-18T11:06:00Z"),
      calling: { sessionId: SID, toolUseId: "t9" },
    });
    sub.user("# Task Tool Invocation\nFind the clock mock", { reminder: false });
    sub.assistant("Found.", {
      tools: [{ name: "Grep", input: { pattern: "clock" }, result: "x" }],
    });
    await sub.write(factory);
    const m = await extractedModel(createDroidExtractor({ homes: [factory] }), `droid:${SID}`);
    const out = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(out.activity?.state, "ok");
    assert.deepEqual(rowShapes(out), [
      "user: The auth test fails once in ten runs.",
      'assistant: Let me rerun it. [{"command":"npm test"}=ok]',
      "marker compaction_state",
      "user: Look at the clock mock",
      'assistant: Reading it. [{"file_path":"clock.ts"}=error, {"command":"npm test -- clock"}=pending]',
      "user(sub): # Task Tool Invocation\nFind the clock mock",
      'assistant(sub): Found. [{"pattern":"clock"}=ok]',
    ]);
  }));
