/**
 * "The lock is efficiency, not correctness" (reliability-plan A12, A13): with lock "none"
 * the publish gate alone must reject a stale writer and an older parser, and lockless
 * writers racing on one store must converge after one quiet sweep.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withoutSync } from "../../../tests/helpers/fault_fs.ts";
import { figure, STRESS } from "../../../tests/helpers/figures.ts";
import {
  listTemps,
  prng,
  PV,
  records,
  update,
  withTempDir,
} from "../../../tests/helpers/store_fixtures.ts";
import type { MessageRecord } from "../record.ts";
import { MANIFEST_FILE, parseManifestBytes } from "./manifest_io.ts";
import { openStore, type Store } from "./store.ts";
import { decodeRecords } from "./segment_view.ts";
import type { ShardUpdate } from "./types.ts";

Deno.test("without the lock, a writer that lost the race is rejected by the gate (A12)", () =>
  withTempDir(async (root) => {
    const open = (pv = PV) =>
      openStore({ root, parserVersion: pv, windowDays: null, lock: "none" });
    const [a, b, older] = [await open(), await open(), await open(PV - 1)];
    await a.publish([update("replace", "s", { recs: records("s", 0, 2), watermark: 100 })]);
    // A reads, stalls; B reads further and publishes; A resumes with its stale view.
    const seenByA = await a.readManifest();
    const rB = await b.publish([
      update("replace", "s", { recs: records("s", 0, 5), watermark: 300 }),
    ]);
    const rA = await a.publish([
      update("replace", "s", { recs: records("s", 0, 3), watermark: 200 }),
    ]);
    assert.deepEqual(rA.rejected, [{ key: "codex:s", reason: "stale_watermark" }]);
    const base = seenByA.sessions["codex:s"]!.generations;
    const rA2 = await a.publish([
      update("append", "s", { base, recs: records("s", 2, 1), watermark: 250 }),
    ]);
    assert.deepEqual(rA2.rejected, [{ key: "codex:s", reason: "base_moved" }]);
    const before = await Deno.readFile(join(root, MANIFEST_FILE));
    const rOld = await older.publish([update("replace", "s", { recs: [], watermark: 10_000 })]);
    const after = await Deno.readFile(join(root, MANIFEST_FILE));
    const m = await a.readManifest();
    const regressions = Number(m.revision < rB.revision) +
      Number(m.sessions["codex:s"]!.source_watermark !== 300);
    const clobbers = Number(m.parser_version !== PV) +
      Number(!before.every((x, i) => x === after[i]));
    figure(
      "A12",
      `revision/watermark regressions: ${regressions}, older-parser clobbers: ${clobbers}`,
    );
    assert.deepEqual(rOld.rejected, [{ key: "codex:s", reason: "newer_parser" }]);
    assert.equal(regressions, 0);
    assert.equal(clobbers, 0);
  }));

/** The sources the publishers index: per key, the records written so far. */
type Sources = Map<string, MessageRecord[]>;

/** What a sweep publishes for `key` given its entry and the source right now. */
function sweepUpdate(store: Store, sources: Sources, key: string, full: boolean) {
  return async (): Promise<ShardUpdate | null> => {
    const sid = key.slice("codex:".length);
    const src = sources.get(key)!;
    const entry = (await store.readManifest()).sessions[key];
    const have = entry?.records ?? 0;
    if (!full && entry && have < src.length) {
      return update("append", sid, {
        base: entry.generations,
        recs: src.slice(have),
        watermark: src.length,
      });
    }
    if (!full && entry && have === src.length) return null;
    return update("replace", sid, { recs: src, watermark: src.length });
  };
}

Deno.test("4 lockless publishers with mutating sources converge after one quiet sweep (A13)", () =>
  withTempDir(async (root) => {
    const keys = Array.from({ length: 8 }, (_, i) => `codex:k${i}`);
    const sources: Sources = new Map(keys.map((k) => [k, []]));
    const fs = withoutSync();
    const stores = await Promise.all(
      Array.from(
        { length: 4 },
        () => openStore({ root, fs, parserVersion: PV, windowDays: null, lock: "none" }),
      ),
    );
    const deadline = Date.now() + (STRESS ? 120_000 : 3_000);
    let publishes = 0;
    let rejections = 0;
    await Promise.all(stores.map(async (store, w) => {
      const rnd = prng(w + 1);
      while (Date.now() < deadline) {
        const key = keys[Math.floor(rnd() * keys.length)]!;
        // Source mutation: the session grows by 0–3 records.
        const src = sources.get(key)!;
        const sid = key.slice("codex:".length);
        const more = Math.floor(rnd() * 4);
        src.push(...records(sid, src.length, more, { ts: 1_000 }));
        const u = await sweepUpdate(store, sources, key, rnd() < 0.2)();
        if (!u) continue;
        const r = await store.publish([u]);
        publishes++;
        rejections += r.rejected.length;
      }
    }));
    // The quiet sweep: one writer, sources frozen, compare each shard with its source.
    const quiet = stores[0]!;
    const diverged = async () => {
      const out: string[] = [];
      const m = await quiet.readManifest();
      for (const key of keys) {
        const e = m.sessions[key];
        const ids: string[] = [];
        for (const g of e?.generations ?? []) {
          ids.push(...decodeRecords(await quiet.loadSegment(g)).map((r) => r.id));
        }
        if (ids.join() !== sources.get(key)!.map((r) => r.id).join()) out.push(key);
      }
      return out;
    };
    const before = await diverged();
    let sweeps = 0;
    for (; sweeps < 3 && (await diverged()).length > 0; sweeps++) {
      for (const key of await diverged()) {
        const u = await sweepUpdate(quiet, sources, key, true)();
        await quiet.publish([u!]);
      }
    }
    const raw = await Deno.readFile(join(root, MANIFEST_FILE));
    const valid = parseManifestBytes(raw).kind === "ok";
    const missing = (await quiet.verifyAll()).length;
    figure(
      "A13",
      `final == rebuild: ${sweeps <= 1 ? "yes" : "no"}, sweeps to converge: ${sweeps}`,
    );
    console.log(
      `A13 detail: publishes: ${publishes}, rejected by the gate: ${rejections}, shards ` +
        `diverged before the quiet sweep: ${before.length}, final manifest valid: ` +
        `${valid ? "yes" : "no"}, missing generations: ${missing}`,
    );
    assert.ok(valid);
    assert.equal(missing, 0);
    assert.ok(sweeps <= 1);
    assert.deepEqual(await diverged(), []);
    assert.deepEqual(listTemps(root), []);
  }));
