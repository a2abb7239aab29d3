import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { MemShard, sweepInto } from "../../../../tests/helpers/fixtures/copilot.ts";
import { CursorTranscriptWriter, NEVER } from "../../../../tests/helpers/fixtures/cursor.ts";
import { createCursorExtractor } from "./cursor.ts";

const NFD = "cafe\u0301 naïve";
const CJK = "漢字のテスト 🚀";
const CHAT = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";

async function withRoot<T>(fn: (root: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "cursor-extract-" });
  try {
    return await fn(join(dir, ".cursor"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function rich(chatId = CHAT): CursorTranscriptWriter {
  const w = new CursorTranscriptWriter({ chatId, cwd: "/Users/dev/my app" });
  w.user(`Why does the navbar flicker? ${NFD}`, { context: true });
  w.assistant("The key changes every render.", {
    thinking: true,
    tools: [{ name: "Read", input: { path: "src/Nav.tsx" }, result: `${NEVER} file body` }],
  });
  w.assistant("", {
    tools: [{ name: "Shell", input: { command: "npm test" }, result: `${NEVER} ok` }],
  });
  w.turnEnded();
  w.user(CJK);
  w.assistant(`Fixed ${NFD}.`);
  w.turnEnded();
  return w;
}

const view = (s: MemShard) => s.view();

for (const layout of ["nested", "flat"] as const) {
  Deno.test(`cursor: ${layout} JSONL — prose only, <user_query> unwrapped, context dropped`, async () => {
    await withRoot(async (root) => {
      const w = rich();
      await w.write(root, { layout });
      const ex = createCursorExtractor({ homes: [root] });
      const shard = new MemShard();
      const o = await sweepInto(ex, shard, `cursor:${CHAT}`);
      assert.equal(o.kind, "replace");
      assert.deepEqual(view(shard), w.expected());
      for (const r of shard.records) {
        assert.ok(!r.text.includes(NEVER) && !r.text.includes("<"), r.text);
      }
      const loc = shard.records[0]!.locator;
      assert.ok(loc.kind === "external_line" && loc.line === 1);
      if (o.kind === "replace") assert.equal(o.meta.title, `Why does the navbar flicker? ${NFD}`);
    });
  });
}

Deno.test("cursor: legacy .txt — role blocks only, thinking and tool blocks skipped; .jsonl wins over a twin", async () => {
  await withRoot(async (root) => {
    const w = rich();
    await w.write(root, { layout: "txt" });
    const ex = createCursorExtractor({ homes: [root] });
    const shard = new MemShard();
    await sweepInto(ex, shard, `cursor:${CHAT}`);
    assert.deepEqual(shard.active(), w.expected().map(([r, t]) => [r, t]));
    for (const r of shard.records) assert.ok(!r.text.includes(NEVER), r.text);
    await w.write(root, { layout: "flat" });
    const d = await ex.discover();
    assert.deepEqual(d.units.map((u) => u.files[0]!.path.endsWith(".jsonl")), [true]);
  });
});

Deno.test("cursor: sub-agent transcripts join the chat, flagged; a new one is an append", async () => {
  await withRoot(async (root) => {
    const w = rich();
    await w.write(root);
    const ex = createCursorExtractor({ homes: [root] });
    const shard = new MemShard();
    const key = `cursor:${CHAT}`;
    await sweepInto(ex, shard, key);
    const sub = new CursorTranscriptWriter({
      chatId: "sub",
      cwd: "/Users/dev/my app",
      subagent: true,
    });
    sub.user("Find the Nav component");
    sub.assistant("It is in src/Nav.tsx.");
    await sub.writeSubagent(root, CHAT, "explore-1");
    const o = await sweepInto(ex, shard, key);
    assert.equal(o.kind, "append");
    assert.deepEqual(shard.records.slice(-2).map((r) => [r.text, r.subagent]), [
      ["Find the Nav component", true],
      ["It is in src/Nav.tsx.", true],
    ]);
    assert.equal(new Set(shard.records.map((r) => r.id)).size, shard.records.length);
  });
});

Deno.test("cursor: append == full pass (ids, text, order); a rewrite keeps vanished text superseded", async () => {
  await withRoot(async (root) => {
    const w = rich();
    const path = await w.write(root);
    const ex = createCursorExtractor({ homes: [root] });
    const inc = new MemShard();
    const key = `cursor:${CHAT}`;
    await sweepInto(ex, inc, key);
    w.user("and the footer?");
    w.assistant("Same cause.");
    await Deno.writeTextFile(path, w.text());
    assert.equal((await sweepInto(ex, inc, key)).kind, "append");
    const full = new MemShard();
    await sweepInto(ex, full, key);
    const strip = (s: MemShard) => s.records.map(({ ts_ms: _t, ...r }) => r);
    assert.deepEqual(strip(inc), strip(full));
    // Rewrite: drop the last four lines, add a new exchange; a malformed line survives it.
    await Deno.writeTextFile(path, "{bad\n", { append: true });
    await sweepInto(ex, inc, key);
    w.truncateTo(w.lines.length - 4);
    w.user("try another way");
    await Deno.writeTextFile(path, w.text() + "{bad\n");
    const o = await sweepInto(ex, inc, key);
    assert.ok(o.kind === "append" && o.marks[0]?.kind === "generation_restore");
    const want = w.expected().filter(([, , a]) => a).map(([r, t]) => [r, t]);
    assert.deepEqual(inc.active(), want);
    const superseded = inc.view().filter(([, , a]) => !a).map(([, t]) => t);
    for (const p of w.prose.filter((p) => !p.inFile)) {
      assert.ok(superseded.includes(p.text), p.text);
    }
    assert.equal(new Set(inc.records.map((r) => r.id)).size, inc.records.length);
    assert.deepEqual(inc.skipped, { malformed_line: 1 }, "a restart does not count twice");
  });
});

Deno.test("cursor: torn tail waits; hostile lines counted, valid ones kept", async () => {
  await withRoot(async (root) => {
    const w = rich();
    const path = await w.write(root, { torn: `torn ${CJK}` });
    const ex = createCursorExtractor({ homes: [root] }, { limits: { maxLineBytes: 4096 } });
    const shard = new MemShard();
    const key = `cursor:${CHAT}`;
    await sweepInto(ex, shard, key);
    assert.ok(!shard.records.some((r) => r.text.startsWith("torn")));
    const whole = w.userLine(`torn ${CJK}`);
    await Deno.writeTextFile(path, whole.slice(Math.floor(whole.length / 2)), { append: true });
    await sweepInto(ex, shard, key);
    assert.equal(shard.records.filter((r) => r.text === `torn ${CJK}`).length, 1);
    const enc = new TextEncoder();
    const f = await Deno.open(path, { append: true });
    await f.write(enc.encode("{oops\n"));
    await f.write(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
    await f.write(enc.encode(`${JSON.stringify({ role: "user", message: { content: 7 } })}\n`));
    await f.write(enc.encode(`${JSON.stringify({ role: 3 })}\n`));
    await f.write(enc.encode(`"just a string"\n`));
    await f.write(enc.encode(w.userLine("x".repeat(5000))));
    await f.write(enc.encode(w.userLine("after garbage")));
    f.close();
    await sweepInto(ex, shard, key);
    assert.equal(shard.active().at(-1)?.[1], "after garbage");
    assert.deepEqual(shard.skipped, {
      // The non-UTF-8 line decodes to U+FFFD and is then not JSON: malformed, like the torn one.
      malformed_line: 2,
      malformed_record: 3,
      oversized_line: 1,
    });
  });
});

Deno.test("cursor property: random chats read in two sweeps yield every prose message once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cursor-prop-" });
  let run = 0;
  const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((s) =>
    s.trim() !== "" && !s.includes("<")
  );
  const op = fc.oneof(
    fc.record({ k: fc.constant("u" as const), t: text, ctx: fc.boolean() }),
    fc.record({ k: fc.constant("a" as const), t: text, think: fc.boolean(), tool: fc.boolean() }),
    fc.record({ k: fc.constant("end" as const) }),
  );
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 20 }), fc.nat(), async (ops, seed) => {
        const root = join(dir, `r${run++}`);
        const w = new CursorTranscriptWriter({ chatId: CHAT, cwd: "/p" });
        for (const o of ops) {
          if (o.k === "u") w.user(o.t, { context: o.ctx });
          else if (o.k === "a") {
            w.assistant(o.t, {
              thinking: o.think,
              tools: o.tool ? [{ name: "Read", input: {}, result: NEVER }] : [],
            });
          } else w.turnEnded();
        }
        const lines = w.text().split("\n").slice(0, -1);
        const cut = seed % (lines.length + 1);
        const path = await w.write(root);
        await Deno.writeTextFile(path, lines.slice(0, cut).map((l) => l + "\n").join(""));
        const ex = createCursorExtractor({ homes: [root] });
        const shard = new MemShard();
        await sweepInto(ex, shard, `cursor:${CHAT}`);
        await Deno.writeTextFile(path, w.text());
        await sweepInto(ex, shard, `cursor:${CHAT}`);
        assert.deepEqual(shard.view(), w.expected());
        assert.deepEqual(shard.skipped, {});
      }),
      { numRuns: 40 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cursor: discovery refuses links, counts odd names and a chat id seen twice", async () => {
  await withRoot(async (root) => {
    const w = rich();
    const path = await w.write(root, { layout: "flat" });
    const dir = w.transcriptsDir(root);
    await Deno.symlink(path, join(dir, "0000-link.jsonl"));
    await Deno.writeTextFile(join(dir, "-odd.jsonl"), "");
    const other = new CursorTranscriptWriter({ chatId: CHAT, cwd: "/Users/dev/other" });
    other.user("same id, other project");
    await other.write(root);
    const d = await createCursorExtractor({ homes: [root, join(root, "missing")] }).discover();
    assert.deepEqual(d.units.map((u) => u.key), [`cursor:${CHAT}`]);
    assert.deepEqual(d.skipped, {
      not_a_regular_file: 1,
      unexpected_name: 1,
      duplicate_session_id: 1,
    });
  });
});
