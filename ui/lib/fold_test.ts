import assert from "node:assert/strict";
import { findTerms, foldText, matchesAll, queryTerms, searchableTerm } from "./fold.ts";

const slices = (text: string, terms: string[]) =>
  findTerms(text, terms).map(([s, e]) => text.slice(s, e));

Deno.test("foldText() lowercases and decomposes per character", () => {
  assert.equal(foldText("CAF\u00c9"), "cafe\u0301");
  assert.equal(foldText("cafe\u0301"), "cafe\u0301");
  assert.equal(foldText("修复 🍪"), "修复 🍪");
});

Deno.test("queryTerms() splits words and keeps quoted phrases whole", () => {
  assert.deepEqual(queryTerms(`  rename "the cookie"  sid `), ["rename", "the cookie", "sid"]);
  assert.deepEqual(queryTerms(`"unterminated phrase`), ["unterminated phrase"]);
  assert.deepEqual(queryTerms(`""  `), []);
  assert.deepEqual(queryTerms(`a b 修复 é`), ["修复"], "one-character terms are dropped");
  assert.deepEqual(queryTerms(`say"hi there"`), ["say", "hi there"]);
});

Deno.test("queryTerms() keeps exactly one CJK character: Han, Hiragana, Katakana, Hangul", () => {
  assert.deepEqual(queryTerms("龍"), ["龍"]);
  assert.deepEqual(queryTerms("猫 の カ 한"), ["猫", "の", "カ", "한"]);
  // A Hangul syllable typed decomposed (NFD jamo) is one character in NFC.
  assert.deepEqual(queryTerms("\u1112\u1161\u11ab"), ["\u1112\u1161\u11ab"]);
  for (const other of ["a", "é", "7", "🍪", "Ж", "ー", "。"]) {
    assert.equal(searchableTerm(other), false, other);
  }
  assert.ok(searchableTerm("ab"));
});

Deno.test("findTerms() maps folded matches back to whole original characters", () => {
  assert.deepEqual(slices("The cafe\u0301 page", ["café"]), ["cafe\u0301"]);
  assert.deepEqual(slices("Fix the CAFÉ bug", ["café"]), ["CAFÉ"]);
  assert.deepEqual(slices("修复了缓存键 🚀 — 修复", ["修复"]), ["修复", "修复"]);
  assert.deepEqual(slices("a 🍪 b 🍪", ["🍪 b"]), ["🍪 b"]);
  assert.deepEqual(slices("Also rename the cookie to sid", ["rename", "cookie"]), [
    "rename",
    "cookie",
  ]);
  assert.deepEqual(slices("nothing here", ["café"]), []);
});

Deno.test("matchesAll() ANDs the terms over a folded haystack", () => {
  const hay = foldText("Café menu fixes\n/home/dev/web.app");
  assert.ok(matchesAll(hay, ["CAFE\u0301", "menu"]));
  assert.ok(!matchesAll(hay, ["café", "login"]));
});
