/**
 * lexicon.pack (lexicon_pack.ts, lexicon_build.ts, lexicon_refresh.ts): its layout round
 * trips (wide vocabularies, dense entries, long gaps); damage of any byte reads as "no
 * lexicon", never as another error; an incremental build covers what a full one does;
 * and on random texts in real segments, the generations it names for a needle's keys are
 * a superset of the generations holding the needle (the rule exact search skips by).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { realFs } from "../../durable/mod.ts";
import { encodeSegment, openStore, SEGMENT_SCHEMA } from "./mod.ts";
import { rec } from "../query/_test_support.ts";
import { fold } from "../query/fold.ts";
import { findValid } from "../query/match.ts";
import { needleKeys } from "../query/vocabulary.ts";
import { buildLexicon, denseAfter, lexiconStale } from "./lexicon_build.ts";
import { DENSE, encodeLexicon, LEXICON_FILE, LexiconView, readLexicon } from "./lexicon_pack.ts";
import { decodeSegment } from "./segment_view.ts";

const gen = (i: number) => `${i.toString(16).padStart(16, "0")}.seg`;

Deno.test("lexicon layout round trips entries, dense marks and generation lists", () => {
  const gens = Array.from({ length: 300 }, (_, i) => gen(i));
  const entries = ["anemometer", "anemometers", "café", "the", "東京", "zzz"].sort();
  const lists = new Map<string, number[] | typeof DENSE>([
    ["anemometer", [0, 299]],
    ["anemometers", [150]],
    ["café", [1, 2, 3, 200]],
    ["the", DENSE],
    ["東京", [7]],
    ["zzz", [0, 128, 129, 299]],
  ]);
  const view = new LexiconView(
    encodeLexicon({ gens, entries, postings: entries.map((e) => lists.get(e)!) }),
  );
  assert.deepEqual(view.gens, gens);
  assert.equal(view.size, entries.length);
  for (const [k, e] of entries.entries()) {
    assert.equal(view.entry(k), e);
    const want = lists.get(e)!;
    assert.equal(view.isDense(k), want === DENSE);
    const got: number[] = [];
    view.eachGen(k, (g) => got.push(g));
    assert.deepEqual(got, want === DENSE ? [] : want);
  }
  const marked = (m: Uint8Array | null) => m === null ? null : [...m.keys()].filter((i) => m[i]);
  // Substring semantics: `anemometer` is inside both entries.
  assert.deepEqual(marked(view.holders("anemometer", 100)), [0, 150, 299]);
  assert.deepEqual(marked(view.holders("nemo", 100)), [0, 150, 299]);
  assert.deepEqual(marked(view.holders("京", 100)), [7]);
  assert.deepEqual(marked(view.holders("qqq", 100)), []);
  // A dense entry, or too many entries, narrows nothing.
  assert.equal(view.holders("th", 100), null);
  assert.equal(view.holders("e", 2), null);
});

Deno.test("a lexicon with any byte damaged, or cut short, reads as no lexicon", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intendant-lex-" });
  try {
    const bytes = encodeLexicon({
      gens: [gen(1), gen(2)],
      entries: ["alpha", "beta", "東京"],
      postings: [[0], [0, 1], [1]],
    });
    const path = join(dir, LEXICON_FILE);
    assert.ok(
      (await (async () => {
        await Deno.writeFile(path, bytes);
        return readLexicon(realFs, dir);
      })()) !== null,
    );
    for (let i = 0; i < bytes.length; i++) {
      const bad = bytes.slice();
      bad[i]! ^= 0x41;
      await Deno.writeFile(path, bad);
      assert.equal(await readLexicon(realFs, dir), null, `byte ${i}`);
    }
    for (const n of [0, 10, 39, bytes.length - 1]) {
      await Deno.writeFile(path, bytes.subarray(0, n));
      assert.equal(await readLexicon(realFs, dir), null, `cut at ${n}`);
    }
    // Something planted under its name that the contained reader refuses.
    await Deno.remove(path);
    await Deno.symlink("/etc/passwd", path);
    assert.equal(await readLexicon(realFs, dir), null);
    await Deno.remove(path);
    assert.equal(await readLexicon(realFs, dir), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const WORDS = [
  "anemometer",
  "anemometers",
  "deadlock",
  "café",
  "cafe\u0301",
  "東京都",
  "Zürich",
  "fix",
  "prefix",
  "node.js",
  "😀",
  "ß",
  "İstanbul",
];
const word = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.stringMatching(/^[a-z0-9_]{1,8}$/),
  fc.stringMatching(/^[0-9a-f]{60,120}$/),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 4 }),
);
const sep = fc.constantFrom(" ", "\n", ", ", ". ", "、", "/", "(");
const text = fc.array(fc.tuple(word, sep), { maxLength: 16 }).map((a) =>
  a.map(([w, s]) => w + s).join("")
);

Deno.test("the lexicon's holders of a needle's keys include every generation holding it", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(text, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 24 })), { maxLength: 8 }),
      async (segments, picks) => {
        const views = segments.map((texts, s) =>
          decodeSegment(
            ...((e) => [e.bytes, e.name] as const)(encodeSegment({
              schema: SEGMENT_SCHEMA,
              parser_version: 1,
              key: `pi:s${s}`,
              records: texts.map((t, i) => rec(i, t, { session_id: `s${s}` })),
              marks: [],
            })),
          )
        );
        const names = views.map((v) => v.name);
        const byName = new Map(views.map((v) => [v.name, v]));
        const b = await buildLexicon({
          live: names,
          previous: null,
          terms: (n) => Promise.resolve(byName.get(n)!.terms()),
        });
        {
          const lex = new LexiconView(b.bytes);
          // Needles cut from the texts at random places, so parts of tokens and runs over
          // separators are asked too.
          const all = segments.flat();
          for (const [a, b0, len] of picks) {
            const src = fold(all[a % all.length]!);
            if (src.length === 0) continue;
            const start = b0 % src.length;
            const needle = src.slice(start, start + len);
            const keys = needleKeys(needle);
            if (keys === null) continue;
            const holding = new Set(
              views.filter((_v, s) => segments[s]!.some((t) => findValid(fold(t), needle, 0) >= 0))
                .map((v) => v.name),
            );
            for (const key of keys) {
              const m = lex.holders(key, 1e9);
              if (m === null) continue;
              for (const g of holding) {
                assert.equal(m[lex.index.get(g)!], 1, `${JSON.stringify(needle)} in ${g}`);
              }
            }
          }
        }
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("an incremental build covers the same entries as a full one; staleness is bounded", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intendant-lex-" });
  try {
    const store = await openStore({ root: join(dir, "v2"), parserVersion: 1, windowDays: null });
    const publish = async (s: number, words: string) => {
      const sid = `s${s}`;
      const r = await store.publish([{
        kind: "replace",
        key: `pi:${sid}`,
        source: "pi",
        session_id: sid,
        base: null,
        segment: {
          records: [rec(0, words, { session_id: sid }), rec(1, `common ${s}`, { session_id: sid })],
          marks: [],
        },
        source_watermark: 2,
        source_fingerprint: "fp",
        cursors: {},
        meta: { project: null, title: null, parent_session_id: null, files: [] },
      }]);
      assert.deepEqual(r.rejected, []);
    };
    for (let s = 0; s < 20; s++) await publish(s, `word${s} shared`);
    const first = await store.refreshLexicon();
    assert.equal(first.built, true);
    assert.equal(first.covered, 20);
    assert.equal(first.read, 20);
    // Nothing new: the lexicon is current and nothing is read.
    assert.equal((await store.refreshLexicon()).built, false);
    // A few new generations are searched through their summaries until more accumulate.
    for (let s = 20; s < 25; s++) await publish(s, `word${s} anemometer`);
    assert.equal((await store.refreshLexicon()).built, false);
    const inc = await store.refreshLexicon({ force: true });
    assert.equal(inc.read, 5, "only the new generations are read");
    assert.equal(inc.covered, 25);
    const incView = (await readLexicon(realFs, join(dir, "v2")))!.view;
    await Deno.remove(join(dir, "v2", LEXICON_FILE));
    const full = await store.refreshLexicon();
    assert.equal(full.read, 25);
    const fullView = (await readLexicon(realFs, join(dir, "v2")))!.view;
    const asMap = (v: LexiconView) => {
      const m = new Map<string, string[]>();
      for (let k = 0; k < v.size; k++) {
        const gs: string[] = [];
        v.eachGen(k, (g) => gs.push(v.gens[g]!));
        m.set(v.entry(k), gs.sort());
      }
      return m;
    };
    assert.deepEqual(asMap(incView), asMap(fullView));
    assert.ok(asMap(fullView).get("anemometer")!.length === 5);
    // A deleted session's words leave the lexicon with it.
    await store.deleteSession("pi:s21");
    assert.equal(await readLexicon(realFs, join(dir, "v2")), null);
    const after = await store.refreshLexicon();
    assert.equal(after.covered, 24);
    const rebuilt = (await readLexicon(realFs, join(dir, "v2")))!.view;
    assert.equal(asMap(rebuilt).get("word21"), undefined);
    assert.equal(asMap(rebuilt).get("anemometer")!.length, 4);
    // Staleness: a lexicon missing, or uncovered plus dead past max(8, 2 %).
    const live = Array.from({ length: 100 }, (_, i) => gen(i));
    const cover = (n: number) => new Map(live.slice(0, n).map((g, i) => [g, i]));
    assert.equal(lexiconStale(null, live), true);
    assert.equal(lexiconStale(cover(100), live), false);
    assert.equal(lexiconStale(cover(92), live), false);
    assert.equal(lexiconStale(cover(91), live), true);
    assert.equal(lexiconStale(cover(100), live.slice(0, 40)), true);
    assert.equal(lexiconStale(cover(100), live.slice(0, 95)), false, "5 dead of 95");
    assert.equal(lexiconStale(cover(95), live.slice(5)), true, "5 dead and 5 uncovered");
    assert.equal(denseAfter(10), 64);
    assert.equal(denseAfter(8000), 1000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
