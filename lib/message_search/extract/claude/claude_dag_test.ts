/**
 * Row classification and the /rewind rules on hand-built transcripts: real rewinds are
 * marked, recording artifacts that merely look like forks are not.
 */
import assert from "node:assert/strict";
import { ccUuid, ClaudeWriter, msgId, toolId } from "../../../../tests/fixtures/claude_fixture.ts";
import { isHarnessText, parseRow } from "./claude_rows.ts";
import { extractAll, seen, withProjects, writeLines } from "./testing/claude_test_util.ts";

const SID = ccUuid("dag-test-session");

function writer(sessionId = SID): ClaudeWriter {
  let t = Date.now() - 3_600_000;
  return new ClaudeWriter({ sessionId, cwd: "/w", version: "2.1.150", clock: () => (t += 1000) });
}

/** Writes the transcript as the session's main file and returns [text, active] pairs. */
async function run(w: ClaudeWriter, extra: string[] = []): Promise<[string, boolean][]> {
  return await withProjects(async (projects) => {
    await writeLines(projects, `-w/${w.o.sessionId}.jsonl`, [...w.lines, ...extra]);
    const c = (await extractAll(projects)).get(`claude-code:${w.o.sessionId}`)!;
    return seen(c.records, c.marks).map((r) => [r.text, r.active]);
  });
}

const text = (t: string) => [{ type: "text", text: t }];

Deno.test("parseRow: prose rules for user and assistant rows", () => {
  const row = (o: Record<string, unknown>) =>
    parseRow(JSON.stringify({ uuid: "u", timestamp: "2026-05-01T10:00:00.000Z", ...o }))!;
  const user = (content: unknown, extra = {}) =>
    row({ type: "user", message: { role: "user", content }, ...extra });
  assert.equal(user("hello").prose, "hello");
  assert.equal(user("hello").human, true);
  assert.equal(user("hi", { isMeta: true }).prose, null);
  assert.equal(user("sum", { isCompactSummary: true }).prose, null);
  assert.equal(user([{ type: "tool_result", tool_use_id: "t", content: "out" }]).prose, null);
  const mixed = user([{ type: "tool_result", tool_use_id: "t", content: "x" }, ...text("also")]);
  assert.equal(mixed.prose, "also");
  assert.equal(mixed.human, false, "tool-result stitching never starts a rewind");
  assert.equal(user([...text("a"), ...text("<system-reminder>x</system-reminder>")]).prose, "a");
  assert.equal(user("<command-name>/clear</command-name>").prose, null);
  assert.equal(user("<command-name>/clear</command-name>").human, true);
  assert.equal(user("[Request interrupted by user for tool use]").prose, null);
  assert.equal(user("[Request interrupted by user for tool use]").human, false);
  const asst = (content: unknown, extra = {}) =>
    row({ type: "assistant", message: { id: "m", role: "assistant", content }, ...extra });
  assert.equal(
    asst([{ type: "thinking", thinking: "t" }, ...text("one"), ...text("two")]).prose,
    "one\n\ntwo",
  );
  assert.equal(asst(text("API Error"), { isApiErrorMessage: true }).prose, null);
  assert.equal(asst([{ type: "tool_use", id: "t", name: "Bash", input: {} }]).prose, null);
  const noTs = parseRow(JSON.stringify({ type: "user", uuid: "u", message: { content: "x" } }))!;
  assert.equal(noTs.prose, null);
  assert.equal(noTs.defect, "bad_timestamp");
  assert.equal(parseRow("[1,2]"), null);
  assert.equal(parseRow('{"no":"type"}'), null);
  assert.equal(parseRow("{oops"), null);
  const b = parseRow(JSON.stringify({
    type: "system",
    subtype: "compact_boundary",
    uuid: "b",
    parentUuid: null,
    logicalParentUuid: "a",
  }))!;
  assert.equal(b.parent, "a");
  assert.equal(b.explicitRoot, false);
  for (
    const t of [
      "<local-command-stdout>x",
      "  <bash-stdout>x",
      "Base directory for this skill: /x",
      "<task-notification>done",
    ]
  ) assert.ok(isHarnessText(t), t);
  assert.ok(!isHarnessText("please run <bash-input> later"));
});

Deno.test("a real rewind supersedes the abandoned branch only", async () => {
  const w = writer();
  w.user("first question", {}, null);
  const a1 = w.assistant(text("first answer"), msgId("1"));
  w.user("abandoned follow-up");
  w.assistant(text("abandoned reply"), msgId("2"));
  w.user("rewritten follow-up", {}, a1);
  w.assistant(text("new reply"), msgId("3"));
  assert.deepEqual(await run(w), [
    ["first question", true],
    ["first answer", true],
    ["abandoned follow-up", false],
    ["abandoned reply", false],
    ["rewritten follow-up", true],
    ["new reply", true],
  ]);
});

Deno.test("a rewind to the first prompt (a new root) supersedes the old root's branch", async () => {
  const w = writer();
  w.user("old first prompt", {}, null);
  w.assistant(text("old reply"), msgId("1"));
  w.user("new first prompt", {}, null);
  w.assistant(text("new reply"), msgId("2"));
  assert.deepEqual(await run(w), [
    ["old first prompt", false],
    ["old reply", false],
    ["new first prompt", true],
    ["new reply", true],
  ]);
});

Deno.test("a last-prompt pointing back at the old branch makes the newer branch the abandoned one", async () => {
  const w = writer();
  w.user("q", {}, null);
  const a1 = w.assistant(text("a"), msgId("1"));
  w.user("old branch");
  const oldTip = w.assistant(text("old reply"), msgId("2"));
  w.user("new branch", {}, a1);
  w.assistant(text("new reply"), msgId("3"));
  w.meta({ type: "last-prompt", leafUuid: oldTip, sessionId: SID });
  assert.deepEqual(await run(w), [
    ["q", true],
    ["a", true],
    ["old branch", true],
    ["old reply", true],
    ["new branch", false],
    ["new reply", false],
  ]);
});

Deno.test("recording artifacts are not forks: split siblings, stitching, side branches, queued prompts", async () => {
  const w = writer();
  const u1 = w.user("run both tools", {}, null);
  const m = msgId("split");
  w.assistant(text("Running them."), m, u1); // sibling split sharing message.id
  const ta = toolId("a");
  const tb = toolId("b");
  const a2 = w.assistant([{ type: "tool_use", id: ta, name: "Bash", input: {} }], m, u1);
  const a3 = w.assistant([{ type: "tool_use", id: tb, name: "Bash", input: {} }], m, a2);
  w.assistant(text("Interim note on the first tool."), msgId("side"), a2);
  w.user([{ type: "tool_result", tool_use_id: ta, content: "A" }], {}, a2); // stitched to a2
  w.user([{ type: "tool_result", tool_use_id: tb, content: "B" }], {}, a3);
  const a4 = w.assistant(text("Both done."), msgId("done"));
  w.system("stop_hook_summary", { hookCount: 0 }, a4);
  w.other("attachment", { attachment: { type: "todo" } }, a4);
  w.meta({ type: "queue-operation", operation: "enqueue", sessionId: SID, content: "queued one" });
  w.user("next prompt", {}, a4); // re-parents onto a4 past its side rows: not a rewind
  const a5 = w.assistant(text("ok"), msgId("ok"));
  w.user("queued one", {}, a4); // the queued prompt's echo lands on an earlier row
  w.user("after the queue", {}, a5);
  const got = await run(w);
  assert.ok(got.every(([, active]) => active), JSON.stringify(got));
  assert.equal(got.length, 8);
});

Deno.test("compaction: boundaries, summaries and replayed copies never supersede or duplicate", async () => {
  const w = writer();
  w.user("start", {}, null);
  w.assistant(text("started"), msgId("0"));
  w.user("second");
  const a1 = w.assistant(text("second done"), msgId("1"));
  const start = w.lines.length - 4;
  const copies = w.lines.slice(start); // #92089: copies keep uuid, parentUuid and timestamp
  w.system(
    "compact_boundary",
    { logicalParentUuid: a1, compactMetadata: { trigger: "auto" } },
    null,
  );
  w.user("This session is being continued…", { isCompactSummary: true });
  w.user("after first compaction");
  w.assistant(text("reply after compaction"), msgId("2"));
  w.lines.push(...copies);
  const hook = w.system("stop_hook_summary", { hookCount: 0 }, a1);
  w.system(
    "compact_boundary",
    { logicalParentUuid: hook, compactMetadata: { trigger: "manual" } },
    null,
  );
  w.user("summary 2", { isCompactSummary: true });
  w.user("after second compaction");
  // An old-style boundary without logicalParentUuid: everything before stays active.
  w.system("compact_boundary", { compactMetadata: { trigger: "auto" } }, null);
  w.user("summary 3", { isCompactSummary: true });
  w.user("after third compaction");
  const got = await run(w);
  assert.deepEqual(got.map(([t]) => t), [
    "start",
    "started",
    "second",
    "second done",
    "after first compaction",
    "reply after compaction",
    "after second compaction",
    "after third compaction",
  ]);
  assert.ok(got.every(([, a]) => a), JSON.stringify(got));
});

Deno.test("sidechain rows inside a main file are subagent records and never marked", async () => {
  await withProjects(async (projects) => {
    const w = writer();
    w.user("q", {}, null);
    const a1 = w.assistant(text("delegating"), msgId("1"));
    let t = Date.now() - 1000;
    const side = new ClaudeWriter({
      sessionId: SID,
      cwd: "/w",
      version: "1.0.80",
      clock: () => (t += 10),
      agentId: "sc1",
    });
    side.user("sidechain prompt", {}, null);
    side.assistant(text("sidechain report"), msgId("s"));
    w.lines.push(...side.lines);
    w.user("rewound", {}, a1); // a rewind right after: the sidechain is not its branch
    await writeLines(projects, `-w/${SID}.jsonl`, w.lines);
    const c = (await extractAll(projects)).get(`claude-code:${SID}`)!;
    assert.deepEqual(
      seen(c.records, c.marks).map((r) => [r.text, r.active, r.subagent]),
      [
        ["q", true, false],
        ["delegating", true, false],
        ["sidechain prompt", true, true],
        ["sidechain report", true, true],
        ["rewound", true, false],
      ],
    );
  });
});
