import assert from "node:assert/strict";
import { join } from "node:path";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { DAY_MS, GC_GRACE_MS } from "./gc.ts";
import { openStore } from "./store.ts";

const T0 = Date.UTC(2026, 0, 1);

Deno.test("gc() keeps referenced and young generations, deletes old unreferenced ones", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    const m1 = await store.readManifest();
    const oldA = m1.sessions["codex:a"]!.generations[0]!;
    const oldB = m1.sessions["codex:b"]!.generations[0]!;
    await store.publish([update("replace", "a", { recs: records("a", 0, 2), watermark: 200 })]);
    await store.publish([update("replace", "b", { recs: records("b", 0, 2), watermark: 200 })]);
    const gen = (n: string) => join(root, "generations", n);
    // a's old generation is past the grace; b's is still inside it (a reader may hold it).
    const past = new Date(Date.now() - GC_GRACE_MS - 60_000);
    await Deno.utime(gen(oldA), past, past);
    const r = await store.gc();
    assert.deepEqual(r, {
      expiredSessions: 0,
      expiredTombstones: 0,
      deletedGenerations: 1,
      keptYoungUnreferenced: 1,
    });
    const left = new Set([...Deno.readDirSync(join(root, "generations"))].map((e) => e.name));
    assert.ok(!left.has(oldA) && left.has(oldB));
    const m2 = await store.readManifest();
    for (const e of Object.values(m2.sessions)) {
      for (const g of e.generations) await store.loadSegment(g);
    }
    // Referenced files are never deleted, however old.
    const ancient = new Date(0);
    for (const n of left) await Deno.utime(gen(n), ancient, ancient);
    const r2 = await store.gc();
    assert.equal(r2.deletedGenerations, 1);
    assert.equal((await store.verifyAll()).length, 0);
  }));

Deno.test("gc() expires sessions and tombstones past the window, keeps them with null", () =>
  withTempDir(async (root) => {
    let clock = T0;
    const now = () => clock;
    const windowed = await openStore({ root, parserVersion: PV, windowDays: 14, now });
    const forever = await openStore({ root, parserVersion: PV, windowDays: null, now });
    await windowed.publish([
      update("replace", "old", { recs: records("old", 0, 1, { ts: T0 - 20 * DAY_MS }) }),
      update("replace", "new", { recs: records("new", 0, 1, { ts: T0 - 2 * DAY_MS }) }),
      update("replace", "edge", { recs: records("edge", 0, 1, { ts: T0 - 14 * DAY_MS }) }),
    ]);
    await windowed.deleteSession("codex:del");
    const rev = (await windowed.readManifest()).revision;
    clock = T0 + 30 * DAY_MS;
    assert.deepEqual((await forever.gc()).expiredSessions, 0);
    assert.equal((await forever.readManifest()).revision, rev);
    clock = T0;
    const r = await windowed.gc();
    assert.equal(r.expiredSessions, 1);
    assert.equal(r.expiredTombstones, 0);
    const m = await windowed.readManifest();
    assert.deepEqual(Object.keys(m.sessions).sort(), ["codex:edge", "codex:new"]);
    assert.ok(m.revision > rev);
    clock = T0 + 14 * DAY_MS + 1;
    const r2 = await windowed.gc();
    assert.deepEqual([r2.expiredSessions, r2.expiredTombstones], [2, 1]);
    assert.deepEqual((await windowed.readManifest()).tombstones, {});
  }));
