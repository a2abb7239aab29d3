/**
 * Pi extractor: format rules over the fixture home (prose lanes, never-indexed kinds,
 * branch and second-root marks, compaction not superseding, meta, locators), plus the
 * sweep rules: unchanged/gone, exact incremental append == full parse, branch appends
 * falling back to a full parse, torn tails, malformed lines, header changes.
 * Line rules live in pi_entries_test.ts, bounds in pi_bounds_test.ts, discovery in
 * pi_discover_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  buildPiFixture,
  PiSessionWriter,
  writePiSession,
} from "../../../../tests/fixtures/pi_fixture.ts";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import { hash16Of, LocatorSchema } from "../../locator.ts";
import { deriveActive, MessageRecordSchema } from "../../record.ts";
import { createPiExtractor, PI_PARSER_VERSION } from "./pi.ts";
import { liveSession, Shard, unitOf, withDir } from "./testing/pi_test_helpers.ts";
import type { ExtractOutcome, ShardContent } from "../framework/plugin.ts";

function content(o: ExtractOutcome | undefined): ShardContent {
  assert.ok(o && (o.kind === "replace" || o.kind === "append"), `not content: ${o?.kind}`);
  return o;
}

const append = (path: string, s: string) => Deno.writeTextFile(path, s, { append: true });

Deno.test("PI_PARSER_VERSION is 1", () => assert.equal(PI_PARSER_VERSION, 1));

Deno.test("fixture: prose lanes, marks, meta and locators follow the Pi rules", async () => {
  await withDir(async (dir) => {
    const home = await buildPiFixture(dir);
    const ex = home.extractor();
    const { units } = await ex.discover();
    const outs = new Map<string, ExtractOutcome>();
    for (const u of units) outs.set(u.key, await ex.extract(u, null, { now: Date.now() }));
    for (const [key, want] of Object.entries(home.expected)) {
      const o = outs.get(key);
      assert.ok(o && o.kind === "replace", key);
      const active = deriveActive(o.records, o.marks);
      assert.deepEqual(
        o.records.map((r, i) => ({
          role: r.role,
          text: r.text,
          superseded: !active[i],
          subagent: r.subagent,
        })),
        want,
        key,
      );
      for (const r of o.records) {
        MessageRecordSchema.parse(r);
        assert.ok(!r.text.includes(NEVER_INDEX_MARK));
        const loc = LocatorSchema.parse(r.locator);
        assert.ok(
          loc.kind === "external_record_id" && /^[0-9a-f]{8}$/.test(loc.record_id) &&
            loc.record_id === r.id,
        );
        assert.equal(loc.hash, hash16Of(r.text));
        assert.match(loc.file, /^sessions\/--[^/]+--\/[^/]+\.jsonl$/);
      }
      // At most one exact mark, after every record, naming exactly the superseded ids.
      const sup = o.records.filter((_, i) => !active[i]).map((r) => r.id);
      assert.deepEqual(
        o.marks,
        sup.length ? [{ kind: "record_ids", after_order: o.records.length, ids: sup }] : [],
      );
    }
    const a = content(outs.get(home.appendTarget.key));
    assert.equal(a.marks.length, 0, "compaction supersedes nothing");
    assert.deepEqual(a.meta.project, "/home/dev/café shop");
    assert.equal(a.meta.title, "Café login fix");
    assert.equal(a.meta.parent_session_id, null);
    assert.ok(
      a.records[0]!.locator.kind === "external_record_id" &&
        a.records[0]!.locator.file.startsWith("sessions/--home-dev-café shop--/"),
    );
    const fork = content(outs.get("pi:c5d6e7f8-1a2b-4c3d-9e4f-5a6b7c8d9e0f"));
    assert.equal(fork.meta.parent_session_id, "3f2b8c1e-6d4a-4e7b-9a1c-5b8d2e4f6a10");
    const root2 = content(outs.get("pi:a0e4f7b2-9c3d-4f1e-b5a6-7d8e9f0a1b2c"));
    assert.equal(root2.meta.title, "Summarise the README", "no session_info: first user prose");
    const v1 = content(outs.get("pi:f0f1f2f3-a4b5-4c6d-8e7f-8091a2b3c4d5"));
    assert.equal(v1.records.length, 0);
    assert.equal(v1.skipped.v1_entry_without_id, 1);
  });
});

Deno.test("extract() is stable across runs and reports unchanged, then gone", async () => {
  await withDir(async (dir) => {
    const { path } = await liveSession(dir);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const a = await ex.extract(unit, null, { now: Date.now() });
    const b = await ex.extract(unit, null, { now: Date.now() });
    assert.ok(a.kind === "replace" && b.kind === "replace");
    assert.deepEqual(a.records, b.records);
    const shard = new Shard().apply(a);
    assert.equal((await ex.extract(unit, shard.prior, { now: Date.now() })).kind, "unchanged");
    await Deno.remove(path);
    assert.equal((await ex.extract(unit, shard.prior, { now: Date.now() })).kind, "gone");
  });
});

Deno.test("a linear append continues exactly and equals a full parse", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    const from = w.lines.length;
    w.entry("label", { targetId: w.leaf, label: "checkpoint" });
    w.user([{ type: "text", text: "later café ☕" }]);
    w.assistant([{ type: "thinking", thinking: NEVER_INDEX_MARK }, {
      type: "text",
      text: "later answer",
    }]);
    w.entry("session_info", { name: "Renamed" });
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.equal(o.kind, "append");
    shard.apply(o);
    assert.ok(o.kind === "append" && o.meta.title === "Renamed" && o.marks.length === 0);
    const full = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    assert.deepEqual(shard.records, full.records);
    assert.deepEqual(shard.view(), full.view());
    assert.deepEqual(shard.view().map((r) => r.order), [0, 1, 2, 3, 4, 5]);
  });
});

Deno.test("an append that branches falls back to a full parse that supersedes the sibling", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    const firstAnswer = JSON.parse(w.lines[2]!).id as string;
    // Edit the second question: the leaf moves to its parent, the next entry is a sibling.
    const from = w.lines.length;
    w.user("question 1, edited", firstAnswer);
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.equal(o.kind, "replace");
    assert.ok(o.kind === "replace" && o.cursors[path]!.rewrite_epoch === 1, "epoch bumped");
    shard.apply(o);
    assert.deepEqual(shard.view().map((r) => [r.text, r.active]), [
      ["question 0", true],
      ["answer 0", true],
      ["question 1", false],
      ["answer 1", false],
      ["question 1, edited", true],
    ]);
    // A later linear append continues incrementally and keeps the superseded branch so.
    const from2 = w.lines.length;
    w.assistant([{ type: "text", text: "edited answer" }]);
    await append(path, w.lines.slice(from2).join("\n") + "\n");
    const o2 = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.equal(o2.kind, "append");
    shard.apply(o2);
    const full = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    assert.deepEqual(shard.view(), full.view());
  });
});

Deno.test("a second root appended after resetLeaf supersedes the first tree", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    const from = w.lines.length;
    w.user("question 0, rewritten", null);
    await append(path, w.lines.slice(from).join("\n") + "\n");
    shard.apply(await ex.extract(unit, shard.prior, { now: Date.now() }));
    assert.equal(shard.last?.kind, "replace");
    assert.deepEqual(shard.view().map((r) => r.active), [false, false, true]);
  });
});

Deno.test("a torn tail waits; malformed lines are counted and never become the leaf", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    const from = w.lines.length;
    w.user("torn 漢字 question");
    const line = w.lines.slice(from).join("\n") + "\n";
    const cut = line.indexOf("漢") + 1;
    await append(path, line.slice(0, cut));
    const o = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.ok(o.kind === "append" && o.records.length === 0);
    shard.apply(o);
    await append(path, line.slice(cut));
    shard.apply(await ex.extract(unit, shard.prior, { now: Date.now() }));
    assert.equal(shard.last?.kind, "append");
    assert.deepEqual(shard.view().map((r) => r.text), [
      "question 0",
      "answer 0",
      "torn 漢字 question",
    ]);
    // Garbage between linear entries: counted; the chain continues incrementally.
    const leaf = w.leaf;
    await append(
      path,
      '{not json\n{"type":"message","parentId":null}\n{"type":"session","id":"x"}\n[1,2]\n',
    );
    await Deno.writeFile(path, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]), {
      append: true,
    });
    const from2 = w.lines.length;
    w.assistant([{ type: "text", text: "after garbage" }], {}, leaf);
    await append(path, w.lines.slice(from2).join("\n") + "\n" + "{oops\n");
    const o2 = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.ok(o2.kind === "append", "garbage does not force a full parse");
    assert.deepEqual(o2.skipped, { malformed_line: 4, malformed_entry: 1, extra_header: 1 });
    shard.apply(o2);
    const full = await ex.extract(unit, null, { now: Date.now() });
    assert.ok(full.kind === "replace");
    assert.deepEqual(full.skipped, o2.skipped);
    assert.deepEqual(shard.view(), new Shard().apply(full).view());
    assert.ok(shard.view().every((r) => r.active), "the trailing garbage did not become the leaf");
  });
});

Deno.test("a rewritten file whose header changed or vanished publishes nothing, counted", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, { now: Date.now() }));
    await Deno.writeTextFile(path, w.lines.slice(1).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, { now: Date.now() });
    assert.ok(o.kind === "replace" && o.records.length === 0 && o.skipped.header_invalid === 1);
    const other = w.lines[0]!.replace(w.id, "99999999-2222-4333-8444-555555555555");
    await Deno.writeTextFile(path, [other, ...w.lines.slice(1)].join("\n") + "\n");
    const o2 = await ex.extract(unit, null, { now: Date.now() });
    assert.ok(o2.kind === "replace" && o2.records.length === 0 && o2.skipped.header_changed === 1);
    assert.equal(
      (await createPiExtractor({ agentDirs: [dir] }).discover()).units[0]!.key,
      "pi:99999999-2222-4333-8444-555555555555",
    );
  });
});

Deno.test("duplicate entry ids get unique record ids; a parent cycle terminates", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const ex = createPiExtractor({ agentDirs: [dir] });
    const dup = JSON.parse(w.lines[1]!);
    const cyc1 = {
      ...dup,
      id: "cccc0001",
      parentId: "cccc0002",
      message: { role: "user", content: "cycle one" },
    };
    const cyc2 = {
      ...dup,
      id: "cccc0002",
      parentId: "cccc0001",
      message: { role: "user", content: "cycle two" },
    };
    await append(
      path,
      [JSON.stringify(dup), JSON.stringify(cyc1), JSON.stringify(cyc2)].join("\n") + "\n",
    );
    const o = await ex.extract(await unitOf(dir), null, { now: Date.now() });
    assert.ok(o.kind === "replace");
    const ids = o.records.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(ids[2], `${dup.id}@4`);
    assert.deepEqual(deriveActive(o.records, o.marks), [false, false, false, true, true]);
  });
});

Deno.test("parentSession outside our session dirs is never read", async () => {
  await withDir(async (dir) => {
    const { path } = await liveSession(dir, 1);
    let t = Date.now();
    const w = new PiSessionWriter("22222222-2222-4333-8444-555555555555", () => (t += 1000), {
      timestamp: new Date(t).toISOString(),
      cwd: "/x",
      parentSession: path,
    });
    w.user("child");
    w.assistant([{ type: "text", text: "ok" }]);
    const other = join(dir, "other");
    await writePiSession(other, "/x", w, t);
    const o = await createPiExtractor({ agentDirs: [other] }).extract(await unitOf(other), null, {
      now: Date.now(),
    });
    assert.ok(o.kind === "replace" && o.meta.parent_session_id === null);
    const o2 = await createPiExtractor({ agentDirs: [other, dir] }).extract(
      await unitOf(other),
      null,
      { now: Date.now() },
    );
    assert.ok(
      o2.kind === "replace" && o2.meta.parent_session_id === "11111111-2222-4333-8444-555555555555",
    );
  });
});
