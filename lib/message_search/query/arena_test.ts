import assert from "node:assert/strict";
import { join } from "node:path";
import type { MessageRecord, SupersessionMark } from "../record.ts";
import { openStore, type Store } from "../store/mod.ts";
import { Arena } from "./arena.ts";
import { rec } from "./_test_support.ts";

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-arena-" });
  try {
    const store = await openStore({ root: join(dir, "v1"), parserVersion: 1, windowDays: null });
    await fn(store);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function publish(
  store: Store,
  sid: string,
  records: MessageRecord[],
  marks: SupersessionMark[] = [],
  base: string[] | null = null,
): Promise<string[]> {
  const r = await store.publish([{
    kind: base ? "append" : "replace",
    key: `pi:${sid}`,
    source: "pi",
    session_id: sid,
    base,
    segment: { records: records.map((x) => ({ ...x, session_id: sid })), marks },
    source_watermark: records.length + (base?.length ?? 0) * 1000,
    source_fingerprint: "fp",
    cursors: {},
    meta: { project: null, title: null, parent_session_id: null, files: [] },
  }]);
  assert.deepEqual(r.rejected, []);
  return (await store.readManifest()).sessions[`pi:${sid}`]!.generations;
}

const texts = (n: number, len: number) =>
  Array.from({ length: n }, (_, i) => rec(i, `message ${i} `.padEnd(len, "x")));

/** `count` one-segment sessions of equal size, and an arena with room for 3.5 of them. */
async function sessionsAndArena(store: Store, count: number) {
  const names: string[] = [];
  for (let s = 0; s < count; s++) names.push(...await publish(store, `s${s}`, texts(20, 1000)));
  const probe = new Arena(1 << 30);
  const one = (await probe.load(store, names[0]!)).entry.bytes;
  return { names, arena: new Arena(one * 3.5) };
}

Deno.test("a scan larger than the cap keeps what is resident for the next scan (no LRU flush)", () =>
  withStore(async (store) => {
    const { names, arena } = await sessionsAndArena(store, 8);
    // The same scan over 8 entries, three times: LRU would evict each before its next use.
    const missesOf = async () => {
      const before = arena.stats().misses;
      const scan = arena.beginScan();
      for (const n of names) await arena.load(store, n, scan);
      return arena.stats().misses - before;
    };
    assert.equal(await missesOf(), 8);
    const kept = names.filter((n) => arena.has(n));
    assert.deepEqual(kept, names.slice(0, 3), "the first three stay; the rest are handed over");
    assert.equal(await missesOf(), 5, "the resident three are hits the second time");
    assert.equal(await missesOf(), 5);
    assert.ok(arena.stats().bytes <= arena.stats().capBytes);
    // A load outside any scan (or a new scan's first loads) still evicts by recency.
    await arena.load(store, names[7]!);
    assert.equal(arena.has(names[7]!), true);
    assert.equal(arena.stats().shards, 3);
    // A new scan may evict what the previous one used, least recently used first.
    const scan = arena.beginScan();
    await arena.load(store, names[5]!, scan);
    assert.equal(arena.has(names[5]!), true);
    assert.equal(arena.has(names[1]!), false);
    assert.equal(arena.has(names[2]!), true);
  }));

Deno.test("the arena keeps entries within its byte cap, evicting least recently used first", () =>
  withStore(async (store) => {
    const { names, arena } = await sessionsAndArena(store, 6);
    for (const n of names.slice(0, 3)) await arena.load(store, n);
    assert.equal(arena.stats().shards, 3);
    arena.get(names[0]!); // most recently used now: names[1] is the eviction victim
    await arena.load(store, names[3]!);
    assert.equal(arena.has(names[1]!), false);
    assert.equal(arena.has(names[0]!), true);
    for (const n of names) await arena.load(store, n);
    const st = arena.stats();
    assert.ok(st.bytes <= st.capBytes, `${st.bytes} <= ${st.capBytes}`);
    assert.equal(st.shards, 3);
    assert.ok(st.evictions >= 3);
    // An entry larger than the whole cap is served but not kept.
    const tiny = new Arena(100);
    const r = await tiny.load(store, names[0]!);
    assert.equal(r.entry.count, 20);
    assert.equal(tiny.stats().shards, 0);
    assert.equal(tiny.stats().bytes, 0);
  }));

const CHILD = new URL("../../../tests/helpers/arena_memory_child.ts", import.meta.url).pathname;

Deno.test("resident bytes are real: the arena counts the buffers its segments hold, and little else is held", () =>
  withStore(async (store) => {
    for (let s = 0; s < 12; s++) await publish(store, `m${s}`, texts(400, 600));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--v8-flags=--expose-gc", CHILD, store.root, "1"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assert.ok(out.success, err);
    const m = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    assert.equal(m.shards, 12);
    assert.equal(m.kept, true);
    // The segments' buffers are the whole resident size: what the arena accounts (plus
    // the summaries it keeps, also outside the cap) is what the process holds outside
    // V8's heap, within a few per cent…
    const accounted = m.bytes + m.summaryBytes;
    assert.ok(
      Math.abs(m.external - accounted) <= 0.05 * accounted,
      `external ${m.external} vs accounted ${accounted}`,
    );
    // …and no per-record objects sit in the heap beside them: a few KiB a view and the
    // loader's compiled code (resident parsed records held ~1.5× their text: MiBs here).
    assert.ok(m.heap <= 0.1 * m.bytes, `heap ${m.heap} vs ${m.bytes} resident`);
  }));

Deno.test("concurrent loads of one generation read it once; warm loads read nothing", () =>
  withStore(async (store) => {
    const [name] = await publish(store, "a", texts(50, 200));
    const arena = new Arena(1 << 30);
    const [x, y] = await Promise.all([arena.load(store, name!), arena.load(store, name!)]);
    assert.equal(x.entry, y.entry);
    assert.equal(arena.stats().misses, 1);
    assert.ok(x.freshBytes + y.freshBytes > 10_000, "the reader counts the file's bytes");
    assert.equal(Math.min(x.freshBytes, y.freshBytes), 0, "the joiner read nothing");
    const warm = await arena.load(store, name!);
    assert.equal(warm.freshBytes, 0);
    const st = arena.stats();
    const file = (await Deno.stat(join(store.root, "generations", name!))).size;
    assert.equal(st.loadedBytes, file, "exactly the file's bytes");
  }));

Deno.test("active flags are derived once per generations list and follow later marks", () =>
  withStore(async (store) => {
    const g1 = await publish(store, "m", texts(4, 10));
    const arena = new Arena(1 << 30);
    const e1 = [(await arena.load(store, g1[0]!)).entry];
    assert.equal(
      arena.activeFor("pi:m", { gens: g1, entries: e1 }),
      null,
      "no marks: all active, nothing stored",
    );
    // An appended segment supersedes records of the first one.
    const mark: SupersessionMark = { kind: "record_ids", after_order: 4, ids: ["r1", "r2"] };
    const g2 = await publish(store, "m", [rec(4, "after")], [mark], g1);
    const e2 = [];
    for (const g of g2) e2.push((await arena.load(store, g)).entry);
    const flags = arena.activeFor("pi:m", { gens: g2, entries: e2 })!;
    assert.deepEqual(flags.map((a) => [...a]), [[1, 0, 0, 1], [1]]);
    assert.equal(
      arena.activeFor("pi:m", { gens: g2, entries: e2 }),
      flags,
      "cached for the same list",
    );
    assert.equal(arena.stats().activeCached, 1);
    arena.pruneActive(new Set());
    assert.equal(arena.stats().activeCached, 0);
  }));

Deno.test("the arena predicts load cost from its own loads and remembers deferred generations", () =>
  withStore(async (store) => {
    const names = await publish(store, "s0", texts(50, 200));
    const arena = new Arena(1 << 30);
    const before = arena.loadCostMs(1000);
    assert.ok(before > 0, "a default rate before any load");
    arena.defer(names[0]!);
    assert.equal(arena.wasDeferred(names[0]!), true);
    await arena.load(store, names[0]!);
    assert.equal(arena.wasDeferred(names[0]!), false, "a load clears the deferral");
    assert.equal(arena.residentRecords(names[0]!), 50);
    assert.ok(arena.loadCostMs(1000) > 0 && Number.isFinite(arena.loadCostMs(1000)));
    arena.defer("ffffffffffffffff.json");
    arena.pruneSummaries(new Set(names));
    assert.equal(arena.wasDeferred("ffffffffffffffff.json"), false, "pruned with its summary");
  }));
