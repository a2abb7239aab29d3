import assert from "node:assert/strict";
import { join } from "node:path";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { DAY_MS, GC_GRACE_MS } from "./gc.ts";
import { openStore } from "./store.ts";

const T0 = Date.UTC(2026, 0, 1);

Deno.test("gc() keeps referenced and recently retired generations, deletes old unreferenced ones", () =>
  withTempDir(async (root) => {
    // The store's clock runs ahead of the files' mtimes: every generation below is past
    // its creation grace, so only the retirement stamps decide.
    let clock = Date.now();
    const store = await openStore({ root, parserVersion: PV, windowDays: null, now: () => clock });
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    const m1 = await store.readManifest();
    const oldA = m1.sessions["codex:a"]!.generations[0]!;
    const oldB = m1.sessions["codex:b"]!.generations[0]!;
    await store.publish([update("replace", "a", { recs: records("a", 0, 2), watermark: 200 })]);
    assert.equal((await store.readManifest()).retired?.[oldA], clock);
    clock += GC_GRACE_MS + 60_000;
    await store.publish([update("replace", "b", { recs: records("b", 0, 2), watermark: 200 })]);
    const gen = (n: string) => join(root, "generations", n);
    // a's old generation was retired past the grace; b's just now (a reader may hold it),
    // although its file is as old as a's.
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
    // A file no manifest ever named (a lockless writer's, not yet published) keeps its
    // creation grace.
    const orphan = "0123456789abcdef.seg";
    clock += GC_GRACE_MS + 60_000;
    await Deno.writeTextFile(gen(orphan), "{}");
    await Deno.utime(gen(orphan), new Date(clock), new Date(clock));
    // Referenced files are never deleted, however old.
    const ancient = new Date(0);
    for (const n of left) await Deno.utime(gen(n), ancient, ancient);
    const r2 = await store.gc();
    assert.equal(r2.deletedGenerations, 1);
    assert.equal(r2.keptYoungUnreferenced, 1);
    assert.equal((await store.verifyAll()).length, 0);
    assert.ok(Deno.statSync(gen(orphan)).isFile);
    // Once every retirement is past the grace the next publish drops the stamps.
    await store.publish([update("replace", "c", { recs: records("c", 0, 1) })]);
    assert.equal((await store.readManifest()).retired, undefined);
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
