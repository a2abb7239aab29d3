import assert from "node:assert/strict";
import fc from "fast-check";
import { mergeRanges, snippetRanges, splitMarked, utf8Length } from "./highlight.ts";

/** The marked substrings, the way the UI renders them. */
function marked(snippet: string, off: number, ranges: [number, number][]): string[] {
  return snippetRanges(snippet, off, ranges).map(([s, e]) => snippet.slice(s, e));
}

/** Byte range of `needle` inside `text` (first occurrence), shifted by `base`. */
function byteRange(text: string, needle: string, base = 0): [number, number] {
  const i = text.indexOf(needle);
  assert.ok(i >= 0, `${needle} in ${text}`);
  const s = utf8Length(text.slice(0, i)) + base;
  return [s, s + utf8Length(needle)];
}

Deno.test("snippetRanges() maps ASCII byte ranges one to one", () => {
  const s = "Fix the login bug";
  assert.deepEqual(marked(s, 0, [[4, 7], [8, 13]]), ["the", "login"]);
});

Deno.test("snippetRanges() maps a precomposed (NFC) é: two bytes, one unit", () => {
  const s = "Fix the caf\u00e9 login bug";
  assert.deepEqual(marked(s, 0, [byteRange(s, "caf\u00e9")]), ["caf\u00e9"]);
  assert.deepEqual(snippetRanges(s, 0, [[8, 13]]), [[8, 12]]);
});

Deno.test("snippetRanges() maps a decomposed (NFD) e + U+0301 as one highlighted unit", () => {
  const s = "The cafe\u0301 page sets the cookie";
  assert.deepEqual(snippetRanges(s, 0, [[4, 10]]), [[4, 9]]);
  assert.deepEqual(marked(s, 0, [[4, 10]]), ["cafe\u0301"]);
});

Deno.test("snippetRanges() maps CJK (three bytes per character)", () => {
  const s = "Fix the café cache bug — 修复缓存 🚀";
  assert.deepEqual(marked(s, 0, [[28, 34]]), ["修复"]);
  const t = "修复了缓存键";
  assert.deepEqual(marked(t, 0, [[0, 6]]), ["修复"]);
});

Deno.test("snippetRanges() maps emoji (four bytes, a surrogate pair) and never splits it", () => {
  const s = "cookie 🍪 jar 🍪";
  assert.deepEqual(marked(s, 0, [byteRange(s, "🍪 jar")]), ["🍪 jar"]);
  // A range that starts and ends inside the emoji's bytes widens to the whole emoji.
  const [a] = byteRange(s, "🍪");
  const got = snippetRanges(s, 0, [[a + 1, a + 2]]);
  assert.deepEqual(got.map(([x, y]) => s.slice(x, y)), ["🍪"]);
  for (const [x, y] of got) {
    assert.ok(!/^[\uDC00-\uDFFF]/.test(s.slice(x)), "does not start on a low surrogate");
    assert.ok(!/[\uD800-\uDBFF]$/.test(s.slice(0, y)), "does not end after a high surrogate");
  }
});

Deno.test("snippetRanges() honours snippet_offset_bytes", () => {
  const original = "Préambule très long… then the café appears — 修复 🍪 here";
  const cut = utf8Length("Préambule très long… ");
  const snippet = original.slice("Préambule très long… ".length);
  assert.deepEqual(marked(snippet, cut, [byteRange(original, "café")]), ["café"]);
  assert.deepEqual(marked(snippet, cut, [byteRange(original, "修复")]), ["修复"]);
  assert.deepEqual(marked(snippet, cut, [byteRange(original, "🍪")]), ["🍪"]);
});

Deno.test("snippetRanges() clamps ranges crossing the snippet's edges and drops outside ones", () => {
  const original = "aaaa ÉTÉ bbbb 修复 cccc";
  const start = utf8Length("aaaa É");
  const snippet = original.slice("aaaa É".length, original.indexOf(" cccc"));
  assert.equal(snippet, "TÉ bbbb 修复");
  // Crosses the left edge (the match began at "ÉTÉ").
  assert.deepEqual(marked(snippet, start, [byteRange(original, "ÉTÉ")]), ["TÉ"]);
  // Crosses the right edge.
  const [s] = byteRange(original, "修复 cc");
  assert.deepEqual(marked(snippet, start, [[s, s + 12]]), ["修复"]);
  // Entirely before / after the snippet, and empty or inverted ranges.
  assert.deepEqual(snippetRanges(snippet, start, [[0, 3], [999, 1003], [9, 9], [12, 10]]), []);
});

Deno.test("snippetRanges() merges overlapping and unsorted ranges", () => {
  const s = "abcdefgh";
  assert.deepEqual(snippetRanges(s, 0, [[5, 7], [0, 2], [1, 3]]), [[0, 3], [5, 7]]);
  assert.deepEqual(mergeRanges([[4, 6], [2, 4], [9, 9]]), [[2, 6]]);
});

Deno.test("splitMarked() alternates plain and marked pieces and keeps every character", () => {
  const s = "The cafe\u0301 page 🍪";
  const parts = splitMarked(s, snippetRanges(s, 0, [[4, 10]]));
  assert.deepEqual(parts, [
    { text: "The ", marked: false },
    { text: "cafe\u0301", marked: true },
    { text: " page 🍪", marked: false },
  ]);
  assert.equal(parts.map((p) => p.text).join(""), s);
  assert.deepEqual(splitMarked("abc", []), [{ text: "abc", marked: false }]);
});

Deno.test("snippetRanges() agrees with a UTF-8 slice for any text, window and range (property)", () => {
  const enc = new TextEncoder();
  const dec = new TextDecoder("utf-8", { ignoreBOM: true }); // keep a leading U+FEFF
  fc.assert(fc.property(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    (text, picks) => {
      const cps = [...text];
      const at = (k: number) => enc.encode(cps.slice(0, k).join("")).length;
      const [a, b, c, d] = picks.map((p) => p % (cps.length + 1));
      const [ws, we] = [Math.min(a!, b!), Math.max(a!, b!)]; // snippet window (code points)
      const [rs, re] = [Math.min(c!, d!), Math.max(c!, d!)]; // match range (code points)
      const snippet = cps.slice(ws, we).join("");
      const got = snippetRanges(snippet, at(ws), [[at(rs), at(re)]]);
      const bytes = enc.encode(text);
      const s = Math.max(at(rs), at(ws));
      const e = Math.min(at(re), at(we));
      const want = e > s ? [dec.decode(bytes.subarray(s, e))] : [];
      assert.deepEqual(got.map(([x, y]) => snippet.slice(x, y)), want);
    },
  ));
});
