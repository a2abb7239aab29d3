/**
 * Codex extractor: format rules (lanes, twins, injections, turns, rollback marks, ids,
 * locators, meta, caps) over the fixture home and hand-written rollouts, plus the
 * incremental contract (append == full parse, torn tails, malformed lines, unchanged/gone).
 * Discovery is in codex_discover_test.ts; moves and rewrites in codex_restore_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildCodexFixture } from "../../../../tests/fixtures/codex_fixture.ts";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import { deriveActive, RECORD_TEXT_CAP_BYTES } from "../../record.ts";
import { hash16Of } from "../../locator.ts";
import { CODEX_PARSER_VERSION, createCodexExtractor } from "./codex.ts";
import {
  appendRollout,
  line,
  MemShard,
  meta,
  rollback,
  rolloutPath,
  said,
  sweep,
  THREAD,
  user,
  userItem,
  withTemp,
  writeRollout,
} from "./testing/codex_test_util.ts";
import type { ShardContent } from "../framework/plugin.ts";

/** Full extraction of one hand-written rollout. */
async function extractText(text: string): Promise<ShardContent> {
  return await withTemp(async (home) => {
    await writeRollout(rolloutPath(home), text);
    const shard = new MemShard();
    const o = await sweep(createCodexExtractor({ homes: [home] }), shard);
    assert.equal(o.kind, "replace");
    return o as ShardContent;
  });
}

const texts = (o: ShardContent) => o.records.map((r) => [r.role, r.text]);

Deno.test("the fixture home extracts exactly the expected records, never the mark, ids unique", async () => {
  assert.equal(CODEX_PARSER_VERSION, 1);
  await withTemp(async (dir) => {
    const home = await buildCodexFixture(dir);
    const ex = home.extractor();
    const { units } = await ex.discover();
    const seen: string[] = [];
    const parents: string[] = [];
    for (const unit of units) {
      const shard = new MemShard();
      const o = await ex.extract(unit, null, { now: Date.now() });
      shard.apply(o);
      if (o.kind === "replace" && o.meta.parent_session_id) {
        parents.push(`codex:${o.meta.parent_session_id}`);
      }
      const act = deriveActive(shard.records, shard.marks);
      const got = shard.records.map((r, i) => ({
        role: r.role,
        text: r.text,
        superseded: !act[i],
        subagent: r.subagent,
      }));
      assert.deepEqual(got, home.expected[unit.key] ?? [], unit.key);
      for (const r of shard.records) assert.ok(!r.text.includes(NEVER_INDEX_MARK), r.text);
      if (got.length) seen.push(unit.key);
    }
    assert.deepEqual(seen.sort(), Object.keys(home.expected).sort());
    // The sub-agent thread is its own unit and names its parent, which is a unit too.
    assert.equal(parents.length, 1);
    assert.ok(seen.includes(parents[0]!));
  });
});

Deno.test("user prose is the user_message event only: twins, injections, kind≠plain and developer items are skipped", async () => {
  const o = await extractText(
    meta({ base_instructions: { text: "SECRET base" } }) +
      userItem("<permissions instructions>SECRET</permissions instructions>", "developer") +
      userItem("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nSECRET\n</INSTRUCTIONS>") +
      userItem("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>") +
      user("<environment_context>SECRET</environment_context>", { kind: "environment_context" }) +
      user("SECRET rules", { kind: "user_instructions" }) +
      userItem("Fix the build") + user("Fix the build", { kind: "plain" }) +
      line("event_msg", { type: "agent_reasoning", text: "SECRET thinking" }) +
      line("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "SECRET" }],
      }) +
      line("response_item", {
        type: "function_call",
        name: "exec",
        arguments: "{}",
        call_id: "c1",
      }) +
      line("response_item", { type: "function_call_output", call_id: "c1", output: "SECRET out" }) +
      said(["Done.", "", "Build is green."], "msg_1") +
      userItem("SECRET system", "system") +
      line("event_msg", { type: "agent_message", message: "Done.\nBuild is green." }) +
      line("event_msg", { type: "task_complete", last_agent_message: "Done.\nBuild is green." }) +
      line("compacted", {
        message: "SECRET summary",
        replacement_history: [{ type: "message", role: "user", content: [] }],
      }) +
      user("Thanks") + user("", { images: ["data:image/png;base64,AAAA"] }),
  );
  assert.deepEqual(texts(o), [
    ["user", "Fix the build"],
    ["assistant", "Done.\nBuild is green."],
    ["user", "Thanks"],
  ]);
  assert.deepEqual(o.skipped, {});
});

Deno.test("ids and locators: item id → external_record_id, else L<line> external_line; repeated ids stay unique", async () => {
  const text = meta() + user("Hi") + said("Hello", "msg_a") + said("No id") +
    said("Again", "msg_a");
  const o = await extractText(text);
  const file = "sessions/2026/05/18/rollout-2026-05-18T11-14-03-" + THREAD + ".jsonl";
  assert.deepEqual(o.records.map((r) => r.id), ["L2", "msg_a", "L4", "msg_a@L5"]);
  assert.deepEqual(o.records[0]!.locator, {
    v: 1,
    kind: "external_line",
    file,
    generation: 0,
    line: 2,
    hash: hash16Of("Hi"),
  });
  assert.deepEqual(o.records[1]!.locator, {
    v: 1,
    kind: "external_record_id",
    record_id: "msg_a",
    file,
    hash: hash16Of("Hello"),
  });
  assert.equal(o.records[1]!.item_id, "msg_a");
  assert.equal(o.records[2]!.item_id, undefined);
  assert.ok(o.records.every((r) => r.generation === 0 && !r.subagent && r.source === "codex"));
  const stamps = text.trim().split("\n").map((l) => Date.parse(JSON.parse(l).timestamp));
  assert.deepEqual(o.records.map((r) => r.ts_ms), stamps.slice(1));
});

Deno.test("turns: each user message opens one; assistant records join it; none before the first", async () => {
  const o = await extractText(
    meta() + said("Preamble") + user("A") + said("a1") + said("a2") +
      user("", { images: ["x"] }) + said("img") + user("B") + said("b"),
  );
  assert.deepEqual(o.records.map((r) => [r.text, r.user_turn]), [
    ["Preamble", undefined],
    ["A", 0],
    ["a1", 0],
    ["a2", 0],
    ["img", 1],
    ["B", 2],
    ["b", 2],
  ]);
});

Deno.test("thread_rolled_back becomes turn_count marks that stack over the effective history", async () => {
  const o = await extractText(
    meta() + user("A") + said("a") + user("B") + said("b") + user("C") + said("c") +
      rollback(1) + user("D") + said("d") + rollback(2) + user("E"),
  );
  assert.deepEqual(o.marks, [
    { kind: "turn_count", after_order: 6, num_turns: 1, generation: 0 },
    { kind: "turn_count", after_order: 8, num_turns: 2, generation: 0 },
  ]);
  const act = deriveActive(o.records, o.marks);
  assert.deepEqual(o.records.filter((_, i) => act[i]).map((r) => r.text), ["A", "a", "E"]);
});

Deno.test("a rollback naming an anchor item becomes an item_anchor mark; a bad one is counted", async () => {
  const o = await extractText(
    meta() + user("A") + said("a", "msg_a") + user("B") + said("b", "msg_b") +
      line("event_msg", { type: "thread_rolled_back", num_turns: 1, item_id: "msg_a" }) +
      line("event_msg", { type: "thread_rolled_back", num_turns: 0 }),
  );
  assert.deepEqual(o.marks, [{
    kind: "item_anchor",
    after_order: 4,
    item_id: "msg_a",
    generation: 0,
  }]);
  assert.deepEqual(deriveActive(o.records, o.marks), [true, true, false, false]);
  assert.deepEqual(o.skipped, { bad_rollback: 1 });
});

Deno.test("meta: project and parent from the file's own session_meta, title from the first user prose", async () => {
  const long = "Refactor ".repeat(20) + "now";
  const o = await extractText(
    meta({
      cwd: "/home/dev/child",
      source: { subagent: { thread_spawn: { parent_thread_id: "p-spawn", depth: 1 } } },
    }) +
      // A fork copies the parent's session_meta after its own: it must not win.
      line("session_meta", { id: "p-spawn", cwd: "/home/dev/parent", source: "cli" }) +
      user(long) + said("ok"),
  );
  assert.equal(o.meta.project, "/home/dev/child");
  assert.equal(o.meta.parent_session_id, "p-spawn");
  assert.equal(Array.from(o.meta.title!).length, 100);
  assert.ok(o.meta.title!.startsWith("Refactor Refactor") && o.meta.title!.endsWith("…"));
  const a = await extractText(meta({ parent_thread_id: "p1", forked_from_id: "f1" }) + user("x"));
  assert.equal(a.meta.parent_session_id, "p1");
  const b = await extractText(meta({ forked_from_id: "f1" }) + user("x"));
  assert.equal(b.meta.parent_session_id, "f1");
  const c = await extractText(meta() + said("no user yet"));
  assert.deepEqual([c.meta.title, c.meta.parent_session_id], [null, null]);
});

Deno.test("text over the cap is cut on a character boundary, flagged, and hashed capped", async () => {
  const big = "é".repeat(RECORD_TEXT_CAP_BYTES); // 2 bytes each: twice the cap
  const o = await extractText(meta() + user(big));
  const r = o.records[0]!;
  assert.ok(r.truncated);
  assert.equal(new TextEncoder().encode(r.text).length, RECORD_TEXT_CAP_BYTES);
  assert.equal(r.locator.hash, hash16Of(r.text));
});

Deno.test("Unicode is preserved byte-exact (NFC and NFD, CJK, emoji)", async () => {
  const words = ["caf\u00e9", "cafe\u0301", "漢字", "👩‍💻"];
  const o = await extractText(meta() + words.map((w) => user(w)).join(""));
  assert.deepEqual(o.records.map((r) => r.text), words);
});

Deno.test("malformed lines are counted and skipped; oversized lines counted; extraction goes on", async () => {
  await withTemp(async (home) => {
    const path = rolloutPath(home);
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]);
    await writeRollout(
      path,
      meta() + "{not json\n" + "[1,2]\n" + '{"type":"event_msg","payload":"x"}\n' + "\n" +
        user("x".repeat(5000)) + user("fine"),
    );
    const f = await Deno.open(path, { append: true });
    await f.write(bytes);
    f.close();
    await appendRollout(path, user("after"));
    const shard = new MemShard();
    await sweep(createCodexExtractor({ homes: [home] }, { maxLineBytes: 4096 }), shard);
    assert.deepEqual(shard.view().map(([, t]) => t), ["fine", "after"]);
    assert.deepEqual(shard.skipped, { malformed_line: 3, bad_payload: 1, oversized_line: 1 });
  });
});

Deno.test("a torn tail waits for the next sweep and is indexed once completed; unchanged and gone", async () => {
  await withTemp(async (home) => {
    const path = rolloutPath(home);
    const ex = createCodexExtractor({ homes: [home] });
    await writeRollout(path, meta() + user("one"));
    const shard = new MemShard();
    await sweep(ex, shard);
    const next = user("二つ目 🧩");
    const cut = new TextEncoder().encode(next.split("つ")[0]!).length + 1; // mid-character
    const f = await Deno.open(path, { append: true });
    await f.write(new TextEncoder().encode(next).subarray(0, cut));
    const torn = await sweep(ex, shard);
    assert.ok(torn.kind === "unchanged" || (torn.kind === "append" && torn.records.length === 0));
    await f.write(new TextEncoder().encode(next).subarray(cut));
    f.close();
    const done = await sweep(ex, shard);
    assert.equal(done.kind, "append");
    assert.deepEqual(shard.view().map(([, t]) => t), ["one", "二つ目 🧩"]);
    assert.equal((await sweep(ex, shard)).kind, "unchanged");
    await Deno.remove(path);
    const unit = {
      source: "codex" as const,
      sessionId: THREAD,
      key: `codex:${THREAD}`,
      files: [{ path, role: "rollout" }],
    };
    assert.equal((await ex.extract(unit, shard.prior, { now: Date.now() })).kind, "gone");
  });
});

Deno.test("incremental appends, torn at every chunk boundary, equal a full parse; ids are stable", async () => {
  await withTemp(async (dir) => {
    const fx = await buildCodexFixture(join(dir, "fx"));
    // The richest rollout: twins, tools, a compaction and a rollback.
    const units = (await fx.extractor().discover()).units;
    const richest = units.reduce((a, b) =>
      (fx.expected[b.key]?.length ?? 0) > (fx.expected[a.key]?.length ?? 0) ? b : a
    );
    const bytes = await Deno.readFile(richest.files[0]!.path);
    const home = join(dir, "inc");
    const path = rolloutPath(home);
    await writeRollout(path, new Uint8Array());
    const ex = createCodexExtractor({ homes: [home] });
    const shard = new MemShard();
    for (let at = 0, step = 1; at < bytes.length; at += step, step = (step * 7 + 13) % 997 + 1) {
      await appendBytes(path, bytes.subarray(at, at + step));
      await sweep(ex, shard);
    }
    const full = new MemShard();
    await sweep(ex, full);
    assert.deepEqual(shard.records, full.records);
    assert.deepEqual(shard.marks, full.marks);
    assert.deepEqual(shard.state, full.state);
    const again = new MemShard();
    await sweep(ex, again);
    assert.deepEqual(again.records.map((r) => r.id), full.records.map((r) => r.id));
  });
});

async function appendBytes(path: string, bytes: Uint8Array): Promise<void> {
  const f = await Deno.open(path, { append: true });
  try {
    await f.write(bytes);
  } finally {
    f.close();
  }
}
