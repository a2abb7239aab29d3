/**
 * Kimi Code extractor: the fixture home end to end, ids and locators, metadata,
 * incremental reads (append == full parse, torn tails, undo fallback, rewrites) and
 * malformed input. Bounds and discovery live in kimi_bounds_test.ts; line rules and
 * undo semantics in kimi_rules_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildKimiFixture } from "../../../../tests/fixtures/kimi_fixture.ts";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import { hash16Of } from "../../locator.ts";
import { deriveActive } from "../../record.ts";
import { Indexer } from "../../indexer.ts";
import { decodeRecords, openStore } from "../../store/mod.ts";
import { createKimiExtractor, KIMI_PARSER_VERSION } from "./kimi.ts";
import {
  content,
  meta,
  msg,
  reply,
  Shard,
  unitOf,
  withTemp,
  writeSession,
} from "./testing/kimi_test_util.ts";

const NOW = 1_790_000_000_000;

Deno.test("the fixture home extracts exactly the expected records, flags and nothing marked never-index", () =>
  withTemp(async (dir) => {
    const f = await buildKimiFixture(dir, { now: NOW });
    const ex = f.extractor();
    const { units, skipped } = await ex.discover();
    assert.deepEqual(skipped, {});
    assert.deepEqual(units.map((u) => u.key).sort(), Object.keys(f.expected).sort());
    assert.equal(KIMI_PARSER_VERSION, 1);
    for (const unit of units) {
      const out = content(await ex.extract(unit, null, { now: NOW }));
      assert.equal(out.kind, "replace");
      const active = deriveActive(out.records, out.marks);
      const got = out.records.map((r, i) => ({
        role: r.role,
        text: r.text,
        superseded: !active[i],
        subagent: r.subagent,
      }));
      assert.deepEqual(got, f.expected[unit.key], unit.key);
      for (const r of out.records) {
        assert.ok(!r.text.includes(NEVER_INDEX_MARK), r.text);
        assert.equal(r.source, "kimi");
        assert.equal(r.session_id, unit.sessionId);
        assert.match(r.id, /^(main|main@root|agent-0):L\d+$/);
        assert.equal(r.locator.kind, "external_record_id");
        if (r.locator.kind !== "external_record_id") continue;
        assert.equal(r.locator.record_id, r.id);
        assert.equal(r.locator.hash, hash16Of(r.text));
        assert.ok(r.locator.file.startsWith("sessions/wd_"), r.locator.file);
        assert.ok(r.locator.file.endsWith("wire.jsonl"));
      }
      assert.equal(new Set(out.records.map((r) => r.id)).size, out.records.length);
      assert.deepEqual(out.records.map((r) => r.order), out.records.map((_, i) => i));
    }
  }));

Deno.test("ids, text and marks are identical across re-runs; NFC and NFD survive byte-exact", () =>
  withTemp(async (dir) => {
    const f = await buildKimiFixture(dir, { now: NOW });
    const unit = await unitOf(f.extractor(), f.appendTarget.key);
    const a = content(await f.extractor().extract(unit, null, { now: NOW }));
    const b = content(await f.extractor().extract(unit, null, { now: NOW }));
    assert.deepEqual(a.records, b.records);
    assert.deepEqual(a.marks, b.marks);
    const texts = a.records.map((r) => r.text);
    assert.ok(texts.some((t) => t.includes("caf\u00e9")));
    assert.ok(texts.some((t) => t.includes("cafe\u0301")));
    assert.ok(texts.some((t) => t.includes("修复") && t.includes("🚀")));
  }));

Deno.test("meta: project is state.json cwd; title is state.json title, else the first user prose", () =>
  withTemp(async (dir) => {
    const f = await buildKimiFixture(dir, { now: NOW });
    const ex = f.extractor();
    const metas = [];
    for (const u of (await ex.discover()).units) {
      const out = await ex.extract(u, null, { now: NOW });
      if (out.kind === "replace" && out.records.length) metas.push(out.meta);
    }
    const byProject = Object.fromEntries(metas.map((m) => [m.project, m]));
    assert.equal(byProject["/home/dev/café-app"]?.title, "Café cache fix");
    assert.equal(byProject["/home/dev/東京-tools"]?.title, "Summarise the 東京 logs");
    assert.equal(byProject["/home/dev/café-app"]?.files.length, 2);
    assert.equal(byProject["/home/dev/café-app"]?.parent_session_id, null);
  }));

Deno.test("an untouched session is unchanged; an appended line continues and equals a full parse", () =>
  withTemp(async (dir) => {
    const f = await buildKimiFixture(dir, { now: NOW });
    const ex = f.extractor();
    const unit = await unitOf(ex, f.appendTarget.key);
    const shard = new Shard();
    shard.apply(await ex.extract(unit, null, { now: NOW }));
    assert.deepEqual(await ex.extract(unit, shard.prior, { now: NOW + 10_000 }), {
      kind: "unchanged",
    });
    await Deno.writeTextFile(f.appendTarget.path, f.appendTarget.userLine("one more 🧪", 1), {
      append: true,
    });
    const out = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(out.kind, "append");
    assert.deepEqual(out.records.map((r) => [r.role, r.text, r.order]), [
      ["user", "one more 🧪", shard.records.length],
    ]);
    assert.deepEqual(out.marks, []);
    shard.apply(out);
    const full = new Shard();
    full.apply(await ex.extract(unit, null, { now: NOW }));
    assert.deepEqual(shard.rows(), full.rows());
    assert.deepEqual(shard.records.map((r) => r.id), full.records.map((r) => r.id));
  }));

Deno.test("a torn tail is left unconsumed, then read once completed", () =>
  withTemp(async (dir) => {
    const f = await buildKimiFixture(dir, { now: NOW });
    const ex = f.extractor();
    const unit = await unitOf(ex, f.appendTarget.key);
    const shard = new Shard();
    shard.apply(await ex.extract(unit, null, { now: NOW }));
    const full = f.appendTarget.userLine("finished later", 2);
    const cut = Math.floor(full.length / 2);
    await Deno.writeTextFile(f.appendTarget.path, full.slice(0, cut), { append: true });
    const torn = await ex.extract(unit, shard.prior, { now: NOW });
    if (torn.kind !== "unchanged") {
      assert.deepEqual(content(torn).records, []);
      shard.apply(torn);
    }
    await Deno.writeTextFile(f.appendTarget.path, full.slice(cut), { append: true });
    const out = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.deepEqual(out.records.map((r) => r.text), ["finished later"]);
    assert.deepEqual(out.skipped, {});
  }));

Deno.test("an appended context.undo re-parses in full and supersedes exactly the undone turn", () =>
  withTemp(async (home) => {
    const id = "session_5d0c8c3e-4a59-4f0e-9a51-0c1d9b8f2a10";
    const dir = await writeSession(home, {
      id,
      wires: { "agents/main/wire.jsonl": [meta(), msg("user", "first", { kind: "user" }, 1)] },
    });
    const ex = createKimiExtractor({ homes: [home] });
    const unit = await unitOf(ex, `kimi:${id}`);
    const shard = new Shard();
    shard.apply(await ex.extract(unit, null, { now: NOW }));
    const wire = join(dir, "agents/main/wire.jsonl");
    const more = [msg("user", "second", { kind: "user" }, 2), ...reply("s2", "answer two", 3)];
    await Deno.writeTextFile(wire, more.map((l) => l + "\n").join(""), { append: true });
    const plain = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(plain.kind, "append");
    shard.apply(plain);
    const epoch = shard.prior!.cursors[wire]!.rewrite_epoch;
    await Deno.writeTextFile(
      wire,
      JSON.stringify({ type: "context.undo", count: 1, time: 4 }) + "\n",
      {
        append: true,
      },
    );
    const out = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(out.kind, "replace");
    assert.equal(out.cursors[wire]!.rewrite_epoch, epoch + 1);
    assert.deepEqual(out.marks, [{
      kind: "record_ids",
      after_order: 3,
      ids: ["main:L3", "main:L5"],
    }]);
    shard.apply(out);
    assert.deepEqual(shard.rows(), [
      ["user", "first", true],
      ["user", "second", false],
      ["assistant", "answer two", false],
    ]);
  }));

Deno.test("a rewritten wire (in-place protocol migration) re-parses with a bumped epoch and the same ids", () =>
  withTemp(async (home) => {
    const id = "session_0b7e3f52-8d1c-4c11-b0a4-5a3c2e1f9d77";
    const lines = [meta("1.1"), msg("user", "hello", undefined, 1), ...reply("s1", "hi", 2)];
    const dir = await writeSession(home, { id, wires: { "wire.jsonl": lines } });
    const ex = createKimiExtractor({ homes: [home] });
    const unit = await unitOf(ex, `kimi:${id}`);
    const first = content(await ex.extract(unit, null, { now: NOW }));
    const path = join(dir, "wire.jsonl");
    const migrated = [
      meta("1.5"),
      ...lines.slice(1).map((l) => l.replace("{", '{"agentId":"main",')),
    ];
    await Deno.writeTextFile(path, migrated.map((l) => l + "\n").join(""));
    const prior = { generations: [], cursors: first.cursors, state: first.state, records: 2 };
    const out = content(await ex.extract(unit, prior, { now: NOW + 5_000 }));
    assert.equal(out.kind, "replace");
    assert.equal(out.cursors[path]!.rewrite_epoch, 1);
    assert.deepEqual(out.records.map((r) => r.id), first.records.map((r) => r.id));
    assert.deepEqual(out.records.map((r) => r.id), ["main@root:L2", "main@root:L4"]);
  }));

Deno.test("malformed lines are counted and skipped; the rest of the wire still indexes", () =>
  withTemp(async (home) => {
    const id = "session_9f1d2c3b-7a6e-4d5c-8b9a-0f1e2d3c4b5a";
    const dir = await writeSession(home, {
      id,
      wires: {
        "agents/main/wire.jsonl": [
          meta(),
          "{not json",
          "[1,2,3]",
          '{"no":"type"}',
          JSON.stringify({ type: "context.append_message", message: "oops", time: 1 }),
          JSON.stringify({ type: "context.append_loop_event", event: null, time: 1 }),
          JSON.stringify({ type: "context.undo", count: -1, time: 1 }),
          msg("user", "still here", { kind: "user" }, 2),
        ],
      },
      state: "{ torn state",
    });
    // Invalid UTF-8 inside a JSON string breaks nothing but that line's text.
    await Deno.writeFile(join(dir, "agents/main/wire.jsonl"), new Uint8Array([0x7b, 0xff, 0x0a]), {
      append: true,
    });
    const ex = createKimiExtractor({ homes: [home] });
    const out = content(await ex.extract(await unitOf(ex, `kimi:${id}`), null, { now: NOW }));
    assert.deepEqual(out.records.map((r) => r.text), ["still here"]);
    assert.deepEqual(out.skipped, {
      malformed_line: 4,
      malformed_record: 3,
      malformed_state_json: 1,
    });
    assert.equal(out.meta.title, "still here");
  }));

Deno.test("appends to several wires, and a sub-agent wire that appears later, order as a full parse", () =>
  withTemp(async (home) => {
    const id = "session_3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a98";
    const dir = await writeSession(home, {
      id,
      wires: {
        "agents/main/wire.jsonl": [meta("1.5", 1000), msg("user", "go", { kind: "user" }, 1001)],
      },
    });
    const ex = createKimiExtractor({ homes: [home] });
    const shard = new Shard();
    shard.apply(await ex.extract(await unitOf(ex, `kimi:${id}`), null, { now: NOW }));
    const add = (rel: string, lines: string[]) =>
      Deno.writeTextFile(join(dir, rel), lines.map((l) => l + "\n").join(""), { append: true });
    await Deno.mkdir(join(dir, "agents/agent-0"));
    await add("agents/agent-0/wire.jsonl", [
      meta("1.5", 1002),
      msg("user", "task", { kind: "system_trigger", name: "subagent" }, 1002),
      ...reply("s1", "sub one", 1003),
    ]);
    await add("agents/main/wire.jsonl", reply("s1", "main one", 1004));
    const first = content(
      await ex.extract(await unitOf(ex, `kimi:${id}`), shard.prior, { now: NOW }),
    );
    assert.equal(first.kind, "append");
    shard.apply(first);
    await add("agents/agent-0/wire.jsonl", reply("s2", "sub two", 1006));
    await add("agents/main/wire.jsonl", [msg("user", "more", { kind: "user" }, 1005)]);
    const second = content(
      await ex.extract(await unitOf(ex, `kimi:${id}`), shard.prior, { now: NOW }),
    );
    assert.equal(second.kind, "append");
    shard.apply(second);
    const full = new Shard();
    full.apply(await ex.extract(await unitOf(ex, `kimi:${id}`), null, { now: NOW }));
    assert.deepEqual(shard.rows(), full.rows());
    assert.deepEqual(shard.records, full.records);
    assert.deepEqual(full.rows().map((r) => r[1]), [
      "go",
      "sub one",
      "main one",
      "more",
      "sub two",
    ]);
    assert.deepEqual(full.records.map((r) => r.subagent), [false, true, false, false, true]);
  }));

Deno.test("through the real indexer and store: publish, append, undo rebuild and retraction are all accepted", () =>
  withTemp(async (dir) => {
    const now = Date.now();
    const f = await buildKimiFixture(join(dir, "src"), { now });
    const store = await openStore({ root: join(dir, "store"), parserVersion: 1, windowDays: 14 });
    const indexer = new Indexer({ store, extractors: [f.extractor()], windowDays: 14 });
    const sweep = async () => {
      const r = await indexer.sweep();
      assert.deepEqual([r.rejected, r.sources.kimi?.errors], [[], []]);
      return (await store.readManifest()).sessions[f.appendTarget.key]!;
    };
    const rows = async () => {
      const e = (await store.readManifest()).sessions[f.appendTarget.key]!;
      const segs = await Promise.all(e.generations.map((g) => store.loadSegment(g)));
      const records = segs.flatMap((s) => decodeRecords(s));
      const active = deriveActive(records, segs.flatMap((s) => s.marks));
      return records.map((r, i) => [r.text, active[i]]);
    };
    const first = await sweep();
    assert.equal(first.records, f.expected[f.appendTarget.key]!.length);
    const manifest = await store.readManifest();
    assert.equal(Object.values(manifest.sessions).filter((e) => e.records > 0).length, 2);
    const append = (text: string) =>
      Deno.writeTextFile(f.appendTarget.path, text, { append: true });
    await append(f.appendTarget.userLine("appended through the indexer", 1));
    assert.equal((await sweep()).records, first.records + 1);
    await append(
      JSON.stringify({ type: "context.undo", agentId: "main", count: 1, time: now - 59_000 }) +
        "\n",
    );
    await sweep();
    assert.deepEqual((await rows()).at(-1), ["appended through the indexer", false]);
    await append(f.appendTarget.userLine("x".repeat(3 * 1024 * 1024), 3));
    const retracted = await sweep();
    assert.equal(retracted.records, 0);
    assert.equal(retracted.skipped.oversized_record, 1);
  }));
