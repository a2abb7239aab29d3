import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  MemShard,
  sweepInto,
  tickClock,
  uuidFrom,
} from "../../../../tests/helpers/fixtures/copilot.ts";
import { DroidSessionWriter, NEVER } from "../../../../tests/helpers/fixtures/droid.ts";
import { createDroidExtractor } from "./droid.ts";

const NFD = "cafe\u0301 naïve";
const CJK = "漢字のテスト 🚀";
const S1 = uuidFrom("droid-s1");

async function withHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "droid-extract-" });
  try {
    return await fn(join(dir, ".factory"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function rich(id = S1): DroidSessionWriter {
  const w = new DroidSessionWriter({ sessionId: id, cwd: "/home/dev/my.api", clock: tickClock() });
  w.user(`The auth test fails once in ten runs. ${NFD}`);
  w.assistant("Let me rerun it.", {
    thinking: true,
    redacted: true,
    tools: [{ name: "Execute", input: { command: "npm test" }, result: `${NEVER} 2 of 20 failed` }],
  });
  w.state();
  w.user(CJK, { reminder: true });
  w.assistant(`Fixed ${NFD}.`);
  return w;
}

Deno.test("droid: prose only — reminders stripped, thinking/tools/todos/summaries never", async () => {
  await withHome(async (home) => {
    const w = rich();
    await w.write(home);
    const ex = createDroidExtractor({ homes: [home] });
    const shard = new MemShard();
    const o = await sweepInto(ex, shard, `droid:${S1}`);
    assert.equal(o.kind, "replace");
    assert.deepEqual(shard.active(), w.expected());
    assert.equal(shard.view().every(([, , a]) => a), true);
    for (const r of shard.records) {
      assert.ok(!r.text.includes(NEVER) && !r.text.includes("<system"), r.text);
    }
    if (o.kind === "replace") {
      assert.equal(o.meta.project, "/home/dev/my.api");
      assert.equal(o.meta.title, "New session");
    }
    assert.deepEqual(shard.records.map((r) => r.id), w.prose.map((p) => p.id));
  });
});

Deno.test("droid: a rewritten line 1 (retitle) re-reads as a replace with the same records", async () => {
  await withHome(async (home) => {
    const w = rich();
    const path = await w.write(home);
    const ex = createDroidExtractor({ homes: [home] });
    const shard = new MemShard();
    const key = `droid:${S1}`;
    await sweepInto(ex, shard, key);
    const before = shard.records.map((r) => r.id);
    w.retitle("Fix flaky auth test — 修正");
    w.user("one more thing");
    await Deno.writeTextFile(path, w.text());
    const o = await sweepInto(ex, shard, key);
    assert.equal(o.kind, "replace");
    if (o.kind === "replace") assert.equal(o.meta.title, "Fix flaky auth test — 修正");
    assert.deepEqual(shard.records.map((r) => r.id), [...before, w.prose.at(-1)!.id]);
    assert.deepEqual(shard.active(), w.expected());
  });
});

Deno.test("droid: append == full pass; a sub-agent session joins its caller, flagged", async () => {
  await withHome(async (home) => {
    const w = rich();
    const path = await w.write(home);
    const ex = createDroidExtractor({ homes: [home] });
    const inc = new MemShard();
    const key = `droid:${S1}`;
    await sweepInto(ex, inc, key);
    const sub = new DroidSessionWriter({
      sessionId: uuidFrom("droid-sub"),
      cwd: "/home/dev/my.api",
      clock: tickClock(),
      calling: { sessionId: S1, toolUseId: "toolu_task" },
    });
    sub.user("# Task Tool Invocation\nFind the flaky assertion");
    sub.assistant("auth.test.ts line 42.");
    await sub.write(home);
    w.user("and the footer?");
    await Deno.writeTextFile(path, w.text());
    assert.equal((await sweepInto(ex, inc, key)).kind, "append");
    const full = new MemShard();
    await sweepInto(ex, full, key);
    assert.deepEqual(
      inc.records.map((r) => [r.id, r.text, r.subagent]).sort(),
      full.records.map((r) => [r.id, r.text, r.subagent]).sort(),
    );
    assert.deepEqual(full.records.filter((r) => r.subagent).map((r) => r.text), [
      "# Task Tool Invocation\nFind the flaky assertion",
      "auth.test.ts line 42.",
    ]);
    assert.deepEqual((await ex.discover()).units.map((u) => u.key), [key]);
  });
});

Deno.test("droid: a fork is its own session; legacy root files are read", async () => {
  await withHome(async (home) => {
    const w = rich();
    await w.write(home);
    const fork = w.fork(uuidFrom("droid-fork"), w.prose[1]!.id);
    fork.user("a different direction");
    await fork.write(home);
    const legacy = new DroidSessionWriter({
      sessionId: uuidFrom("droid-legacy"),
      cwd: "/old",
      clock: tickClock(),
    });
    legacy.user("legacy prompt");
    await legacy.write(home, { legacy: true });
    const ex = createDroidExtractor({ homes: [home] });
    const keys = (await ex.discover()).units.map((u) => u.key).sort();
    assert.deepEqual(
      keys,
      [`droid:${fork.o.sessionId}`, `droid:${legacy.o.sessionId}`, `droid:${S1}`].sort(),
    );
    const shard = new MemShard();
    const o = await sweepInto(ex, shard, `droid:${fork.o.sessionId}`);
    assert.deepEqual(shard.active(), fork.expected());
    if (o.kind === "replace") assert.equal(o.meta.parent_session_id, S1);
  });
});

Deno.test("droid: torn tail waits; hostile lines counted, valid ones kept", async () => {
  await withHome(async (home) => {
    const w = rich();
    const path = await w.write(home, { torn: `torn ${CJK}` });
    const ex = createDroidExtractor({ homes: [home] }, { limits: { maxLineBytes: 4096 } });
    const shard = new MemShard();
    const key = `droid:${S1}`;
    await sweepInto(ex, shard, key);
    assert.ok(!shard.records.some((r) => r.text.startsWith("torn")));
    const whole = w.userLine(`torn ${CJK}`, "torn");
    await Deno.writeTextFile(path, whole.slice(Math.floor(whole.length / 2)), { append: true });
    await sweepInto(ex, shard, key);
    assert.equal(shard.records.filter((r) => r.text === `torn ${CJK}`).length, 1);
    const enc = new TextEncoder();
    const f = await Deno.open(path, { append: true });
    await f.write(enc.encode("{oops\n"));
    await f.write(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
    await f.write(
      enc.encode(
        `${JSON.stringify({ type: "message", id: "m9", message: { role: "user", content: 5 } })}\n`,
      ),
    );
    await f.write(
      enc.encode(
        `${JSON.stringify({ type: "message", message: { role: "user", content: "no id" } })}\n`,
      ),
    );
    await f.write(enc.encode(w.userLine("x".repeat(5000), "big")));
    await f.write(enc.encode(w.userLine("after garbage", "after")));
    await f.write(enc.encode(w.userLine("after garbage", "after"))); // A replayed line.
    f.close();
    await sweepInto(ex, shard, key);
    assert.deepEqual(shard.active().filter(([, t]) => t === "after garbage").length, 1);
    assert.deepEqual(shard.skipped, {
      // The non-UTF-8 line decodes to U+FFFD and is then not JSON: malformed.
      malformed_line: 2,
      malformed_record: 2,
      oversized_line: 1,
      duplicate_uuid: 1,
    });
  });
});

Deno.test("droid property: random sessions read in two sweeps yield every prose message once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "droid-prop-" });
  let run = 0;
  const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((s) =>
    s.trim() !== "" && !s.includes("<")
  );
  const op = fc.oneof(
    fc.record({ k: fc.constant("u" as const), t: text, rem: fc.boolean() }),
    fc.record({ k: fc.constant("a" as const), t: text, think: fc.boolean(), tool: fc.boolean() }),
    fc.record({ k: fc.constant("s" as const) }),
  );
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 20 }), fc.nat(), async (ops, seed) => {
        const home = join(dir, `h${run++}`);
        const w = new DroidSessionWriter({ sessionId: S1, cwd: "/p", clock: tickClock() });
        for (const o of ops) {
          if (o.k === "u") w.user(o.t, { reminder: o.rem });
          else if (o.k === "a") {
            w.assistant(o.t, {
              thinking: o.think,
              tools: o.tool ? [{ name: "Read", input: {}, result: NEVER }] : [],
            });
          } else w.state();
        }
        const lines = w.text().split("\n").slice(0, -1);
        const cut = seed % (lines.length + 1);
        const path = await w.write(home);
        await Deno.writeTextFile(path, lines.slice(0, cut).map((l) => l + "\n").join(""));
        const ex = createDroidExtractor({ homes: [home] });
        const shard = new MemShard();
        await sweepInto(ex, shard, `droid:${S1}`);
        await Deno.writeTextFile(path, w.text());
        await sweepInto(ex, shard, `droid:${S1}`);
        assert.deepEqual(shard.view(), w.expected().map(([r, t]) => [r, t, true]));
        assert.deepEqual(shard.records.map((r) => r.id), w.prose.map((p) => p.id));
        assert.deepEqual(shard.skipped, {});
      }),
      { numRuns: 40 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("droid: discovery refuses links, counts odd names and repeated ids, never fails on them", async () => {
  await withHome(async (home) => {
    const w = rich();
    const path = await w.write(home);
    const dir = join(home, "sessions", "-home-dev-my.api");
    await Deno.symlink(path, join(dir, "link.jsonl"));
    await Deno.writeTextFile(join(dir, "-odd name.jsonl"), "");
    const copy = join(home, "sessions", "-elsewhere");
    await Deno.mkdir(copy, { recursive: true });
    await Deno.copyFile(path, join(copy, `${S1}.jsonl`));
    await Deno.writeTextFile(join(home, "sessions", ".favorites"), "[]");
    const d = await createDroidExtractor({ homes: [home, join(home, "missing")] }).discover();
    assert.deepEqual(d.units.map((u) => u.key), [`droid:${S1}`]);
    assert.deepEqual(d.skipped, {
      not_a_regular_file: 1,
      unexpected_name: 1,
      duplicate_session_id: 1,
    });
  });
});
