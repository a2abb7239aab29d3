import assert from "node:assert/strict";
import { parseQuery, tokenize } from "./parse_query.ts";

Deno.test("tokenize splits words on whitespace and keeps a quoted phrase whole", () => {
  assert.deepEqual(tokenize('  fix  "the login\tbug"  now '), ["fix", "the login\tbug", "now"]);
  assert.deepEqual(tokenize('say "unterminated phrase here'), ["say", "unterminated phrase here"]);
  assert.deepEqual(tokenize('a"b c"d'), ["a", "b c", "d"]);
  assert.deepEqual(tokenize('"" "  " x'), ["x"]);
  // NUL separates records in the arena, so it can never be part of a needle.
  assert.deepEqual(tokenize("ab\u0000cd"), ["ab", "cd"]);
});

Deno.test("parseQuery folds needles like the haystack and drops duplicates", () => {
  assert.deepEqual(parseQuery("Café CAFÉ cafe\u0301").needles, ["cafe\u0301"]);
  assert.deepEqual(parseQuery('"Login Bug" 東京').needles, ["login bug", "東京"]);
  assert.deepEqual(parseQuery("İstanbul").needles, ["i\u0307stanbul"]);
});

Deno.test("one-character words are dropped when a longer needle remains", () => {
  assert.deepEqual(parseQuery("a bug in x").needles, ["bug", "in"]);
  // An NFD "é" is one character (two code points): still too short alone.
  assert.deepEqual(parseQuery("e\u0301 ok").needles, ["ok"]);
});

Deno.test("queries without a usable needle are RangeErrors that never quote the query", () => {
  for (const q of ["", "   ", "a", "a b c", '"x"', "\u0000", "🍪"]) {
    assert.throws(() => parseQuery(q), (err: unknown) => {
      assert.ok(err instanceof RangeError, `${JSON.stringify(q)} → RangeError`);
      const t = q.trim();
      if (t.length >= 2) assert.ok(!err.message.includes(t), "q is never in a message");
      return true;
    });
  }
  assert.throws(() => parseQuery("x".repeat(1001)), RangeError);
  const many = Array.from({ length: 17 }, (_, i) => `w${i}`).join(" ");
  assert.throws(() => parseQuery(many), /17 terms/);
  assert.throws(() => parseQuery(42 as unknown as string), TypeError);
});

Deno.test("one Chinese, Japanese or Korean character is a word of its own; other single characters are not", () => {
  assert.deepEqual(parseQuery("龍").needles, ["龍"]);
  assert.deepEqual(parseQuery("の").needles, ["の"]);
  assert.deepEqual(parseQuery("カ").needles, ["カ"]);
  assert.equal(parseQuery("한").needles.length, 1);
  assert.deepEqual(parseQuery("龍 x").needles, ["龍"]);
  assert.deepEqual(parseQuery("bug 龍").needles, ["bug", "龍"]);
  for (const q of ["a", "é", "🍪", "1", "ß", "я"]) {
    assert.throws(() => parseQuery(q), /type at least 2 characters/, JSON.stringify(q));
  }
});
