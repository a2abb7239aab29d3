/**
 * The degraded contract (F8, types.ts): a page whose scan met a session in scope that it
 * could not search — a generation that fails to load, or a quarantined shard — is never
 * `ready`; it names those sessions, and the damage found is handed to onDamage.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GENERATIONS_DIR, openStore, type ShardDamage, type Store } from "../store/mod.ts";
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
