import assert from "node:assert/strict";
import fc from "fast-check";
import { fold } from "./fold.ts";
import { highlightRanges } from "./highlight.ts";
import { continuesCharacter, findValid, matchBlock } from "./match.ts";
import type { SegmentView } from "../store/mod.ts";
import { blocksOf, entryOf } from "./_test_support.ts";

function scan(e: SegmentView, needles: string[]): number[] {
  const lead = [...needles].sort((a, b) => b.length - a.length);
  return blocksOf(e).flatMap((b) => matchBlock(b, lead));
}

/** Independent oracle: a valid occurrence is not followed by a mark or a medial/final jamo. */
function oracleHas(text: string, needle: string): boolean {
  const f = fold(text);
  for (let p = f.indexOf(needle); p >= 0; p = f.indexOf(needle, p + 1)) {
    const next = f.codePointAt(p + needle.length);
    if (next === undefined) return true;
    if (/\p{M}/u.test(String.fromCodePoint(next))) continue;
    if (next >= 0x1160 && next <= 0x11ff) continue;
    return true;
  }
  return false;
}

Deno.test("a match never ends inside a decomposed character", () => {
  const nfc = fold("Un café, s'il vous plaît");
  const nfd = fold("Un cafe\u0301, s'il vous plai\u0302t");
  for (const hay of [nfc, nfd]) {
    assert.equal(findValid(hay, "cafe", 0), -1, "cafe must not match café");
    assert.equal(findValid(hay, fold("café"), 0), 3);
    assert.equal(findValid(hay, "plai", 0), -1, "plai stops before the circumflex of î");
    assert.equal(findValid(hay, fold("plaît"), 0), 20);
  }
  assert.equal(findValid(fold("cafe café"), "cafe", 0), 0);
  assert.equal(
    findValid(fold("café cafe"), "cafe", 0),
    6,
    "a rejected position does not stop the search",
  );
  // Hangul: 가 (ᄀ+ᅡ) must not match inside 각 (ᄀ+ᅡ+ᆨ), but does at a syllable end.
  assert.equal(findValid(fold("각"), fold("가"), 0), -1);
  assert.equal(findValid(fold("각가"), fold("가"), 0), 3);
  // An astral combining mark (U+1D167) continues the character too.
  assert.equal(continuesCharacter("a\u{1D167}", 1), true);
  assert.equal(continuesCharacter("a🍪", 1), false);
  assert.equal(continuesCharacter("ab", 2), false);
});

Deno.test("matchBlock ANDs needles within one record, never across records", () => {
  const e = entryOf([
    "The login page sets a cookie",
    "redirect loop after login",
    "cookie redirect login",
    "nothing here",
    "REDIRECT and the Cookie",
  ]);
  assert.deepEqual(scan(e, ["login"]), [0, 1, 2]);
  assert.deepEqual(scan(e, ["cookie", "redirect"]), [2, 4]);
  assert.deepEqual(scan(e, ["cookie", "redirect", "login"]), [2]);
  // "cookie" ends record 0 and "redirect" starts record 1: no cross-record match.
  assert.deepEqual(scan(e, ["cookie redirect"]), [2]);
  assert.deepEqual(scan(e, ["cookieredirect"]), []);
  assert.deepEqual(scan(e, ["the cookie"]), [4]);
  assert.deepEqual(scan(e, ["absent", "login"]), []);
});

Deno.test("records spanning several blocks and a record larger than a block are all found", () => {
  const big = "filler ".repeat(10_000) + "needle-in-big";
  const texts = Array.from({ length: 400 }, (_, i) => `record ${i} ${"text ".repeat(40)}`);
  texts[7] += " needle-a";
  texts[250] = big;
  texts[399] += " needle-a";
  const e = entryOf(texts);
  assert.ok(e.blockCount >= 3, `blocks: ${e.blockCount}`);
  assert.deepEqual(scan(e, ["needle-a"]), [7, 399]);
  assert.deepEqual(scan(e, ["needle-in-big", "filler"]), [250]);
  assert.deepEqual(scan(e, ["record 1"]).length, 111, "record 1, 10..19, 100..199 (not 250)");
});

const PIECES = [
  "a",
  "b",
  "e",
  "s",
  " ",
  "\n",
  "A",
  "É",
  "é",
  "e\u0301",
  "\u0301",
  "caf",
  "cafe",
  "café",
  "CAFE\u0301",
  "東",
  "京",
  "🍪",
  "👩‍💻",
  "가",
  "각",
  "\u1100",
  "\u1161",
  "\u11a8",
  "Σ",
  "ς",
  "σ",
  "İ",
  "i",
  "ß",
  "ﬁ",
  "Å",
  "A\u030a",
  "\u{1D167}",
  "x\u0327",
];
const textArb = fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((a) => a.join(""));

Deno.test("scan and highlight agree with an independent oracle on tricky Unicode", () => {
  fc.assert(
    fc.property(
      fc.array(textArb, { minLength: 1, maxLength: 8 }),
      fc.array(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 }), {
        minLength: 1,
        maxLength: 2,
      }),
      (texts, needleParts) => {
        const needles = [...new Set(needleParts.map((p) => fold(p.join(""))))];
        const e = entryOf(texts);
        const want = texts.flatMap((t, i) => needles.every((n) => oracleHas(t, n)) ? [i] : []);
        assert.deepEqual(scan(e, needles), want);
        const enc = new TextEncoder();
        const dec = new TextDecoder();
        for (const i of want) {
          const ranges = highlightRanges(texts[i]!, needles);
          assert.ok(ranges.length > 0, "a hit always has a highlight");
          const bytes = enc.encode(texts[i]!);
          let prevEnd = -1;
          for (const [a, b] of ranges) {
            assert.ok(a > prevEnd - 1 && a < b && b <= bytes.length, "sorted, disjoint, in bounds");
            prevEnd = b;
            const piece = dec.decode(bytes.subarray(a, b));
            assert.equal(enc.encode(piece).length, b - a, "ranges cut on character boundaries");
            assert.ok(needles.some((n) => fold(piece).includes(n)), "a range holds a needle");
          }
        }
      },
    ),
    { numRuns: 400 },
  );
});

Deno.test("matchBlock's leapfrog join agrees with a per-record check on random text", () => {
  const words = ["alpha", "beta", "gamma", "東京", "café", "delta"];
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const texts = Array.from(
    { length: 400 },
    () => Array.from({ length: 1 + rnd(5) }, () => words[rnd(words.length)]).join(" "),
  );
  const e = entryOf(texts);
  for (const needles of [["alpha", "beta"], ["gamma", "delta", "beta"], ["東京", "café"]]) {
    const folded = needles.map(fold);
    const want = texts.flatMap((t, i) =>
      folded.every((n) => findValid(fold(t), n, 0) >= 0) ? [i] : []
    );
    assert.deepEqual(scan(e, folded), want, needles.join(" "));
  }
});
