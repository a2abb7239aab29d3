/**
 * The "quarantine" update (F8): a shard found damaged stops naming its generations and
 * loses its cursors and watermark through the ordinary publish path, so the next sweep's
 * replace re-derives it; the damaged file is retired (left for GC, never served), and a
 * same-content re-derivation rewrites it under the same name.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { GENERATIONS_DIR } from "./segments.ts";
import { openStore } from "./store.ts";
import { decodeRecords } from "./segment_view.ts";

function open(root: string, now = () => 1_700_000_100_000) {
  return openStore({ root, parserVersion: PV, windowDays: null, now });
}

Deno.test("a quarantine over the entry's generations empties the shard and a replace heals it", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    const recs = records("a", 0, 3, { ts: 1_700_000_000_000 });
    await store.publish([update("replace", "a", { recs, watermark: 500 })]);
    const before = (await store.readManifest()).sessions["codex:a"]!;
    const gen = before.generations[0]!;
    const path = join(root, GENERATIONS_DIR, gen);
    const bytes = await Deno.readFile(path);
    bytes[20] = bytes[20]! ^ 0x10;
    await Deno.writeFile(path, bytes);

    const r = await store.publish([update("quarantine", "a", { base: before.generations })]);
    assert.deepEqual(r.accepted, ["codex:a"]);
    const m = await store.readManifest();
    const q = m.sessions["codex:a"]!;
    assert.equal(q.quarantined_at_ms, 1_700_000_100_000);
    assert.deepEqual(q.generations, []);
    assert.equal(q.records, 0);
    assert.deepEqual(q.cursors, {});
    assert.equal(q.state, null);
    assert.equal(q.source_watermark, 0);
    assert.equal(q.source_fingerprint, "");
    // What still places it for readers and retention.
    assert.equal(q.newest_ts_ms, before.newest_ts_ms);
    assert.deepEqual(q.meta, before.meta);
    // The damaged file is retired (GC's grace clock), not referenced, not deleted yet.
    assert.ok(m.retired?.[gen] !== undefined);
    await Deno.stat(path);
    assert.deepEqual(await store.verifyAll(), []);

    // A reopened store (a full read of snapshot + journal) still sees the quarantine.
    const again = await open(root);
    assert.equal(
      (await again.readManifest()).sessions["codex:a"]!.quarantined_at_ms,
      q.quarantined_at_ms,
    );

    // The sweep's replace re-derives it: a lower watermark than before passes the gate
    // (the quarantine dropped it), the same content is rewritten under the same name.
    const healed = await again.publish([update("replace", "a", { recs, watermark: 500 })]);
    assert.deepEqual(healed.accepted, ["codex:a"]);
    const h = (await again.readManifest()).sessions["codex:a"]!;
    assert.equal(h.quarantined_at_ms, undefined);
    assert.deepEqual(h.generations, [gen]);
    assert.equal(h.records, 3);
    assert.deepEqual(decodeRecords(await again.loadSegment(gen)).map((x) => x.order), [0, 1, 2]);
  }));

Deno.test("a quarantine is rejected over a moved base and is a no-op on a quarantined entry", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    await store.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    const old = (await store.readManifest()).sessions["codex:a"]!.generations;
    await store.publish([update("replace", "a", { recs: records("a", 0, 2), watermark: 200 })]);
    const moved = await store.publish([update("quarantine", "a", { base: old })]);
    assert.deepEqual(moved.rejected, [{ key: "codex:a", reason: "base_moved" }]);
    const missing = await store.publish([update("quarantine", "zz", { base: [] })]);
    assert.deepEqual(missing.rejected, [{ key: "codex:zz", reason: "base_moved" }]);

    const cur = (await store.readManifest()).sessions["codex:a"]!.generations;
    const first = await store.publish([update("quarantine", "a", { base: cur })]);
    const second = await store.publish([update("quarantine", "a", { base: [] })]);
    assert.deepEqual(second.accepted, ["codex:a"]);
    assert.equal(second.revision, first.revision, "nothing written for a repeated quarantine");
  }));

Deno.test("a quarantined shard whose sources vanish stays quarantined (lost), and a tombstone wins", () =>
  withTempDir(async (root) => {
    const store = await open(root);
    await store.publish([
      update("replace", "a", { recs: records("a", 0, 1) }),
      update("replace", "b", { recs: records("b", 0, 1) }),
    ]);
    const m = await store.readManifest();
    await store.publish([
      update("quarantine", "a", { base: m.sessions["codex:a"]!.generations }),
      update("quarantine", "b", { base: m.sessions["codex:b"]!.generations }),
    ]);
    const r = await store.publish([update("gone", "a", { base: [] })]);
    assert.deepEqual(r.accepted, ["codex:a"]);
    const a = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(a.source_gone, true);
    assert.equal(typeof a.quarantined_at_ms, "number");
    await store.deleteSession("codex:b");
    const t = await store.publish([update("quarantine", "b", { base: [] })]);
    assert.deepEqual(t.rejected, [{ key: "codex:b", reason: "tombstoned" }]);
  }));
