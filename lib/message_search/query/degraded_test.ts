/**
 * The degraded contract (F8, types.ts): a page whose scan met a session in scope that it
 * could not search — a generation that fails to load, or a quarantined shard — is never
 * `ready`; it names those sessions, and the damage found is handed to onDamage.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GENERATIONS_DIR, openStore, type ShardDamage, type Store } from "../store/mod.ts";
import { FOLDED, H_TABLE } from "../store/segment_layout.ts";
import { createSearchEngine } from "./engine.ts";
import { rec } from "./_test_support.ts";

/** Publishes pi session `sid` with 3 records holding "needle", newest at `ts`. */
async function publish(store: Store, sid: string, ts: number) {
  const records = [0, 1, 2].map((i) =>
    rec(i, `needle ${sid} ${i}`, { session_id: sid, ts_ms: ts - 2 + i })
  );
  const r = await store.publish([{
    kind: "replace",
    key: `pi:${sid}`,
    source: "pi",
    session_id: sid,
    base: null,
    segment: { records, marks: [] },
    source_watermark: 3,
    source_fingerprint: "fp",
    cursors: {},
    meta: { project: `/p/${sid}`, title: null, parent_session_id: null, files: [] },
  }]);
  assert.deepEqual(r.rejected, []);
}

async function withStore(fn: (store: Store, root: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "intendant-degraded-" });
  try {
    const root = join(dir, "v1");
    await fn(await openStore({ root, parserVersion: 1, windowDays: null }), root);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function flip(store: Store, root: string, key: string): Promise<string> {
  const gen = (await store.readManifest()).sessions[key]!.generations[0]!;
  const path = join(root, GENERATIONS_DIR, gen);
  const bytes = await Deno.readFile(path);
  bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x20;
  await Deno.writeFile(path, bytes);
  return gen;
}

function engine(store: Store, found: ShardDamage[][]) {
  return createSearchEngine({
    store,
    windowDays: null,
    cursorKey: new Uint8Array(32).fill(3),
    onDamage: (f) => found.push([...f]),
    // These tests are about damage, not time: a first query on a loaded machine (lazy
    // module loads, cold JIT) can spend the default 150 ms, and a timeout wins the reason.
    timeBudgetMs: 10_000,
  });
}

Deno.test("a page that met a damaged generation is partial/degraded, names it and reports it", () =>
  withStore(async (store, root) => {
    for (const [sid, ts] of [["a", 30_000], ["b", 20_000], ["c", 10_000]] as const) {
      await publish(store, sid, ts);
    }
    const gen = await flip(store, root, "pi:b");
    const found: ShardDamage[][] = [];
    const e = engine(store, found);
    const page = await e.search({ q: "needle", limit: 10 });
    assert.equal(page.state, "partial");
    assert.equal(page.partial_reason, "degraded");
    assert.deepEqual(page.degraded, {
      count: 1,
      lost: 0,
      sessions: [{ session_key: "pi:b", source: "pi", reason: "damaged" }],
    });
    assert.deepEqual(page.groups.map((g) => g.session_key), ["pi:a", "pi:c"]);
    assert.deepEqual(found, [[{ key: "pi:b", generation: gen }]]);
    // Out of the request's scope (project filter): the damage cannot touch this page.
    const other = await e.search({ q: "needle", limit: 10, project: "/p/a" });
    assert.equal(other.state, "ready");
    assert.equal(other.degraded, undefined);
  }));

Deno.test("a quarantined shard in scope is reported as rebuilding, or lost once its source is gone", () =>
  withStore(async (store) => {
    await publish(store, "a", 30_000);
    await publish(store, "b", 20_000);
    const base = (await store.readManifest()).sessions["pi:b"]!.generations;
    const q = { kind: "quarantine" as const, key: "pi:b", source: "pi" as const, session_id: "b" };
    await store.publish([{ ...q, base }]);
    const found: ShardDamage[][] = [];
    const e = engine(store, found);
    const page = await e.search({ q: "needle", limit: 10 });
    assert.equal(page.partial_reason, "degraded");
    assert.deepEqual(page.degraded?.sessions, [
      { session_key: "pi:b", source: "pi", reason: "rebuilding" },
    ]);
    // Nothing failed to load: a quarantined shard is not new damage (no repair loop).
    assert.deepEqual(found, []);
    await store.publish([{ ...q, kind: "gone", base: [] }]);
    const lost = await e.search({ q: "needle", limit: 10 });
    assert.deepEqual(lost.degraded, {
      count: 1,
      lost: 1,
      sessions: [{ session_key: "pi:b", source: "pi", reason: "source_gone" }],
    });
    // A time bound that excludes it: complete again.
    const recent = await e.search({ q: "needle", limit: 10, since: 29_000 });
    assert.equal(recent.state, "ready");
  }));

Deno.test("damage past the page's early exit is not reported; the page that reaches it is", () =>
  withStore(async (store, root) => {
    for (const [sid, ts] of [["a", 30_000], ["b", 20_000], ["c", 10_000]] as const) {
      await publish(store, sid, ts);
    }
    await flip(store, root, "pi:c");
    const found: ShardDamage[][] = [];
    const e = engine(store, found);
    // limit 1: the page is full after "a", and "b" proves a next page exists; "c" (older
    // than both) cannot place a group on it.
    const page = await e.search({ q: "needle", limit: 1 });
    assert.equal(page.state, "ready");
    assert.equal(page.degraded, undefined);
    assert.deepEqual(found, []);
    // Its continuation reaches "c": that page says so, and keeps the ready page's cursor rule.
    const next = await e.search({ q: "needle", limit: 1, cursor: page.cursor });
    assert.equal(next.partial_reason, "degraded");
    assert.deepEqual(next.degraded?.sessions.map((s) => s.session_key), ["pi:c"]);
    assert.deepEqual(next.groups.map((g) => g.session_key), ["pi:b"]);
    assert.equal(next.cursor, null);
  }));

Deno.test("a generation swapped in under another session's name is damaged, never served as that session", () =>
  withStore(async (store, root) => {
    await publish(store, "a", 30_000);
    await publish(store, "b", 20_000);
    const m = await store.readManifest();
    const ga = m.sessions["pi:a"]!.generations[0]!;
    const gb = m.sessions["pi:b"]!.generations[0]!;
    // A whole, valid segment (every checksum holds) under b's name: a's records.
    await Deno.copyFile(join(root, GENERATIONS_DIR, ga), join(root, GENERATIONS_DIR, gb));
    const found: ShardDamage[][] = [];
    const page = await engine(store, found).search({ q: "needle" });
    assert.equal(page.state, "partial");
    assert.equal(page.partial_reason, "degraded");
    assert.deepEqual(page.groups.map((g) => g.session_key), ["pi:a"]);
    assert.deepEqual(page.degraded?.sessions.map((s) => s.session_key), ["pi:b"]);
    assert.deepEqual(found, [[{ key: "pi:b", generation: gb }]]);
  }));

Deno.test("a damaged block no query read is found after the query: dropped and reported", () =>
  withStore(async (store, root) => {
    // Two blocks: the needle's record and a long one, then a record of its own block.
    const records = [rec(0, "needle here"), rec(1, "x".repeat(9_000)), rec(2, "other words")];
    const r = await store.publish([{
      kind: "replace",
      key: "pi:s",
      source: "pi",
      session_id: "s",
      base: null,
      segment: { records, marks: [] },
      source_watermark: 3,
      source_fingerprint: "fp",
      cursors: {},
      meta: { project: null, title: null, parent_session_id: null, files: [] },
    }]);
    assert.deepEqual(r.rejected, []);
    const gen = (await store.readManifest()).sessions["pi:s"]!.generations[0]!;
    // The last byte of the folded text: the second block's, whose filter rules "needle" out.
    const path = join(root, GENERATIONS_DIR, gen);
    const bytes = await Deno.readFile(path);
    const dv = new DataView(bytes.buffer);
    const end = Number(dv.getBigUint64(H_TABLE + 16 * FOLDED, true)) +
      Number(dv.getBigUint64(H_TABLE + 16 * FOLDED + 8, true));
    bytes[end - 1] = bytes[end - 1]! ^ 0x01;
    await Deno.writeFile(path, bytes);
    const found: ShardDamage[][] = [];
    const e = engine(store, found);
    const page = await e.search({ q: "needle" });
    assert.equal(page.state, "ready", "the query never read the damaged block");
    assert.equal(page.groups[0]?.total_hits, 1);
    assert.equal(e.stats().shards, 1);
    for (let i = 0; i < 50 && found.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(found, [[{ key: "pi:s", generation: gen }]]);
    assert.equal(e.stats().shards, 0, "the damaged copy is not kept");
  }));
