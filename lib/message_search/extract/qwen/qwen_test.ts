/**
 * Qwen Code extractor over real files in the exact on-disk format (the fixture writer):
 * prose lanes and never-indexed kinds, rewind re-rooting → superseded, sidechains never
 * superseded and tagged subagent, forks, meta and locators; the sweep rules: exact
 * append == full pass (including same-uuid streaming), fallback to a full pass on a
 * rewind, torn tails, hostile lines, bounds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import {
  buildQwenFixture,
  type QwenAgent,
  QwenSessionWriter,
  qwenUuid,
  writeQwenSession,
} from "../../../../tests/helpers/fixtures/qwen.ts";
import { hash16Of, LocatorSchema } from "../../locator.ts";
import { MessageRecordSchema } from "../../record.ts";
import type { SessionUnit } from "../framework/plugin.ts";
import { Shard, viewOf, withDir } from "../framework/_test_shard.ts";
import { createQwenExtractor, type QwenLimits } from "./qwen.ts";

const now = () => ({ now: Date.now() });
const text = (t: string) => ({ text: t });

function extractor(dir: string, limits: Partial<QwenLimits> = {}) {
  return createQwenExtractor({ runtimeDirs: [join(dir, ".qwen")] }, { limits });
}

async function onlyUnit(dir: string): Promise<SessionUnit> {
  const d = await extractor(dir).discover();
  assert.equal(d.units.length, 1, JSON.stringify(d));
  return d.units[0]!;
}

async function liveSession(dir: string) {
  let t = Date.now() - 3_600_000;
  const w = new QwenSessionWriter({
    sessionId: qwenUuid(`live:${dir}`),
    cwd: "/home/dev/p",
    clock: () => (t += 1000),
  });
  w.user("question 0");
  w.assistant([[text("answer 0")]]);
  const path = await writeQwenSession(join(dir, ".qwen"), "/home/dev/p", w);
  return { w, path };
}

async function fullView(dir: string) {
  const o = await extractor(dir).extract(await onlyUnit(dir), null, now());
  assert.ok(o.kind === "replace");
  return viewOf(o.records, o.marks);
}

async function appendLines(path: string, w: QwenSessionWriter, from: number) {
  await Deno.writeTextFile(path, w.lines.slice(from).join("\n") + "\n", { append: true });
}

Deno.test("fixture: prose only, rewind supersedes, sidechains are subagent, meta and locators", async () => {
  await withDir(async (dir) => {
    const home = await buildQwenFixture(dir);
    const ex = home.extractor();
    const { units, skipped } = await ex.discover();
    assert.deepEqual(skipped, {});
    assert.deepEqual(units.map((u) => u.key).sort(), Object.keys(home.expected).sort());
    for (const u of units) {
      const o = await ex.extract(u, null, now());
      assert.ok(o.kind === "replace");
      const got = viewOf(o.records, o.marks).map((r) => ({
        role: r.role,
        text: r.text,
        superseded: !r.active,
        subagent: r.subagent,
      }));
      assert.deepEqual(got, home.expected[u.key], u.key);
      for (const r of o.records) {
        MessageRecordSchema.parse(r);
        assert.ok(!r.text.includes(NEVER_INDEX_MARK), r.text);
        const loc = LocatorSchema.parse(r.locator);
        assert.ok(loc.kind === "external_record_id" && loc.record_id === r.id);
        assert.equal(loc.hash, hash16Of(r.text));
        assert.match(loc.file, /^projects\/[^/]+\/chats\/[0-9a-f-]{36}\.jsonl$/);
      }
      if (u.key === home.appendTarget.key) {
        assert.equal(o.meta.title, "Startup perf");
        assert.equal(o.meta.project, "/home/dev/café shop");
        assert.deepEqual(o.skipped, {});
      }
    }
  });
});

Deno.test("a growing chain, same-uuid streaming and sidechains append exactly (== full pass)", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    assert.equal((await ex.extract(unit, shard.prior, now())).kind, "unchanged");
    let from = w.lines.length;
    w.user("question 1 漢字");
    w.system("ui_telemetry", { uiEvent: { "event.name": "x" } });
    // An assistant message streamed in three lines, the text only in the last one.
    const lines0 = w.lines.length;
    const a1 = w.assistant([[{ text: "hmm", thought: true }], [{ functionCall: { name: "t" } }], [
      text("answer 1"),
    ]]);
    await appendLines(path, w, from);
    let o = await ex.extract(unit, shard.prior, now());
    assert.equal(o.kind, "append");
    shard.apply(o);
    assert.deepEqual(shard.view(), await fullView(dir));
    assert.ok(lines0 < w.lines.length && shard.view().some((r) => r.id === a1));
    // Split a streamed message across sweeps: thought first, text next sweep.
    from = w.lines.length;
    const agent: QwenAgent = { agentId: "explore-1", agentName: "Explore", leaf: null };
    w.user("subagent task", { agent });
    const uuid = w.nextUuid();
    const parentUuid = w.leaf;
    w.record("assistant", { message: { role: "model", parts: [{ text: "t", thought: true }] } }, {
      uuid,
      parentUuid,
    });
    await appendLines(path, w, from);
    shard.apply(await ex.extract(unit, shard.prior, now()));
    from = w.lines.length;
    w.record("assistant", { message: { role: "model", parts: [text("answer 2")] } }, {
      uuid,
      parentUuid,
    });
    await appendLines(path, w, from);
    o = await ex.extract(unit, shard.prior, now());
    assert.equal(o.kind, "append");
    shard.apply(o);
    const full = await fullView(dir);
    assert.deepEqual(shard.view(), full);
    assert.deepEqual(full.map((r) => [r.text, r.active, r.subagent]), [
      ["question 0", true, false],
      ["answer 0", true, false],
      ["question 1 漢字", true, false],
      ["answer 1", true, false],
      ["subagent task", true, true],
      ["answer 2", true, false],
    ]);
  });
});

Deno.test("a rewind appended re-roots: full pass, abandoned turn superseded", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    let from = w.lines.length;
    const before = w.leaf;
    w.user("question 1");
    w.assistant([[text("answer 1")]]);
    await appendLines(path, w, from);
    shard.apply(await ex.extract(unit, shard.prior, now()));
    from = w.lines.length;
    w.rewind(before, 2);
    w.user("question 1, rephrased");
    await appendLines(path, w, from);
    const o = await ex.extract(unit, shard.prior, now());
    assert.equal(o.kind, "replace");
    shard.apply(o);
    assert.deepEqual(shard.view(), await fullView(dir));
    assert.deepEqual(shard.view().filter((r) => !r.active).map((r) => r.text), [
      "question 1",
      "answer 1",
    ]);
    assert.deepEqual(o.kind === "replace" && o.skipped, {});
  });
});

Deno.test("a branch with no rewind marker is superseded and counted", async () => {
  await withDir(async (dir) => {
    const { w } = await liveSession(dir);
    const root = JSON.parse(w.lines[0]!).uuid as string;
    w.user("sibling question", {});
    w.record("user", {
      message: { role: "user", parts: [text("other branch")] },
      provenance: "real_user",
    }, {
      parentUuid: root,
    });
    await writeQwenSession(join(dir, ".qwen"), "/home/dev/p", w);
    const o = await extractor(dir).extract(await onlyUnit(dir), null, now());
    assert.ok(o.kind === "replace");
    assert.deepEqual(viewOf(o.records, o.marks).filter((r) => !r.active).map((r) => r.text), [
      "answer 0",
      "sibling question",
    ]);
    assert.deepEqual(o.skipped, { unexplained_branch: 1 });
  });
});

Deno.test("a torn last line waits for the next sweep and is then indexed once", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    const from = w.lines.length;
    w.user("torn é漢字 line");
    const bytes = new TextEncoder().encode(w.lines.slice(from).join("\n") + "\n");
    const cut = new TextEncoder().encode(w.lines.at(-1)!.split("漢")[0]!).length + 1;
    const f = await Deno.open(path, { append: true });
    try {
      await f.write(bytes.subarray(0, cut));
      const o1 = await ex.extract(unit, shard.prior, now());
      if (o1.kind === "append" || o1.kind === "replace") shard.apply(o1);
      assert.ok(!shard.view().some((r) => r.text.startsWith("torn")));
      await f.write(bytes.subarray(cut));
    } finally {
      f.close();
    }
    shard.apply(await ex.extract(unit, shard.prior, now()));
    assert.equal(shard.view().filter((r) => r.text === "torn é漢字 line").length, 1);
    assert.deepEqual(shard.view(), await fullView(dir));
  });
});

Deno.test("hostile lines are counted, never fatal, and never cost a valid message", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const enc = new TextEncoder();
    const good = (t: string) => {
      w.user(t);
      return enc.encode(w.lines.at(-1)! + "\n");
    };
    const parts = [
      good("before"),
      enc.encode(
        JSON.stringify({ uuid: "big", parentUuid: null, type: "user", x: "y".repeat(9000) }) + "\n",
      ),
      enc.encode('{"uuid":"'),
      new Uint8Array([0xff, 0xfe]),
      enc.encode('","type":"user"}\n'),
      enc.encode("{not json\n"),
      enc.encode("42\n"),
      enc.encode('{"uuid":7,"type":"user"}\n'),
      enc.encode('{"uuid":"x","parentUuid":{"a":1},"type":"user"}\n'),
      good("after"),
    ];
    const f = await Deno.open(path, { append: true });
    for (const p of parts) await f.write(p);
    f.close();
    const o = await extractor(dir, { maxLineBytes: 4096 }).extract(
      await onlyUnit(dir),
      null,
      now(),
    );
    assert.ok(o.kind === "replace");
    assert.deepEqual(viewOf(o.records, o.marks).map((r) => [r.text, r.active]), [
      ["question 0", true],
      ["answer 0", true],
      ["before", true],
      ["after", true],
    ]);
    // The line with non-UTF-8 bytes inside its uuid decodes to U+FFFD (as in every
    // extractor) and is a well-formed user record without a message: nothing to count.
    assert.deepEqual(o.skipped, {
      oversized_line: 1,
      malformed_line: 2,
      malformed_record: 2,
    });
  });
});

Deno.test("a file over maxFileBytes publishes nothing and counts file_too_large", async () => {
  await withDir(async (dir) => {
    await liveSession(dir);
    const o = await extractor(dir, { maxFileBytes: 100 }).extract(await onlyUnit(dir), null, now());
    assert.ok(o.kind === "replace" && o.records.length === 0);
    assert.deepEqual(o.skipped, { file_too_large: 1 });
  });
});
