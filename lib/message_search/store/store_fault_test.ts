/**
 * errno injection and generation corruption (reliability-plan A4, A6, A8): every fs op
 * of a publish fails in turn with each errno; the publish must throw a typed error, the
 * previous manifest must keep being served, and the next publish must recover.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ERRNOS, FaultFs, InjectedFsError } from "../../../tests/helpers/fault_fs.ts";
import { figure, STRESS } from "../../../tests/helpers/figures.ts";
import {
  a2Batch,
  copyDir,
  listTemps,
  prepareA2Base,
  PV,
  records,
  update,
  withTempDir,
} from "../../../tests/helpers/store_fixtures.ts";
import { isDeepStrictEqual } from "node:util";
import { JOURNAL_FILE } from "./journal.ts";
import { MANIFEST_FILE, parseManifestBytes } from "./manifest_io.ts";
import { CorruptGenerationError } from "./segments.ts";
import { openStore } from "./store.ts";

/**
 * Open fds pointing into `dir`. Counted by target, not in total: `deno test --parallel`
 * runs other test files in this same process, so the total moves on its own.
 */
function openFdsInside(dir: string): number {
  let n = 0;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (Deno.readLinkSync(`/proc/self/fd/${e.name}`).startsWith(dir + "/")) n++;
    } catch (err) {
      // The fd closed between readdir and readlink (another worker's): not ours.
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return n;
}

Deno.test("every fs op × every errno: typed error, old snapshot served, next publish recovers (A4)", () =>
  withTempDir(async (dir) => {
    let unhandled = 0;
    const onUnhandled = (e: PromiseRejectionEvent) => {
      unhandled++;
      e.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", onUnhandled);
    const base = join(dir, "base");
    await prepareA2Base(await openStore({ root: base, parserVersion: PV, windowDays: null }));
    const baseManifest =
      await (await openStore({ root: base, parserVersion: PV, windowDays: null }))
        .readManifest();
    const fs = new FaultFs();
    await copyDir(base, join(dir, "count"));
    const counting = await openStore({
      root: join(dir, "count"),
      fs,
      parserVersion: PV,
      windowDays: null,
    });
    const batch = a2Batch(await counting.readManifest());
    fs.arm(null);
    await counting.publish(batch);
    const n = fs.ops.length;
    // The commit point: the first op that can make the new manifest visible (a snapshot
    // or journal renamed in, or the delta line written to the journal).
    const commitOp = fs.ops.find((o) =>
      (o.op === "rename" && (o.to?.endsWith(MANIFEST_FILE) || o.to?.endsWith(JOURNAL_FILE))) ||
      (o.op === "writeAll" && o.path.endsWith(JOURNAL_FILE))
    )!.n;
    const bad = {
      untyped: 0,
      corrupt: 0,
      missingGens: 0,
      oldLost: 0,
      noRecovery: 0,
      fds: 0,
      temps: 0,
    };
    for (let k = 1; k <= n; k++) {
      for (const errno of ERRNOS) {
        const root = join(dir, `k${k}-${errno}`);
        await copyDir(base, root);
        const store = await openStore({ root, fs, parserVersion: PV, windowDays: null });
        const b = a2Batch(await store.readManifest());
        fs.arm({ at: k, action: errno });
        const err = await store.publish(b).then(() =>
          null, (e: unknown) => e);
        if (!(err instanceof InjectedFsError) || err.code !== errno) bad.untyped++;
        fs.arm(null);
        const raw = await Deno.readFile(join(root, MANIFEST_FILE));
        if (parseManifestBytes(raw).kind !== "ok") bad.corrupt++;
        // Before the commit point the old manifest must be served exactly.
        const served = await (await openStore({ root, parserVersion: PV, windowDays: null }))
          .readManifest();
        if (k < commitOp && !isDeepStrictEqual(served, baseManifest)) bad.oldLost++;
        bad.missingGens += (await store.verifyAll()).length;
        const again = await store.publish(a2Batch(await store.readManifest()));
        if (again.accepted.length !== 3) bad.noRecovery++;
        bad.fds += openFdsInside(root);
        bad.temps += listTemps(root).length;
        await Deno.remove(root, { recursive: true });
      }
    }
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
    figure(
      "A4",
      `fault points × errnos: ${n}×${ERRNOS.length}, corrupt manifests: ${bad.corrupt}, ` +
        `referenced-missing gens: ${bad.missingGens}, daemon exits: 0, ` +
        `unhandled rejections: ${unhandled}, fd leaks: ${bad.fds}, ` +
        `temps left after recovery sweep: ${bad.temps}`,
    );
    console.log(
      `A4 detail: untyped errors: ${bad.untyped}, old snapshot lost: ${bad.oldLost}, ` +
        `failed recoveries: ${bad.noRecovery}`,
    );
    assert.deepEqual(bad, {
      untyped: 0,
      corrupt: 0,
      missingGens: 0,
      oldLost: 0,
      noRecovery: 0,
      fds: 0,
      temps: 0,
    });
    assert.equal(unhandled, 0);
  }));

Deno.test("EIO on the snapshot temp's or the journal's fsync aborts the publish: no rename, no retry (A6)", () =>
  withTempDir(async (root) => {
    const fs = new FaultFs();
    const store = await openStore({ root, fs, parserVersion: PV, windowDays: null });
    // A fresh store's first publish writes a snapshot (manifest.json through a temp).
    const isManifestTemp = (p: string) => p.includes(`${MANIFEST_FILE}.tmp-`);
    fs.arm({ match: (o) => o.op === "sync" && isManifestTemp(o.path), action: "EIO" });
    await assert.rejects(
      store.publish([update("replace", "a", { recs: records("a", 0, 2) })]),
      { code: "EIO" },
    );
    const renames = fs.ops.filter((o) => o.op === "rename" && isManifestTemp(o.path)).length;
    const syncs = fs.ops.filter((o) => o.op === "sync" && isManifestTemp(o.path)).length;
    assert.deepEqual(listTemps(root), []);
    assert.equal((await store.readManifest()).revision, 0, "nothing was committed");
    // Later publishes append to the journal; its failed fsync is final too.
    fs.arm(null);
    await store.publish([update("replace", "a", { recs: records("a", 0, 2) })]);
    const before = await store.readManifest();
    const isJournal = (p: string) => p.endsWith(JOURNAL_FILE);
    fs.arm({ match: (o) => o.op === "sync" && isJournal(o.path), action: "EIO" });
    await assert.rejects(
      store.publish([update("replace", "b", { recs: records("b", 0, 2) })]),
      { code: "EIO" },
    );
    const jSyncs = fs.ops.filter((o) => o.op === "sync" && isJournal(o.path)).length;
    const jRenames = fs.ops.filter((o) =>
      o.op === "rename" && (o.to?.endsWith(MANIFEST_FILE) || o.to?.endsWith(JOURNAL_FILE))
    ).length;
    figure(
      "A6",
      `renames after failed fsync: ${renames + jRenames}, fsync retries: ${syncs - 1 + jSyncs - 1}`,
    );
    assert.equal(renames + jRenames, 0);
    assert.equal(syncs, 1);
    assert.equal(jSyncs, 1);
    // The unsynced line may be visible (it names only durable generations) or not; either
    // way the store reads as a valid manifest, and the next publish re-derives the data.
    const after = await store.readManifest();
    assert.ok(after.revision >= before.revision);
    fs.arm(null);
    const r = await store.publish([update("replace", "b", { recs: records("b", 0, 2) })]);
    assert.deepEqual(r.accepted, ["codex:b"]);
    assert.ok((await store.readManifest()).sessions["codex:b"]);
  }));

Deno.test("a flipped or truncated generation is detected, never served, healed by one sweep (A8)", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    const n = STRESS ? 100 : 20;
    const ups = Array.from(
      { length: n },
      (_, i) => update("replace", `s${i}`, { recs: records(`s${i}`, 0, 3) }),
    );
    await store.publish(ups);
    const m = await store.readManifest();
    const keys = Object.keys(m.sessions);
    for (const [i, key] of keys.entries()) {
      const path = join(root, "generations", m.sessions[key]!.generations[0]!);
      const bytes = await Deno.readFile(path);
      if (i % 2 === 0) {
        const at = (i * 7919) % bytes.length;
        bytes[at] = bytes[at]! ^ (1 << (i % 8));
        await Deno.writeFile(path, bytes);
      } else {
        await Deno.truncate(path, (i * 31) % bytes.length);
      }
    }
    const detected = await store.verifyAll();
    let served = 0;
    for (const key of keys) {
      const name = m.sessions[key]!.generations[0]!;
      const got = await store.loadSegment(name).then(() => true, (e) => {
        assert.ok(e instanceof CorruptGenerationError, String(e));
        return false;
      });
      if (got) served++;
    }
    // One sweep: drop what verifyAll reported, re-derive from source (same content, same name).
    await store.dropEntries(detected);
    const r = await store.publish(ups);
    const healed = (await store.verifyAll()).length === 0 && r.accepted.length === n;
    figure(
      "A8",
      `corrupt gens detected: ${Math.round((100 * detected.length) / n)}%, ` +
        `corrupted records served: ${served}, sweeps to heal: ${healed ? 1 : "more"}`,
    );
    assert.deepEqual(detected.sort(), keys.sort());
    assert.equal(served, 0);
    assert.ok(healed);
  }));

Deno.test("compaction over a corrupt base quarantines the entry so the next sweep rebuilds it", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    const m = await prepareA2Base(store);
    const big = m.sessions["codex:big"]!;
    await Deno.truncate(join(root, "generations", big.generations[3]!), 5);
    const r = await store.publish([a2Batch(m)[0]!]);
    assert.deepEqual(r.rejected, [{ key: "codex:big", reason: "corrupt_base" }]);
    // Kept and reported (F8), not dropped: it names no generation, has no cursors, and
    // its ts range still places it for readers.
    const q = (await store.readManifest()).sessions["codex:big"]!;
    assert.equal(typeof q.quarantined_at_ms, "number");
    assert.deepEqual(q.generations, []);
    assert.deepEqual(q.cursors, {});
    assert.equal(q.source_watermark, 0);
    assert.equal(q.newest_ts_ms, big.newest_ts_ms);
    assert.ok(r.revision > m.revision);
  }));
