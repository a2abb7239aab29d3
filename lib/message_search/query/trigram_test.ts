import assert from "node:assert/strict";
import fc from "fast-check";
import { fold } from "./fold.ts";
import { bloomMayContain, buildBloom, needleTrigrams } from "./trigram.ts";

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Prose-like text: a Zipf-ish draw from a fixed vocabulary of random-letter words. */
function prose(rnd: () => number, n: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyzé東";
  const vocab = Array.from({ length: 800 }, () => {
    let w = "";
    for (let j = 0; j < 3 + Math.floor(rnd() * 6); j++) w += letters[Math.floor(rnd() * 28)];
    return w;
  });
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(vocab[Math.floor(rnd() * rnd() * vocab.length)]!);
  return out.join(" ");
}

function randomWord(rnd: () => number, len: number): string {
  let w = "";
  for (let j = 0; j < len; j++) w += "abcdefghijklmnopqrstuvwxyz"[Math.floor(rnd() * 26)];
  return w;
}

Deno.test("the filter never rules out a block that contains the needle", () => {
  fc.assert(
    fc.property(fc.string({ minLength: 3, maxLength: 400 }), fc.nat(), fc.nat(), (s, a, b) => {
      const text = fold(s);
      if (text.length < 3) return;
      const from = a % (text.length - 2);
      const len = 3 + (b % Math.min(20, text.length - from - 2));
      const needle = text.slice(from, from + len);
      assert.ok(bloomMayContain(buildBloom(text), needleTrigrams(needle)!));
    }),
    { numRuns: 500 },
  );
});

Deno.test("the filter rejects most absent needles in a full-size block", () => {
  const rnd = prng(7);
  const text = fold(prose(rnd, 5000));
  assert.ok(text.length >= 20_000);
  const bits = buildBloom(text);
  let tried = 0;
  let passed = 0;
  while (tried < 2000) {
    const needle = randomWord(rnd, 6);
    if (text.includes(needle)) continue;
    tried++;
    if (bloomMayContain(bits, needleTrigrams(needle)!)) passed++;
  }
  assert.ok(passed / tried < 0.02, `false positive rate ${passed / tried}`);
});

Deno.test("filters are sized to content: repetitive text folds down, varied text does not", () => {
  const repetitive = buildBloom("ab".repeat(16_000));
  const varied = buildBloom(fold(prose(prng(3), 5000)));
  assert.equal(repetitive.byteLength, 32, "minimum size (256 bits)");
  assert.ok(varied.byteLength >= 2048, `varied filter ${varied.byteLength} bytes`);
  assert.ok(varied.byteLength <= 64 * 1024, "never more than 4 bits per unit");
});

Deno.test("needles shorter than three units skip the filter", () => {
  assert.equal(needleTrigrams("ab"), null);
  assert.equal(needleTrigrams(fold("é")), null);
  assert.equal(needleTrigrams("abcabc")!.length, 3, "distinct trigrams only");
});
