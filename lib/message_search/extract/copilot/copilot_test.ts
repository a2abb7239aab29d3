import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CopilotSessionWriter,
  MemShard,
  NEVER,
  sweepInto,
  tickClock,
  uuidFrom,
} from "../../../../tests/helpers/fixtures/copilot.ts";
import { createCopilotExtractor } from "./copilot.ts";

const NFD = "cafe\u0301 naïve";
const CJK = "漢字のテスト 🚀";

async function withHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "copilot-extract-" });
  try {
    return await fn(join(dir, ".copilot"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function richSession(id = uuidFrom("s1")): CopilotSessionWriter {
  const w = new CopilotSessionWriter({
    sessionId: id,
    cwd: "/home/dev/démo app",
    clock: tickClock(),
  });
  w.noise();
  w.user(`Why does the navbar flicker? ${NFD}`);
  w.skill("frontend");
  w.assistant("The key changes every render.", {
    reasoning: true,
    tools: [{ name: "view", args: { path: "src/Nav.tsx" }, result: `${NEVER} file body` }],
  });
  w.assistant("", {
    tools: [{ name: "bash", args: { command: "npm test" }, result: `${NEVER} ok` }],
  });
  w.subagent(`Search the repo for ${CJK}`, "Found it in src/Nav.tsx.");
  w.compaction();
  w.user(CJK);
  w.assistant(`Fixed ${NFD}.`);
  return w;
}

Deno.test("copilot: prose only — prompts and replies, sub-agent flagged, nothing else", async () => {
  await withHome(async (home) => {
    const w = richSession();
    w.summarize("Fix flaky navbar");
    await w.write(home);
    const ex = createCopilotExtractor({ homes: [home] });
    const shard = new MemShard();
    const o = await sweepInto(ex, shard, `copilot:${w.o.sessionId}`);
    assert.equal(o.kind, "replace");
    assert.deepEqual(shard.view(), w.expected());
    assert.deepEqual(
      shard.records.map((r) => r.subagent),
      w.prose.map((p) => p.subagent),
    );
    for (const r of shard.records) assert.ok(!r.text.includes(NEVER), r.text);
    assert.ok(shard.records.some((r) => r.text.includes("\u0301")), "NFD kept byte-exact");
    if (o.kind === "replace") {
      assert.equal(o.meta.title, "Fix flaky navbar");
      assert.equal(o.meta.project, "/home/dev/démo app");
    }
    const loc = shard.records[0]!.locator;
    assert.equal(loc.kind, "external_record_id");
    if (loc.kind === "external_record_id") {
      assert.equal(loc.record_id, w.prose[0]!.eventId);
      assert.equal(loc.file, `session-state/${w.o.sessionId}/events.jsonl`);
    }
  });
});

Deno.test("copilot: an append continues exactly where a full pass is", async () => {
  await withHome(async (home) => {
    const w = richSession();
    const path = await w.write(home);
    const ex = createCopilotExtractor({ homes: [home] });
    const inc = new MemShard();
    const key = `copilot:${w.o.sessionId}`;
    await sweepInto(ex, inc, key);
    w.user("and the footer?");
    w.assistant("Same cause.", { reasoning: true });
    await Deno.writeTextFile(path, w.text());
    const o = await sweepInto(ex, inc, key);
    assert.equal(o.kind, "append");
    const full = new MemShard();
    await sweepInto(ex, full, key);
    assert.deepEqual(inc.records, full.records);
    assert.deepEqual(inc.state, full.state);
    assert.deepEqual(inc.view(), w.expected());
  });
});

Deno.test("copilot: a rewind rewrite keeps vanished prose superseded, new prose active", async () => {
  await withHome(async (home) => {
    const w = richSession();
    const cut = w.user("try approach A");
    w.assistant("Approach A done.");
    w.user("now B on top");
    const path = await w.write(home);
    // One malformed line that survives the rewrite: it must stay counted once.
    const withBad = (t: string) => t.replace("\n", "\n{bad line\n");
    await Deno.writeTextFile(path, withBad(w.text()));
    const ex = createCopilotExtractor({ homes: [home] });
    const shard = new MemShard();
    const key = `copilot:${w.o.sessionId}`;
    await sweepInto(ex, shard, key);
    assert.equal(w.rewindTo(cut), 5); // user, turn_start, message, turn_end, user
    w.user("try approach C instead");
    w.assistant("Approach C done.");
    await Deno.writeTextFile(path, withBad(w.text())); // The CLI rewrites the file shorter.
    const o = await sweepInto(ex, shard, key);
    assert.equal(o.kind, "append");
    if (o.kind === "append") {
      assert.deepEqual(o.marks.map((m) => m.kind), ["record_ids"]);
      assert.equal(o.records.length, 2, "only the new prose is added");
    }
    assert.deepEqual(shard.view(), w.expected());
    assert.deepEqual(shard.active().map(([, t]) => t).slice(-2), [
      "try approach C instead",
      "Approach C done.",
    ]);
    assert.deepEqual(shard.skipped, { malformed_line: 1 });
  });
});

Deno.test("copilot: a rewind deeper than the window restarts the generation, losing nothing", async () => {
  await withHome(async (home) => {
    const w = new CopilotSessionWriter({
      sessionId: uuidFrom("deep"),
      cwd: "/w",
      clock: tickClock(),
    });
    const first = w.user("first prompt");
    for (let i = 0; i < 80; i++) w.user(`prompt ${i}`);
    const path = await w.write(home);
    const ex = createCopilotExtractor({ homes: [home] });
    const shard = new MemShard();
    const key = `copilot:${w.o.sessionId}`;
    await sweepInto(ex, shard, key);
    w.rewindTo(first);
    w.user("a fresh start");
    await Deno.writeTextFile(path, w.text());
    const o = await sweepInto(ex, shard, key);
    assert.ok(o.kind === "append" && o.marks[0]?.kind === "generation_restore");
    assert.deepEqual(shard.active(), [["user", "a fresh start"]]);
    const superseded = shard.view().filter(([, , a]) => !a).map(([, t]) => t);
    assert.equal(superseded.length, 81, "every vanished prompt kept, superseded");
    // Appends after the restart continue in the new generation.
    w.user("and more");
    await Deno.writeTextFile(path, w.text());
    assert.equal((await sweepInto(ex, shard, key)).kind, "append");
    assert.deepEqual(shard.active(), [["user", "a fresh start"], ["user", "and more"]]);
  });
});

Deno.test("copilot: a torn tail waits for the next sweep and is then indexed once", async () => {
  await withHome(async (home) => {
    const w = richSession();
    const path = await w.write(home);
    const ex = createCopilotExtractor({ homes: [home] });
    const shard = new MemShard();
    const key = `copilot:${w.o.sessionId}`;
    await sweepInto(ex, shard, key);
    const line = w.userLine(`torn ${CJK}`, "t1");
    const bytes = new TextEncoder().encode(line);
    const cut = new TextEncoder().encode(line.split("字")[0]!).length + 1; // Mid-character.
    const f = await Deno.open(path, { append: true });
    await f.write(bytes.subarray(0, cut));
    await sweepInto(ex, shard, key);
    assert.ok(!shard.records.some((r) => r.text.startsWith("torn")));
    await f.write(bytes.subarray(cut));
    f.close();
    await sweepInto(ex, shard, key);
    assert.equal(shard.records.filter((r) => r.text === `torn ${CJK}`).length, 1);
    assert.deepEqual(shard.skipped, {});
  });
});

Deno.test("copilot: hostile lines are counted by reason, valid messages around them kept", async () => {
  await withHome(async (home) => {
    const w = new CopilotSessionWriter({
      sessionId: uuidFrom("hostile"),
      cwd: "/w",
      clock: tickClock(),
    });
    w.user("before");
    const path = await w.write(home);
    const enc = new TextEncoder();
    const bad = [
      enc.encode("{not json\n"),
      new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]),
      enc.encode(`[1,2,3]\n`),
      enc.encode(JSON.stringify({ type: "user.message", id: "x1", data: { content: 42 } }) + "\n"),
      enc.encode(JSON.stringify({ type: "user.message", data: { content: "no id" } }) + "\n"),
      enc.encode(
        JSON.stringify({ type: "user.message", id: "x2", data: { content: "x".repeat(5000) } }) +
          "\n",
      ),
    ];
    const f = await Deno.open(path, { append: true });
    for (const b of bad) await f.write(b);
    await f.write(enc.encode(w.userLine("after", "a1")));
    f.close();
    const ex = createCopilotExtractor({ homes: [home] }, { limits: { maxLineBytes: 4096 } });
    const shard = new MemShard();
    await sweepInto(ex, shard, `copilot:${w.o.sessionId}`);
    assert.deepEqual(shard.active().map(([, t]) => t), ["before", "after"]);
    assert.deepEqual(shard.skipped, {
      // The non-UTF-8 line decodes to U+FFFD and is then not JSON: malformed, like "{x".
      malformed_line: 2,
      malformed_record: 3,
      oversized_line: 1,
    });
  });
});

Deno.test("copilot: discovery — directory layout wins over flat, first home wins, odd names refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "copilot-disc-" });
  try {
    const a = join(dir, "a"), b = join(dir, "b");
    const s1 = new CopilotSessionWriter({
      sessionId: uuidFrom("d1"),
      cwd: "/w",
      clock: tickClock(),
    });
    s1.user("dir copy");
    await s1.write(a);
    const s1flat = new CopilotSessionWriter({
      sessionId: s1.o.sessionId,
      cwd: "/w",
      clock: tickClock(),
    });
    s1flat.user("flat twin");
    await s1flat.write(a, { layout: "flat" });
    const s2 = new CopilotSessionWriter({
      sessionId: uuidFrom("d2"),
      cwd: "/w",
      clock: tickClock(),
    });
    s2.user("flat only");
    await s2.write(a, { layout: "flat" });
    await s1.write(b); // The same id in a later home.
    await Deno.writeTextFile(join(a, "session-state", "-bad name.jsonl"), "");
    await Deno.writeTextFile(join(a, "session-store.db"), "derived");
    await Deno.symlink(
      join(a, "session-state", `${s2.o.sessionId}.jsonl`),
      join(a, "session-state", "link.jsonl"),
    );
    const ex = createCopilotExtractor({ homes: [a, b, join(dir, "missing")] });
    const d = await ex.discover();
    assert.deepEqual(d.units.map((u) => [u.key, u.files[0]!.path.slice(dir.length)]), [
      [`copilot:${s1.o.sessionId}`, `/a/session-state/${s1.o.sessionId}/events.jsonl`],
      [`copilot:${s2.o.sessionId}`, `/a/session-state/${s2.o.sessionId}.jsonl`],
    ]);
    assert.deepEqual(d.skipped, {
      unexpected_name: 1,
      not_a_regular_file: 1,
      duplicate_session_id: 1,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("copilot: a file over one sweep's byte budget is indexed over several sweeps, once", async () => {
  await withHome(async (home) => {
    const w = richSession();
    for (let i = 0; i < 20; i++) w.user(`bulk prompt ${i} ${CJK}`);
    await w.write(home);
    const ex = createCopilotExtractor({ homes: [home] }, { limits: { maxSweepBytes: 2048 } });
    const shard = new MemShard();
    const key = `copilot:${w.o.sessionId}`;
    let sweeps = 0;
    for (; sweeps < 100; sweeps++) {
      const o = await sweepInto(ex, shard, key);
      if (o.kind === "unchanged") break;
    }
    assert.ok(sweeps > 3, `took ${sweeps} sweeps`);
    assert.deepEqual(shard.view(), w.expected());
  });
});
