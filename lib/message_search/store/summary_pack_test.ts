/**
 * summaries.pack (summary_pack.ts): written with every publish, read by cold engines, a
 * cache — rebuilt from the generation files when missing or damaged, compacted when
 * dead entries outweigh live ones, never followed through a planted link.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realFs } from "../../durable/mod.ts";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { openStore } from "./store.ts";
import { encodeSegment } from "./segment_encode.ts";
import { PackWriter, readPack, SUMMARY_PACK_FILE } from "./summary_pack.ts";
import { SEGMENT_SCHEMA } from "./types.ts";

/** name → summary of every generation the manifest references, read from the files. */
async function truth(root: string): Promise<Map<string, number[]>> {
  const store = await openStore({ root, parserVersion: PV, windowDays: null });
  const out = new Map<string, number[]>();
  for (const e of Object.values((await store.readManifest()).sessions)) {
    for (const g of e.generations) out.set(g, [...(await store.loadSegment(g)).summary]);
  }
  return out;
}

async function packed(root: string): Promise<Map<string, number[]>> {
  const store = await openStore({ root, parserVersion: PV, windowDays: null });
  return new Map([...(await store.loadSummaries())].map(([n, w]) => [n, [...w]]));
}

Deno.test("every publish adds its new generations' summaries; readers get them without opening a generation", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    await store.publish([
      update("replace", "a", { recs: records("a", 0, 3) }),
      update("replace", "b", { recs: records("b", 0, 2) }),
    ]);
    const m = await store.readManifest();
    await store.publish([
      update("append", "a", { base: m.sessions["codex:a"]!.generations, recs: records("a", 3, 1) }),
    ]);
    const want = await truth(root);
    assert.equal(want.size, 3);
    assert.deepEqual(await packed(root), want);
    // Appended, not rewritten: the file only grew.
    const before = (await Deno.stat(join(root, SUMMARY_PACK_FILE))).ino;
    await store.publish([update("replace", "c", { recs: records("c", 0, 1) })]);
    assert.equal((await Deno.stat(join(root, SUMMARY_PACK_FILE))).ino, before);
    assert.deepEqual(await packed(root), await truth(root));
  }));

Deno.test("a missing or damaged pack is read up to the damage and rebuilt whole by the next publish", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    for (const s of ["a", "b", "c", "d"]) {
      await store.publish([update("replace", s, { recs: records(s, 0, 2) })]);
    }
    const path = join(root, SUMMARY_PACK_FILE);
    const whole = await Deno.readFile(path);
    // A flipped byte in the third entry: the first two are still served.
    const damaged = whole.slice();
    let at = 16;
    for (let i = 0; i < 2; i++) at += 8 + new DataView(whole.buffer).getUint32(at, true);
    damaged[at + 20] = damaged[at + 20]! ^ 1;
    await Deno.writeFile(path, damaged);
    const r = await readPack(realFs, root);
    assert.equal(r.whole, false);
    assert.equal(r.summaries.size, 2);
    // A torn tail, garbage, and nothing at all: each is rebuilt by one publish.
    for (
      const bad of [whole.slice(0, whole.length - 3), new TextEncoder().encode("garbage"), null]
    ) {
      if (bad) await Deno.writeFile(path, bad);
      else await Deno.remove(path);
      // A fresh store instance: nothing cached from the previous write.
      const again = await openStore({ root, parserVersion: PV, windowDays: null });
      await again.publish([update("replace", "e", { recs: records("e", 0, 1), watermark: 9 })]);
      assert.equal((await readPack(realFs, root)).whole, true);
      assert.deepEqual(await packed(root), await truth(root));
    }
  }));

Deno.test("entries of generations no manifest names are dropped once they outweigh the live ones", () =>
  withTempDir(async (root) => {
    const w = new PackWriter(realFs, root, { minCompactBytes: 0 });
    const seg = (n: number) =>
      encodeSegment({
        schema: SEGMENT_SCHEMA,
        parser_version: PV,
        key: "codex:a",
        records: records("a", 0, n),
        marks: [],
      });
    const [a, b, c] = [seg(1), seg(2), seg(3)];
    await w.update(new Set([a.name, b.name]), [a, b]);
    assert.deepEqual([...(await readPack(realFs, root)).summaries.keys()], [a.name, b.name]);
    // a is dead now but does not outweigh b: appended, a kept.
    await w.update(new Set([b.name, c.name]), [c]);
    assert.deepEqual([...(await readPack(realFs, root)).summaries.keys()], [
      a.name,
      b.name,
      c.name,
    ]);
    // Only c is live: the dead a and b outweigh it and the pack is rewritten without them.
    await w.update(new Set([c.name]), []);
    assert.deepEqual([...(await readPack(realFs, root)).summaries.keys()], [c.name]);
  }));

Deno.test("a symlink planted at the pack's name is never read or written through", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    const target = join(root, "..", `outside-${crypto.randomUUID()}`);
    await Deno.writeTextFile(target, "keep me");
    try {
      const path = join(root, SUMMARY_PACK_FILE);
      await Deno.remove(path);
      await Deno.symlink(target, path);
      assert.equal((await store.loadSummaries()).size, 0);
      await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
      assert.equal(await Deno.readTextFile(target), "keep me");
      assert.ok(!(await Deno.lstat(path)).isSymlink, "a fresh pack was renamed over the link");
      assert.deepEqual(await packed(root), await truth(root));
    } finally {
      await Deno.remove(target);
    }
  }));
