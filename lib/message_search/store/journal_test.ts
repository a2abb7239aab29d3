/**
 * The manifest journal: delta encoding and replay (pure), and the store's use of it —
 * publishes append small lines instead of rewriting the manifest, compaction bounds the
 * journal, readers that cache pick up other writers' lines incrementally, and stale or
 * damaged journals never produce a wrong manifest.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { realFs } from "../../durable/mod.ts";
import {
  encodeDelta,
  fnv1a,
  headerRevision,
  JOURNAL_FILE,
  journalHeader,
  replayJournal,
} from "./journal.ts";
import { emptyManifest, MANIFEST_FILE } from "./manifest_io.ts";
import { JOURNAL_MIN_BYTES, JOURNAL_ROOM_FACTOR } from "./manifest_state.ts";
import { openStore } from "./store.ts";
import type { Manifest, ManifestEntry } from "./types.ts";

const enc = new TextEncoder();

function entry(id: string, n: number): ManifestEntry {
  return {
    source: "codex",
    session_id: id,
    generations: [`${n.toString(16).padStart(16, "0")}.seg`],
    records: n,
    newest_ts_ms: 1000 + n,
    oldest_ts_ms: 1000,
    source_watermark: n,
    source_fingerprint: "f",
    cursors: {},
    state: null,
    source_gone: false,
    meta: { project: null, title: `t${id}`, parent_session_id: null, files: [] },
    skipped: {},
    published_at_ms: 5,
  };
}

function step(m: Manifest, patch: Partial<Manifest>): Manifest {
  return { ...m, ...patch, revision: m.revision + 1, updated_at_ms: m.updated_at_ms + 1 };
}

/** base → three publishes, as a journal file's bytes. */
function chain(): { base: Manifest; states: Manifest[]; lines: string[] } {
  const base: Manifest = { ...emptyManifest(PV, 10, 10), sessions: { "codex:a": entry("a", 1) } };
  const s1 = step(base, { sessions: { ...base.sessions, "codex:b": entry("b", 2) } });
  const s2 = step(s1, {
    sessions: { "codex:b": s1.sessions["codex:b"]!, "codex:c": entry("c", 3) },
    tombstones: { "codex:a": 11 },
    retired: { "0000000000000001.json": 11 },
  });
  const s3 = step(s2, { sessions: { ...s2.sessions, "codex:b": entry("b", 4) } });
  delete s3.retired; // the store omits an empty retired map
  const states = [s1, s2, s3];
  const lines = [base, ...states].slice(0, -1).map((p, i) => encodeDelta(p, states[i]!)!);
  return { base, states, lines };
}

Deno.test("a delta holds only what changed, and replay rebuilds every state exactly", () => {
  const { base, states, lines } = chain();
  const last = JSON.parse(lines[2]!.slice(9));
  assert.deepEqual([...Object.keys(last.s), ...Object.keys(last.x ?? {})], ["codex:b"]);
  assert.ok(last.x["codex:b"], "a changed entry is written as a patch when smaller");
  assert.ok(lines[2]!.length < JSON.stringify(states[2]!.sessions["codex:b"]).length);
  let text = journalHeader(base.revision);
  for (const [i, line] of lines.entries()) {
    text += `\n${line}\n`;
    const bytes = enc.encode(text);
    const r = replayJournal(base, bytes, headerRevision(bytes)!.length);
    assert.deepEqual(r.manifest, states[i]);
    assert.equal(r.applied, i + 1);
    assert.equal(r.consumed, bytes.length);
  }
  assert.equal(base.sessions["codex:b"], undefined, "the base is never mutated");
});

Deno.test("torn, garbled and zero-filled lines are skipped without hiding later lines", () => {
  const { base, states, lines } = chain();
  const header = journalHeader(base.revision);
  // A torn second line terminated by the next append's leading newline, a zero-filled
  // block, then a line whose checksum does not match.
  const torn = lines[1]!.slice(0, 40);
  const flipped = lines[1]!.replace('"codex:c"', '"codex:x"');
  const text = `${header}\n${lines[0]}\n\n${torn}\n${"\0".repeat(64)}\n${flipped}\n${lines[1]}\n`;
  const bytes = enc.encode(text);
  const r = replayJournal(base, bytes, headerRevision(bytes)!.length);
  assert.deepEqual(r.manifest, states[1]);
  assert.equal(r.skipped, 3);
  // An unterminated tail is not consumed: a later read resumes before it.
  const partial = enc.encode(`${header}\n${lines[0]}\n\n${lines[1]}`);
  const p = replayJournal(base, partial, headerRevision(partial)!.length);
  assert.deepEqual(p.manifest, states[0]);
  assert.ok(p.consumed < partial.length);
});

Deno.test("lines off the revision chain, of another parser or with prototype keys never apply", () => {
  const { base, lines } = chain();
  const header = journalHeader(base.revision);
  const wrongBase = (() => {
    const d = JSON.parse(lines[0]!.slice(9));
    d.b = 9;
    const json = JSON.stringify(d);
    return `${fnv1a(json)} ${json}`;
  })();
  const proto = (() => {
    const json = `{"b":10,"r":11,"u":1,"p":${PV},"s":{},"t":{"__proto__":5}}`;
    return `${fnv1a(json)} ${json}`;
  })();
  const otherParser = encodeDelta(base, { ...base, parser_version: PV + 1, revision: 11 });
  assert.equal(otherParser, null, "a parser change is never a delta");
  const bytes = enc.encode(`${header}\n${wrongBase}\n\n${proto}\n`);
  const r = replayJournal(base, bytes, headerRevision(bytes)!.length);
  assert.equal(r.manifest, base);
  assert.equal(r.skipped, 2);
  assert.equal(headerRevision(enc.encode('{"journal":2,"snapshot":1}\n')), null);
  assert.equal(headerRevision(enc.encode('{"journal":1,"snapshot":1}')), null);
});

Deno.test("publishes append to the journal; it is compacted once it outgrows its room", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null, cacheReads: true });
    const n = 40;
    // A snapshot large enough that the journal's room is the snapshot's size.
    const many = Array.from(
      { length: 400 },
      (_, i) => update("replace", `s${i}`, { recs: records(`s${i}`, 0, 1) }),
    );
    await store.publish(many);
    const snap0 = (await Deno.stat(join(root, MANIFEST_FILE))).size;
    let journalGrew = 0;
    for (let i = 0; i < n; i++) {
      const before = (await Deno.stat(join(root, JOURNAL_FILE))).size;
      await store.publish([update("replace", `s${i}`, { recs: records(`s${i}`, 0, 2 + i) })]);
      const after = (await Deno.stat(join(root, JOURNAL_FILE))).size;
      if (after > before) journalGrew++;
      assert.ok(
        after - before < 4096,
        `one changed entry appends a small line, not ${after - before} B`,
      );
    }
    assert.equal(journalGrew, n);
    assert.equal((await Deno.stat(join(root, MANIFEST_FILE))).size, snap0, "snapshot untouched");
    // A fresh reader (no cache) sees exactly what the writer sees.
    const fresh = await openStore({ root, parserVersion: PV, windowDays: null });
    assert.deepEqual(await fresh.readManifest(), await store.readManifest());
    assert.equal((await fresh.readManifest()).sessions["codex:s7"]!.records, 9);
    // Grow the journal past max(JOURNAL_MIN_BYTES, factor × snapshot): it is compacted.
    const room = Math.max(JOURNAL_MIN_BYTES, JOURNAL_ROOM_FACTOR * snap0);
    let compactions = 0;
    let last = (await Deno.stat(join(root, JOURNAL_FILE))).size;
    for (let i = 0; compactions < 1 && i < 5000; i++) {
      await store.publish([
        update("replace", `s${i % 400}`, { recs: records(`s${i % 400}`, 0, 3 + i) }),
      ]);
      const size = (await Deno.stat(join(root, JOURNAL_FILE))).size;
      assert.ok(size <= room, `journal ${size} B over its room ${room} B`);
      if (size < last) compactions++;
      last = size;
    }
    assert.equal(compactions, 1);
    assert.deepEqual(await fresh.readManifest(), await store.readManifest());
  }));

Deno.test("a caching reader picks up another writer's lines and its compactions", () =>
  withTempDir(async (root) => {
    const writer = await openStore({ root, parserVersion: PV, windowDays: null });
    const reader = await openStore({ root, parserVersion: PV, windowDays: null, cacheReads: true });
    await writer.publish([update("replace", "a", { recs: records("a", 0, 1) })]);
    assert.equal((await reader.readManifest()).sessions["codex:a"]!.records, 1);
    for (let i = 2; i < 6; i++) {
      await writer.publish([update("replace", "a", { recs: records("a", 0, i) })]);
      const m = await reader.readManifest();
      assert.equal(m.sessions["codex:a"]!.records, i);
      assert.equal(m.revision, (await writer.readManifest()).revision);
    }
    // Unchanged files: the very same object (two stats, no read).
    assert.equal(await reader.readManifest(), await reader.readManifest());
    // A journal left stale by a crash between the snapshot's rename and its reset is
    // ignored whole: simulate by writing a journal for an older snapshot revision.
    const current = await writer.readManifest();
    await Deno.writeTextFile(join(root, JOURNAL_FILE), journalHeader(current.revision - 1));
    const fresh = await openStore({ root, parserVersion: PV, windowDays: null });
    const seen = await fresh.readManifest();
    assert.ok(seen.revision <= current.revision);
    // The next publish starts a journal for the snapshot on disk and lands.
    await writer.publish([update("replace", "b", { recs: records("b", 0, 1) })]);
    assert.ok((await reader.readManifest()).sessions["codex:b"]);
    assert.ok((await fresh.readManifest()).sessions["codex:b"]);
    assert.ok(
      (await realFs.readFile(join(root, JOURNAL_FILE))).length > 0,
      "journal rewritten with a header for the snapshot",
    );
  }));

Deno.test("fuzz: a damaged journal replays to one of the chain's states, never throws", () => {
  const { base, states, lines } = chain();
  const valid = [base, ...states];
  const text = journalHeader(base.revision) + lines.map((l) => `\n${l}\n`).join("");
  const clean = enc.encode(text);
  const header = headerRevision(clean)!.length;
  const runs = STRESS ? 100_000 : 5_000;
  const outcomes = new Set<number>();
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          at: fc.nat(),
          kind: fc.constantFrom("flip", "zero", "cut", "insert", "newline"),
          byte: fc.integer({ min: 0, max: 255 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      (edits) => {
        let bytes: Uint8Array = clean.slice();
        for (const e of edits) {
          const i = header + (e.at % Math.max(1, bytes.length - header));
          if (e.kind === "flip") bytes[i] = bytes[i]! ^ (1 << (e.byte % 8));
          else if (e.kind === "zero") bytes.fill(0, i, i + 1 + (e.byte % 64));
          else if (e.kind === "cut") bytes = bytes.slice(0, i);
          else {
            const ins = e.kind === "newline" ? 0x0a : e.byte;
            bytes = new Uint8Array([...bytes.subarray(0, i), ins, ...bytes.subarray(i)]);
          }
        }
        const r = replayJournal(base, bytes, header);
        const at = valid.findIndex((v) => isDeepStrictEqual(v, r.manifest));
        assert.ok(at >= 0, "the result is one of the chain's states");
        outcomes.add(at);
      },
    ),
    { numRuns: runs, seed: 9 },
  );
  console.log(
    `FUZZ manifest journal: ${
      runs.toLocaleString("en-US")
    } damaged journals, 0 crashes, 0 states off the chain (${outcomes.size} distinct states reached)`,
  );
});
