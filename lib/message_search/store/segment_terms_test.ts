/**
 * The TERMS section (segment_terms.ts) against the text it summarises: on random texts
 * of every shape the index meets (ASCII words, accents in both spellings, CJK runs, emoji,
 * long hashes cut into pieces, punctuation), the counts a relevance query takes from the
 * dictionary equal the counts matching the folded text gives, the token counts equal a
 * direct count, and every needle's lookup keys are found in the entries of the records
 * that hold it (the lexicon's superset rule). A damaged section fails as
 * CorruptGenerationError, never as another error.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CorruptGenerationError, decodeSegment, encodeSegment, SEGMENT_SCHEMA } from "./mod.ts";
import { entryOf, rec } from "../query/_test_support.ts";
import { fold } from "../query/fold.ts";
import { findValid } from "../query/match.ts";
import { bareRegex } from "../query/question.ts";
import { bareCounts, termCounts } from "../query/term_postings.ts";
import { eachToken, ENTRY_MAX, isEntryTerm, needleKeys } from "../query/vocabulary.ts";
import { H_TABLE, TERMS } from "./segment_layout.ts";

const WORDS = [
  "anemometer",
  "anemometers",
  "deadlock",
  "kubernetes",
  "café",
  "cafe\u0301",
  "Zürich",
  "東京",
  "東京都",
  "naïve",
  "fix",
  "prefix",
  "a",
  "aa",
  "node.js",
  "e2e-test",
  "😀",
  "ß",
  "İstanbul",
  "가각",
];
const word = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.stringMatching(/^[a-z0-9_]{1,12}$/),
  // Long tokens: hashes and glued paths, cut into pieces by the encoder.
  fc.stringMatching(/^[0-9a-f]{60,140}$/),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
);
const sep = fc.constantFrom(" ", " ", "\n", ", ", ". ", "、", "—", "\u00a0", "/", "(", ") ");
const text = fc.array(fc.tuple(word, sep), { maxLength: 40 }).map((a) =>
  a.map(([w, s]) => w + s).join("")
);

/** Occurrences of `needle` in `s` as the text matcher counts them. */
function textCount(s: string, needle: string): number {
  let n = 0;
  for (let p = findValid(s, needle, 0); p >= 0; p = findValid(s, needle, p + needle.length)) n++;
  return n;
}

const MARK = /\p{M}/u;
function textBareCount(s: string, re: RegExp): number {
  let n = 0;
  re.lastIndex = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (m[0].length === 0) {
      re.lastIndex += (s.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1;
      continue;
    }
    const end = m.index + m[0].length;
    const c = s.charCodeAt(end);
    const continues = end < s.length && (MARK.test(s[end]!) || (c >= 0x1160 && c <= 0x11ff));
    if (!continues || MARK.test(s[end] ?? "")) n++;
  }
  return n;
}

Deno.test("term counts from the dictionary equal counts over the folded text", () => {
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 12 }), (texts) => {
      const e = entryOf(texts);
      const t = e.terms();
      const folded = texts.map(fold);
      for (let i = 0; i < folded.length; i++) {
        let n = 0;
        eachToken(folded[i]!, () => n++);
        assert.equal(t.tokens[i], n, `tokens of record ${i}`);
      }
      const probes = new Set<string>(WORDS.map(fold).filter(isEntryTerm));
      for (const f of folded) eachToken(f, (a, b) => probes.add(f.slice(a, Math.min(b, a + 5))));
      for (const term of probes) {
        const got = termCounts(t, term);
        const bareText = term.normalize("NFD").replace(/\p{M}/gu, "");
        const bare = bareText === "" ? null : bareCounts(t, bareRegex(bareText), bareText);
        for (let i = 0; i < folded.length; i++) {
          if (got !== null) assert.equal(got.get(i) ?? 0, textCount(folded[i]!, term), term);
        }
        if (bare === null) continue;
        const re = bareRegex(bareText);
        for (let i = 0; i < folded.length; i++) {
          assert.equal(bare.get(i) ?? 0, textBareCount(folded[i]!, re), `bare ${term}`);
        }
        // An unaccented word (literal null: the relevance scan's call) counts only inside
        // marked entries; wherever the record has no exact match that is all there is.
        if (got === null || bareText !== term) continue;
        const marked = bareCounts(t, bareRegex(bareText), null);
        if (marked === null) continue;
        for (let i = 0; i < folded.length; i++) {
          if ((got.get(i) ?? 0) > 0) continue;
          assert.equal(marked.get(i) ?? 0, bare.get(i) ?? 0, `marked-only bare ${term}`);
        }
      }
    }),
    { numRuns: 150 },
  );
});

Deno.test("every needle's keys are in the entries of each record holding it", () => {
  fc.assert(
    fc.property(text, fc.nat(), fc.integer({ min: 1, max: 90 }), (s, at, len) => {
      const e = entryOf([s]);
      const t = e.terms();
      const f = fold(s);
      if (f.length === 0) return;
      const a = at % f.length;
      const needle = f.slice(a, a + len);
      const keys = needleKeys(needle);
      if (keys === null) return;
      const v = t.vocab();
      for (const k of keys) assert.ok(v.includes(k), `key ${JSON.stringify(k)} of ${needle}`);
    }),
    { numRuns: 400 },
  );
});

Deno.test("a long token is kept as overlapping pieces, never one huge entry", () => {
  const hash = "0123456789abcdef".repeat(20);
  const e = entryOf([`commit ${hash} landed`]);
  const t = e.terms();
  for (let k = 0; k < t.size; k++) assert.ok(t.entry(k).length <= ENTRY_MAX);
  // Any 33-unit window of the hash lies inside one piece.
  for (let a = 0; a + 33 <= hash.length; a++) {
    assert.ok(t.vocab().includes(hash.slice(a, a + 33)), `window at ${a}`);
  }
  // A term inside a piece is not counted from the dictionary: the text must be asked.
  assert.equal(termCounts(t, "89abcdef01"), null);
  assert.equal(termCounts(t, "landed")?.get(0), 1);
});

Deno.test("a damaged TERMS section is a CorruptGenerationError when first read", () => {
  const records = ["deadlock in kubernetes", "fixed the deadlock"].map((x, i) => rec(i, x));
  const seg = encodeSegment({
    schema: SEGMENT_SCHEMA,
    parser_version: 1,
    key: "pi:s",
    records,
    marks: [],
  });
  const dv = new DataView(seg.bytes.buffer, seg.bytes.byteOffset);
  const off = Number(dv.getBigUint64(H_TABLE + 16 * TERMS, true));
  const bytes = seg.bytes.slice();
  bytes[off + 20] = bytes[off + 20]! ^ 0xff;
  // An exact search never reads the terms: the lazy view loads, the terms fail.
  const v = decodeSegment(bytes, seg.name, { verify: "lazy" });
  assert.throws(() => v.terms(), CorruptGenerationError);
  assert.throws(() => decodeSegment(bytes, seg.name), CorruptGenerationError);
  assert.equal(decodeSegment(seg.bytes, seg.name).terms().size, 5); // deadlock in kubernetes fixed the
});

Deno.test("a lone surrogate keeps the vocabulary exact (stored as UTF-16)", () => {
  const texts = ["broken \ud83d pair here", "café and 東京 and plain words", "\udc00x tail"];
  const t = entryOf(texts).terms();
  const folded = texts.map(fold);
  const probes = ["\ud83d", "pair", "café", "東京", "\udc00x", "tail"];
  for (const term of probes) {
    const got = termCounts(t, term);
    assert.ok(got !== null, term);
    for (let i = 0; i < folded.length; i++) {
      assert.equal(got.get(i) ?? 0, textCount(folded[i]!, term), `${JSON.stringify(term)} in ${i}`);
    }
  }
  // Without one, the same words are stored as UTF-8 and count the same.
  const u = entryOf(texts.slice(1)).terms();
  assert.equal(termCounts(u, "東京")?.get(0), 1);
  assert.ok(u.bytes < t.bytes);
});
