/**
 * Codex threads that move or change under the indexer: archive/unarchive renames and
 * cross-home copies keep the key and never duplicate; plain ↔ zst continues; in-place
 * rewrites open a new generation next to the kept records (GenerationRestore), while a
 * repaired torn tail does not; zst bounds fail closed; a bad prior state re-parses.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { zstdCompressSync } from "node:zlib";
import { Indexer } from "../../indexer.ts";
import { decodeRecords, openStore } from "../../store/mod.ts";
import { createCodexExtractor } from "./codex.ts";
import {
  appendRollout,
  MemShard,
  meta,
  rollback,
  rolloutPath,
  said,
  sweep,
  THREAD,
  user,
  withTemp,
  writeRollout,
} from "./testing/codex_test_util.ts";
import type { ShardContent } from "../framework/plugin.ts";

const zst = (text: string) => zstdCompressSync(new TextEncoder().encode(text));
const active = (s: MemShard) => s.view().filter(([, , a]) => a).map(([, t]) => t);
const all = (s: MemShard) => s.view().map(([, t]) => t);

Deno.test("an archive move keeps the key: the cursor is re-keyed, nothing is re-indexed, appends continue", async () => {
  await withTemp(async (home) => {
    const ex = createCodexExtractor({ homes: [home] });
    const live = rolloutPath(home);
    const archived = rolloutPath(home, THREAD, true);
    await writeRollout(live, meta() + user("A") + said("a"));
    const shard = new MemShard();
    assert.equal((await sweep(ex, shard)).kind, "replace");
    await Deno.mkdir(join(archived, ".."), { recursive: true });
    await Deno.rename(live, archived);
    const moved = (await sweep(ex, shard)) as ShardContent;
    assert.equal(moved.kind, "append");
    assert.deepEqual([moved.records, moved.marks], [[], []]);
    assert.deepEqual(Object.keys(moved.cursors), [archived]);
    assert.deepEqual(moved.meta.files, [archived]);
    await appendRollout(archived, user("B"));
    await sweep(ex, shard);
    await Deno.rename(archived, live); // unarchive: back under the filename's date
    await appendRollout(live, said("b"));
    await sweep(ex, shard);
    assert.deepEqual(all(shard), ["A", "a", "B", "b"]);
    assert.ok(shard.records.every((r) => r.generation === 0));
    assert.equal((await sweep(ex, shard)).kind, "unchanged");
  });
});

Deno.test("through the indexer and store: archive rename and a cross-home copy never duplicate", async () => {
  await withTemp(async (dir) => {
    const [home, leased] = [join(dir, "codex"), join(dir, "leased")];
    const store = await openStore({ root: join(dir, "store"), parserVersion: 1, windowDays: null });
    const ex = createCodexExtractor({ homes: [home, leased] });
    const indexer = new Indexer({ store, extractors: [ex], windowDays: null });
    const key = `codex:${THREAD}`;
    const texts = async () => {
      const e = (await store.readManifest()).sessions[key]!;
      const segs = await Promise.all(e.generations.map((g) => store.loadSegment(g)));
      return { e, texts: segs.flatMap((s) => decodeRecords(s).map((r) => r.text)) };
    };
    await writeRollout(rolloutPath(home), meta() + user("A") + said("a"));
    await indexer.sweep();
    const archived = rolloutPath(home, THREAD, true);
    await Deno.mkdir(join(archived, ".."), { recursive: true });
    await Deno.rename(rolloutPath(home), archived);
    const r = await indexer.sweep();
    assert.deepEqual(r.rejected, []);
    let now = await texts();
    assert.deepEqual([now.texts, Object.keys(now.e.cursors), now.e.meta.files], [
      ["A", "a"],
      [archived],
      [archived],
    ]);
    // A copy (new inode) into another home, then the original goes away.
    await writeRollout(rolloutPath(leased), await Deno.readFile(archived));
    await Deno.remove(archived);
    await appendRollout(rolloutPath(leased), user("B"));
    await indexer.sweep();
    now = await texts();
    assert.deepEqual([now.texts, Object.keys(now.e.cursors)], [["A", "a", "B"], [
      rolloutPath(leased),
    ]]);
    assert.equal(now.e.source_gone, false);
  });
});

Deno.test("plain → zst continues without re-indexing; a longer zst appends; a different zst restores", async () => {
  await withTemp(async (home) => {
    const ex = createCodexExtractor({ homes: [home] });
    const plain = rolloutPath(home);
    const text = meta() + user("A") + said("a");
    await writeRollout(plain, text);
    const shard = new MemShard();
    await sweep(ex, shard);
    await writeRollout(`${plain}.zst`, zst(text));
    await Deno.remove(plain);
    const o = (await sweep(ex, shard)) as ShardContent;
    assert.deepEqual([o.kind, o.records.length, Object.keys(o.cursors)], ["append", 0, [
      `${plain}.zst`,
    ]]);
    assert.equal((await sweep(ex, shard)).kind, "unchanged");
    await writeRollout(`${plain}.zst`, zst(text + user("B")));
    await sweep(ex, shard);
    assert.deepEqual(all(shard), ["A", "a", "B"]);
    await writeRollout(`${plain}.zst`, zst(meta() + user("X")));
    const r = (await sweep(ex, shard)) as ShardContent;
    assert.deepEqual(r.marks[0], {
      kind: "generation_restore",
      after_order: 3,
      active_generation: 1,
    });
    assert.deepEqual(active(shard), ["X"]);
    assert.deepEqual(all(shard), ["A", "a", "B", "X"]);
  });
});

Deno.test("an in-place rewrite opens a new generation: old records kept but superseded, new ones active", async () => {
  await withTemp(async (home) => {
    const ex = createCodexExtractor({ homes: [home] });
    const path = rolloutPath(home);
    const head = meta() + user("A") + said("a", "msg_a");
    await writeRollout(path, head + user("B") + said("b", "msg_b"));
    const shard = new MemShard();
    await sweep(ex, shard);
    // A same-thread restore: the rollout rewritten to another branch under the same path.
    await writeRollout(path, head + user("C") + said("c", "msg_c") + user("D") + rollback(1));
    const o = (await sweep(ex, shard)) as ShardContent;
    assert.equal(o.kind, "append");
    assert.deepEqual(o.marks, [
      { kind: "generation_restore", after_order: 4, active_generation: 1 },
      { kind: "turn_count", after_order: 9, num_turns: 1, generation: 1 },
    ]);
    assert.deepEqual(o.records.map((r) => [r.id, r.order, r.generation, r.user_turn]), [
      ["g1:L2", 4, 1, 0],
      ["g1:msg_a", 5, 1, 0],
      ["g1:L4", 6, 1, 1],
      ["g1:msg_c", 7, 1, 1],
      ["g1:L6", 8, 1, 2],
    ]);
    assert.deepEqual(
      o.records[0]!.locator.kind === "external_line" && o.records[0]!.locator.generation,
      1,
    );
    assert.ok(Object.values(o.cursors)[0]!.rewrite_epoch >= 1);
    // Superseded text stays findable (include_superseded); only the new branch is active.
    assert.deepEqual(all(shard), ["A", "a", "B", "b", "A", "a", "C", "c", "D"]);
    assert.deepEqual(active(shard), ["A", "a", "C", "c"]);
    await appendRollout(path, user("E"));
    const e = (await sweep(ex, shard)) as ShardContent;
    assert.deepEqual([e.kind, e.marks, e.records.map((r) => [r.id, r.generation])], [
      "append",
      [],
      [["g1:L8", 1]],
    ]);
    await writeRollout(path, meta() + user("F"));
    await sweep(ex, shard);
    assert.deepEqual(active(shard), ["F"]);
    assert.equal(shard.records.at(-1)!.id, "g2:L2");
  });
});

Deno.test("a torn tail truncated and replaced by another record continues: nothing consumed changed", async () => {
  await withTemp(async (home) => {
    const ex = createCodexExtractor({ homes: [home] });
    const path = rolloutPath(home);
    const good = meta() + user("A");
    await writeRollout(path, good + '{"timestamp":"2026-05-18T09:20:00.000Z","type":"event_');
    const shard = new MemShard();
    await sweep(ex, shard);
    await writeRollout(path, good + user("B")); // PR #24471: the fragment truncated first
    const o = (await sweep(ex, shard)) as ShardContent;
    assert.deepEqual([o.kind, o.marks, o.records.map((r) => [r.text, r.generation])], [
      "append",
      [],
      [["B", 0]],
    ]);
  });
});

Deno.test("zst bounds fail closed with a counted reason; a prior shard keeps its records", async () => {
  await withTemp(async (home) => {
    const path = `${rolloutPath(home)}.zst`;
    const text = meta() + user("A".repeat(500)) + said("a");
    await writeRollout(path, zst(text));
    const one = async (maxZstBytes?: number) => {
      const shard = new MemShard();
      const o = await sweep(createCodexExtractor({ homes: [home] }, { maxZstBytes }), shard);
      return { o: o as ShardContent, shard };
    };
    const big = await one(400); // compressed fits, decompressed does not
    assert.deepEqual([big.o.kind, big.o.records, big.o.skipped], ["replace", [], {
      zst_too_large: 1,
    }]);
    const huge = await one(16); // even the compressed file is over the bound
    assert.deepEqual(huge.o.skipped, { zst_too_large: 1 });
    const ok = await one();
    assert.deepEqual(all(ok.shard), ["A".repeat(500), "a"]);
    await writeRollout(path, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    const ex = createCodexExtractor({ homes: [home] });
    const bad = (await sweep(ex, ok.shard)) as ShardContent;
    assert.deepEqual([bad.kind, bad.records, bad.skipped], ["append", [], { zst_corrupt: 1 }]);
    assert.equal(ok.shard.records.length, 2);
    assert.equal((await sweep(ex, ok.shard)).kind, "unchanged");
    await writeRollout(path, zst(meta() + user("x") + '{"type":"event_msg"'));
    const torn = await one();
    assert.deepEqual([all(torn.shard), torn.o.skipped], [["x"], { torn_tail: 1 }]);
  });
});

Deno.test("an unreadable prior state re-parses from scratch with a bumped rewrite epoch", async () => {
  await withTemp(async (home) => {
    const ex = createCodexExtractor({ homes: [home] });
    await writeRollout(rolloutPath(home), meta() + user("A"));
    const shard = new MemShard();
    await sweep(ex, shard);
    shard.state = { v: 99 };
    const o = (await sweep(ex, shard)) as ShardContent;
    assert.deepEqual([o.kind, all(shard)], ["replace", ["A"]]);
    assert.equal(Object.values(o.cursors)[0]!.rewrite_epoch, 1);
  });
});
