import assert from "node:assert/strict";
import { join } from "node:path";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { parseManifestBytes } from "./manifest_io.ts";
import { entryJson, plainEntry, ResidentEntry, residentEntry } from "./resident_entry.ts";
import { openStore } from "./store.ts";
import type { ManifestEntry } from "./types.ts";

const CHILD = new URL("../../../tests/helpers/manifest_heap_child.ts", import.meta.url).pathname;

/** A Claude-like extractor state: a sliding window of [uuid, parent uuid, flag] nodes. */
function dagState(seed: number, nodes = 60): unknown {
  const uuid = (i: number) =>
    `${(seed * 7919 + i).toString(16).padStart(8, "0")}-4d2a-4b1c-9e0f-${
      (i * 104729 + seed).toString(16).padStart(12, "0")
    }`;
  const win = Array.from({ length: nodes }, (_, i) => [uuid(i + 1), uuid(i), i % 3 === 0 ? 0 : 1]);
  return { v: 1, lane: { nodes, lastConv: uuid(nodes), locked: false, win }, title: "café 東京" };
}

function entry(id: string, state: unknown): ManifestEntry {
  return {
    source: "codex",
    session_id: id,
    generations: ["0123456789abcdef.seg"],
    records: 3,
    newest_ts_ms: 1_700_000_000_000,
    oldest_ts_ms: 1_699_000_000_000,
    source_watermark: 512,
    source_fingerprint: "fp",
    cursors: { "/h/a.jsonl": update("touch", id).cursors!["rollout.jsonl"]! },
    state,
    source_gone: false,
    meta: { project: "/p", title: "t", parent_session_id: null, files: ["/h/a.jsonl"] },
    skipped: { malformed_line: 2 },
    published_at_ms: 1_700_000_000_001,
  };
}

Deno.test("a resident entry reads back as the entry it was made from, a fresh state per access", () => {
  const plain = entry("s1", dagState(1));
  const r = residentEntry(plain);
  assert.ok(r instanceof ResidentEntry);
  assert.deepEqual(plainEntry(r), plain);
  assert.deepEqual(r.cursors, plain.cursors);
  assert.deepEqual(r.state, plain.state);
  // Each access parses the state anew: a caller that mutates it changes nothing resident.
  (r.state as { v: number }).v = 99;
  assert.deepEqual(r.state, plain.state);
  assert.notEqual(r.state, r.state);
  // Serialized, it is the entry's JSON (toJSON and the splicing writer agree).
  assert.deepEqual(JSON.parse(JSON.stringify(r)), plain);
  assert.deepEqual(JSON.parse(entryJson(r)), plain);
  assert.equal(entryJson(plain), JSON.stringify(plain));
  // Two residents are deep-equal exactly when their entries are (the texts are compared).
  assert.deepEqual(residentEntry(entry("s1", dagState(1))), residentEntry(plain));
  assert.notDeepStrictEqual(residentEntry(entry("s1", dagState(2))), residentEntry(plain));
  // A quarantined entry keeps its optional field; an entry without state has none.
  const q = residentEntry({ ...plain, quarantined_at_ms: 5, state: undefined });
  assert.equal(q.quarantined_at_ms, 5);
  assert.equal(q.state, undefined);
  assert.ok(!("state" in JSON.parse(entryJson(q))));
});

Deno.test("the store serves resident entries, equal through the snapshot, the journal and its cache", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null, cacheReads: true });
    for (let i = 0; i < 6; i++) {
      const u = update("replace", `s${i}`, { recs: records(`s${i}`, 0, 1) });
      await store.publish([{ ...u, state: dagState(i, 20) }]);
    }
    const base = (await store.readManifest()).sessions["codex:s2"]!.generations;
    // An append (a journal patch of the entry) and a new state.
    await store.publish([{
      ...update("append", "s2", { base, recs: records("s2", 1, 1), watermark: 200 }),
      state: dagState(22, 21),
    }]);
    const cached = await store.readManifest();
    const fresh = await (await openStore({ root, parserVersion: PV, windowDays: null }))
      .readManifest();
    for (const m of [cached, fresh]) {
      for (const e of Object.values(m.sessions)) assert.ok(e instanceof ResidentEntry);
      assert.deepEqual(m.sessions["codex:s2"]!.state, dagState(22, 21));
      assert.equal(m.sessions["codex:s2"]!.source_watermark, 200);
    }
    assert.deepEqual(fresh, cached);
    // The snapshot as the reader parses it: the same entries.
    const snap = parseManifestBytes(await Deno.readFile(join(root, "manifest.json")));
    assert.equal(snap.kind, "ok");
  }));

Deno.test("the read manifest's resident heap is at most 0.6× the same manifest as plain objects (issue 16)", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    const batch = [];
    for (let i = 0; i < 300; i++) {
      const u = update("replace", `s${i}`, { recs: records(`s${i}`, 0, 1) });
      batch.push({ ...u, state: dagState(i) });
    }
    await store.publish(batch);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--v8-flags=--expose-gc", CHILD, root, String(PV)],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const { resident, plain } = JSON.parse(new TextDecoder().decode(out.stdout));
    const ratio = resident / plain;
    console.log(
      `manifest of 300 sessions: resident ${(resident / 1024).toFixed(0)} KiB, ` +
        `as plain objects ${(plain / 1024).toFixed(0)} KiB (×${ratio.toFixed(2)})`,
    );
    assert.ok(plain > 300 * 4096, `the plain manifest must be large enough to measure: ${plain}`);
    assert.ok(ratio <= 0.6, `resident ×${ratio.toFixed(2)} of plain`);
  }));
