import assert from "node:assert/strict";
import { join } from "node:path";
import { StalePublishError } from "../../errors.ts";
import {
  listQuarantine,
  PV,
  records,
  update,
  withTempDir,
} from "../../../tests/helpers/store_fixtures.ts";
import { COMPACT_MAX_SEGMENTS } from "./_apply_update.ts";
import { MANIFEST_FILE } from "./manifest_io.ts";
import { openStore, type StoreOptions } from "./store.ts";
import { decodeRecords } from "./segment_view.ts";

function open(root: string, o: Partial<StoreOptions> = {}) {
  return openStore({ root, parserVersion: PV, windowDays: 14, ...o });
}

Deno.test("publish() replace writes a verified segment before the manifest that names it", () =>
  withTempDir(async (root) => {
    const store = await open(root, { now: () => 5_000 });
    const recs = [...records("a", 0, 2, { ts: 300 }), ...records("a", 2, 1, { ts: 100 })];
    const r = await store.publish([update("replace", "a", { recs, skipped: { bad_json: 2 } })]);
    assert.deepEqual(r, { revision: 5_000, accepted: ["codex:a"], rejected: [] });
    const e = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(e.generations.length, 1);
    assert.equal(e.records, 3);
    assert.equal(e.newest_ts_ms, 301);
    assert.equal(e.oldest_ts_ms, 100);
    assert.equal(e.source_watermark, 100);
    assert.deepEqual(e.skipped, { bad_json: 2 });
    assert.equal(e.source_gone, false);
    assert.equal(e.published_at_ms, 5_000);
    const seg = await store.loadSegment(e.generations[0]!);
    assert.deepEqual(decodeRecords(seg).map((x) => x.order), [0, 1, 2]);
    assert.equal(seg.parserVersion, PV);
    assert.equal(seg.key, "codex:a");
  }));

Deno.test("publish() append adds a segment; touch and gone change no generations", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    await store.publish([update("replace", "a", { recs: records("a", 0, 2, { ts: 1000 }) })]);
    let e = (await store.readManifest()).sessions["codex:a"]!;
    const r = await store.publish([
      update("append", "a", {
        base: e.generations,
        recs: records("a", 2, 3, { ts: 500 }),
        watermark: 200,
        skipped: { torn: 1 },
      }),
    ]);
    assert.deepEqual(r.accepted, ["codex:a"]);
    e = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(e.generations.length, 2);
    assert.equal(e.records, 5);
    assert.equal(e.newest_ts_ms, 1001);
    assert.equal(e.oldest_ts_ms, 500);
    assert.deepEqual(e.skipped, { torn: 1 });
    const gens = e.generations;
    await store.publish([
      update("touch", "a", { base: gens, watermark: 300, skipped: { torn: 2 } }),
    ]);
    e = (await store.readManifest()).sessions["codex:a"]!;
    assert.deepEqual(e.generations, gens);
    assert.equal(e.source_watermark, 300);
    assert.deepEqual(e.skipped, { torn: 3 });
    // An empty append is a touch: no generation written.
    await store.publish([update("append", "a", { base: gens, recs: [], watermark: 310 })]);
    e = (await store.readManifest()).sessions["codex:a"]!;
    assert.deepEqual(e.generations, gens);
    assert.equal(e.source_watermark, 310);
    assert.equal(e.records, 5);
    await store.publish([{ ...update("gone", "a", { base: gens }), cursors: undefined }]);
    e = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(e.source_gone, true);
    assert.deepEqual(e.generations, gens);
    assert.equal(Object.keys(e.cursors).length, 1);
    assert.equal([...Deno.readDirSync(join(root, "generations"))].length, 2);
  }));

Deno.test("publish() compacts an entry past 16 segments into one, records in order", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    for (let i = 1; i <= COMPACT_MAX_SEGMENTS; i++) {
      const base = (await store.readManifest()).sessions["codex:a"]!.generations;
      const r = await store.publish([update("append", "a", { base, recs: records("a", i, 1) })]);
      assert.deepEqual(r.accepted, ["codex:a"]);
      const e = (await store.readManifest()).sessions["codex:a"]!;
      assert.equal(e.generations.length, i < COMPACT_MAX_SEGMENTS ? i + 1 : 1);
    }
    const e = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(e.records, COMPACT_MAX_SEGMENTS + 1);
    const seg = await store.loadSegment(e.generations[0]!);
    assert.deepEqual(
      decodeRecords(seg).map((x) => x.order),
      [...Array(COMPACT_MAX_SEGMENTS + 1).keys()],
    );
  }));

Deno.test("revision is monotonic even when the clock stalls or goes backwards (I3)", () =>
  withTempDir(async (root) => {
    let clock = 10_000;
    const store = await open(root, { now: () => clock });
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      if (i === 3) clock = 1_000;
      const r = await store.publish([update("replace", `s${i}`, { recs: records(`s${i}`, 0, 1) })]);
      seen.push(r.revision);
    }
    assert.deepEqual(seen, [10_000, 10_001, 10_002, 10_003, 10_004]);
    await store.deleteSession("codex:s0");
    await store.dropEntries(["codex:s1"]);
    assert.equal((await store.readManifest()).revision, 10_006);
  }));

Deno.test("a deleted session stays deleted until its tombstone expires with the window", () =>
  withTempDir(async (root) => {
    let clock = Date.UTC(2026, 0, 1);
    const store = await open(root, { now: () => clock, windowDays: 14 });
    const recs = () => records("a", 0, 1, { ts: clock });
    await store.publish([update("replace", "a", { recs: recs() })]);
    await store.deleteSession("codex:a");
    const m = await store.readManifest();
    assert.equal(m.sessions["codex:a"], undefined);
    assert.equal(m.tombstones["codex:a"], clock);
    const r = await store.publish([update("replace", "a", { recs: recs(), watermark: 999 })]);
    assert.deepEqual(r.rejected, [{ key: "codex:a", reason: "tombstoned" }]);
    clock += 15 * 86_400_000;
    const g = await store.gc();
    assert.equal(g.expiredTombstones, 1);
    const r2 = await store.publish([update("replace", "a", { recs: recs() })]);
    assert.deepEqual(r2.accepted, ["codex:a"]);
  }));

Deno.test("publish() rejects a lower watermark over the same source state, accepts a rebuild", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    const recs = records("a", 0, 1);
    await store.publish([update("replace", "a", { recs, watermark: 500 })]);
    const stale = await store.publish([update("replace", "a", { recs, watermark: 400 })]);
    assert.deepEqual(stale.rejected, [{ key: "codex:a", reason: "stale_watermark" }]);
    const refp = await store.publish([
      update("replace", "a", { recs, watermark: 300, fingerprint: "fp-2" }),
    ]);
    assert.deepEqual(refp.accepted, ["codex:a"]);
    const files = await store.publish([
      update("replace", "a", { recs, watermark: 200, fingerprint: "fp-2", files: ["x", "y"] }),
    ]);
    assert.deepEqual(files.accepted, ["codex:a"]);
    assert.equal((await store.readManifest()).sessions["codex:a"]!.source_watermark, 200);
  }));

Deno.test("append/touch/gone are rejected when the base moved or the entry is missing", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    const old = (await store.readManifest()).sessions["codex:a"]!.generations;
    await store.publish([update("replace", "a", { recs: records("a", 0, 2), watermark: 200 })]);
    for (const kind of ["append", "touch", "gone"] as const) {
      const r = await store.publish([update(kind, "a", { base: old, recs: records("a", 9, 1) })]);
      assert.deepEqual(r.rejected, [{ key: "codex:a", reason: "base_moved" }], kind);
      const n = await store.publish([update(kind, "zz", { base: null, recs: [] })]);
      assert.deepEqual(n.rejected, [{ key: "codex:zz", reason: "base_moved" }], kind);
    }
    // A replace for a dropped entry is accepted whatever base it carries.
    await store.dropEntries(["codex:a"]);
    const r = await store.publish([
      update("replace", "a", { base: old, recs: records("a", 0, 1) }),
    ]);
    assert.deepEqual(r.accepted, ["codex:a"]);
  }));

Deno.test("a newer parser's manifest is served read-only and never overwritten", () =>
  withTempDir(async (root) => {
    const newer = await open(root, { parserVersion: PV + 1 });
    await newer.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    const before = await Deno.readFile(join(root, MANIFEST_FILE));
    const store = await open(root, { now: () => Date.now() + 365 * 86_400_000 });
    assert.equal((await store.readManifest()).parser_version, PV + 1);
    const r = await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    assert.deepEqual(r.rejected, [{ key: "codex:b", reason: "newer_parser" }]);
    await assert.rejects(store.deleteSession("codex:a"), StalePublishError);
    await store.dropEntries(["codex:a"]);
    const g = await store.gc();
    assert.equal(g.expiredSessions, 0);
    assert.deepEqual(await Deno.readFile(join(root, MANIFEST_FILE)), before);
  }));

Deno.test("an older parser's manifest is rebuilt from empty, tombstones kept", () =>
  withTempDir(async (root) => {
    const older = await open(root, { parserVersion: PV - 1 });
    await older.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    await older.deleteSession("codex:gone");
    const store = await open(root);
    const r = await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    assert.deepEqual(r.accepted, ["codex:b"]);
    const m = await store.readManifest();
    assert.equal(m.parser_version, PV);
    assert.deepEqual(Object.keys(m.sessions), ["codex:b"]);
    assert.deepEqual(Object.keys(m.tombstones), ["codex:gone"]);
  }));

Deno.test("a corrupt manifest is quarantined and the store restarts past the old revision", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    const { revision } = await store.publish([
      update("replace", "a", { recs: records("a", 0, 1) }),
    ]);
    await Deno.writeTextFile(join(root, MANIFEST_FILE), '{"schema":1,"revis');
    const m = await store.readManifest();
    assert.deepEqual(m.sessions, {});
    assert.ok(m.revision >= revision);
    assert.equal(listQuarantine(root).length, 1);
    const r = await store.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    assert.ok(r.revision > m.revision);
  }));

Deno.test("publish() rejects a segment that fails the schema and writes nothing", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    const bad = records("a", 0, 1);
    (bad[0] as { ts_ms: number }).ts_ms = 1.5;
    const r = await store.publish([update("replace", "a", { recs: bad })]);
    assert.deepEqual(r, {
      revision: 0,
      accepted: [],
      rejected: [{ key: "codex:a", reason: "invalid" }],
    });
    assert.deepEqual([...Deno.readDirSync(join(root, "generations"))], []);
    await assert.rejects(store.publish([{ ...update("replace", "a"), key: "codex:b" }]), TypeError);
    await assert.rejects(
      store.publish([{ ...update("append", "a"), segment: undefined }]),
      TypeError,
    );
    await assert.rejects(store.deleteSession(""), TypeError);
  }));

Deno.test("openStore() validates its options", async () => {
  const base = { root: "/nonexistent/x", parserVersion: 1, windowDays: 14 };
  await assert.rejects(openStore({ ...base, parserVersion: -1 }), RangeError);
  await assert.rejects(openStore({ ...base, windowDays: 0 }), RangeError);
  await assert.rejects(openStore({ ...base, root: "" }), TypeError);
  await assert.rejects(openStore({ ...base, lockWaitMs: -5 }), RangeError);
});
