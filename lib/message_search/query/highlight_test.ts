import assert from "node:assert/strict";
import fc from "fast-check";
import { fold, foldChar, foldWithMap } from "./fold.ts";
import { highlight, highlightRanges, snippetWindow } from "./highlight.ts";
import { RANGES_PER_HIT_MAX, SNIPPET_MAX_BYTES } from "./types.ts";
import { maskSecrets } from "../../secrets/mod.ts";
import { plantedKeys } from "../../../tests/helpers/secret_keys.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function pieces(text: string, ranges: [number, number][]): string[] {
  const b = enc.encode(text);
  return ranges.map(([a, z]) => dec.decode(b.subarray(a, z)));
}

Deno.test("ranges are byte offsets into the original text over NFC, NFD, CJK and emoji", () => {
  const text = "Fix the Café bug — 修复登录 🍪 then cafe\u0301 again 👩‍💻 naïve";
  const q = (s: string) => pieces(text, highlightRanges(text, [fold(s)]));
  assert.deepEqual(q("café"), ["Café", "cafe\u0301"]);
  assert.deepEqual(q("cafe\u0301"), ["Café", "cafe\u0301"]);
  assert.deepEqual(q("修复"), ["修复"]);
  assert.deepEqual(q("🍪 then"), ["🍪 then"]);
  assert.deepEqual(q("👩‍💻"), ["👩‍💻"]);
  assert.deepEqual(q("NAÏVE"), ["naïve"]);
  assert.deepEqual(q("cafe"), [], "cafe never ends inside é");
});

Deno.test("ranges of several needles are sorted and merged when they overlap", () => {
  const text = "login: relogin later, Login!";
  const r = highlightRanges(text, ["login", "gin: re", "later"]);
  // [0,5) and [2,9) overlap; [9,14) only touches [0,9) and stays apart.
  assert.deepEqual(pieces(text, r), ["login: re", "login", "later", "Login"]);
  for (let i = 1; i < r.length; i++) assert.ok(r[i]![0] >= r[i - 1]![1]);
});

Deno.test("ranges are capped so one hit cannot outgrow the response budget", () => {
  const r = highlightRanges("ab ".repeat(5000), ["ab"]);
  assert.equal(r.length, RANGES_PER_HIT_MAX);
  assert.deepEqual(r[0], [0, 2]);
});

Deno.test("the snippet is ≤ 280 original bytes around the first highlight, on character boundaries", () => {
  const text = "前".repeat(200) + " the needle is here " + "後".repeat(200);
  const h = highlight(text, ["needle"]);
  const bytes = enc.encode(h.snippet);
  assert.ok(bytes.length <= SNIPPET_MAX_BYTES && bytes.length >= SNIPPET_MAX_BYTES - 3);
  assert.ok(h.snippet.includes("the needle is here"));
  // snippet == original bytes [offset, offset + len).
  const orig = enc.encode(text).subarray(h.snippetOffsetBytes, h.snippetOffsetBytes + bytes.length);
  assert.equal(dec.decode(orig), h.snippet);
  const [a, b] = h.ranges[0]!;
  assert.ok(a >= h.snippetOffsetBytes && b <= h.snippetOffsetBytes + bytes.length);
  // Some context precedes the highlight.
  assert.ok(a - h.snippetOffsetBytes >= 60);
});

Deno.test("short texts are their own snippet; a match longer than the window starts it", () => {
  assert.deepEqual(highlight("Short café note", ["note"]).snippet, "Short café note");
  const long = "x".repeat(50) + "é".repeat(300);
  const h = highlight(long, [fold("é".repeat(200))]);
  assert.equal(h.snippetOffsetBytes, 50);
  assert.equal(enc.encode(h.snippet).length, SNIPPET_MAX_BYTES);
  // A window ending mid-character backs off to the boundary.
  const w = snippetWindow(enc.encode("a" + "東".repeat(300)), [1, 601]);
  assert.deepEqual(w, [1, 280]);
  // Text near its end: the window shifts back to stay full.
  const tail = "y".repeat(1000) + " end";
  const t = highlight(tail, ["end"]);
  assert.equal(enc.encode(t.snippet).length, SNIPPET_MAX_BYTES);
  assert.ok(t.snippet.endsWith(" end"));
});

Deno.test("fold and foldWithMap agree with the per-character definition on any text", () => {
  const perChar = (t: string) => [...t].map((c) => foldChar(c.codePointAt(0)!)).join("");
  const tricky = fc.constantFrom(
    "A",
    "é",
    "e\u0301",
    "Σ",
    "ΟΔΟΣ",
    "İ",
    "ß",
    "ﬁ",
    "東",
    "🍪",
    "\ud800",
    "각",
    " ",
  );
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.array(fc.oneof(tricky, fc.string({ maxLength: 3 })), { maxLength: 20 }).map((a) =>
      a.join("")
    ),
  );
  fc.assert(
    fc.property(text, (t) => {
      const m = foldWithMap(t);
      assert.equal(fold(t), perChar(t));
      assert.equal(m.folded, fold(t));
      assert.equal(m.byteLength, enc.encode(t).length);
      assert.equal(m.byteStart.length, m.folded.length);
      for (let i = 0; i < m.folded.length; i++) {
        assert.ok(m.byteStart[i]! < m.byteEnd[i]! && m.byteEnd[i]! <= m.byteLength);
      }
    }),
    { numRuns: 1000 },
  );
  // Per character, final sigma stays σ (a whole-string toLowerCase would give ς).
  assert.equal(fold("ΟΔΟΣ x"), "οδοσ x");
});

Deno.test("a snippet never cuts a secret in half: every key is whole or absent, so masking hides it", () => {
  // Wherever the hit sits relative to a key (the window's edges sweep across it), the
  // snippet either holds the whole key — which the masker then hides — or none of it.
  let cuts = 0;
  for (const key of plantedKeys().filter((k) => k.secret.length < SNIPPET_MAX_BYTES)) {
    for (let gap = 0; gap < 420; gap += 7) {
      for (const keyFirst of [true, false]) {
        const filler = "lorem ipsum dolor ".repeat(30);
        const hit = " deploy window ";
        const text = keyFirst
          ? `${filler.slice(0, 40)} ${key.line} ${filler.slice(0, gap)}${hit}${filler}`
          : `${filler}${hit}${filler.slice(0, gap)} ${key.line} ${filler.slice(0, 40)}`;
        const h = highlight(text, [fold("deploy")]);
        assert.ok(h.snippet.includes("deploy"), "the hit stays in the snippet");
        const masked = maskSecrets(h.snippet).text;
        for (let i = 0; i + 12 <= key.secret.length; i += 6) {
          assert.ok(
            !masked.includes(key.secret.slice(i, i + 12)),
            `${key.kind}: part of the key left in "${masked}"`,
          );
        }
        // The unguarded window would have cut it here.
        const [s, e] = snippetWindow(enc.encode(text), highlightRanges(text, [fold("deploy")])[0]!);
        const raw = dec.decode(enc.encode(text).subarray(s, e));
        if (!raw.includes(key.secret) && raw.includes(key.secret.slice(0, 12))) cuts++;
        if (!raw.includes(key.secret) && raw.includes(key.secret.slice(-12))) cuts++;
      }
    }
  }
  assert.ok(cuts > 0, "the sweep crosses keys with the window's edges");
});

Deno.test("searching by a key shows it whole (from its label on), so masking hides it", () => {
  const filler = "lorem ipsum dolor ".repeat(30);
  for (const key of plantedKeys().filter((k) => k.secret.length < SNIPPET_MAX_BYTES - 80)) {
    const text = `${filler}${key.line} ${filler}`;
    const h = highlight(text, [fold(key.secret.slice(0, 24))]);
    assert.ok(h.ranges.length > 0);
    const masked = maskSecrets(h.snippet).text;
    assert.ok(!masked.includes(key.secret.slice(8, 20)), `${key.kind}: "${masked}"`);
    assert.ok(enc.encode(h.snippet).length <= SNIPPET_MAX_BYTES);
  }
});

Deno.test("a cut snippet starts and ends on a word edge and says when the text goes on", () => {
  const words = Array.from({ length: 80 }, (_, i) => `multipart${i}`);
  words[40] = "uploads";
  const text = words.join(" ");
  const h = highlight(text, [fold("uploads")]);
  assert.ok(h.snippetOffsetBytes > 0, "the start is cut");
  assert.equal(text[h.snippetOffsetBytes - 1], " ", "it starts right after a space");
  assert.match(h.snippet, /^multipart\d+ /, "the first word is whole");
  assert.match(h.snippet, / multipart\d+$/, "the last word is whole");
  assert.ok(h.cutEnd, "the text continues after the snippet");
  assert.ok(h.snippet.includes("uploads"));
  // A text that fits is never cut, and says so.
  const short = highlight("upload the multipart uploads now", [fold("uploads")]);
  assert.deepEqual([short.snippetOffsetBytes, short.cutEnd], [0, false]);
  // One long token (no space within reach) keeps the character-boundary cut.
  const hash = "x".repeat(400) + "needle" + "y".repeat(400);
  const long = highlight(hash, [fold("needle")]);
  assert.ok(long.snippet.includes("needle") && long.cutEnd && long.snippetOffsetBytes > 0);
});

Deno.test("word edges never move a snippet past its first highlight", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "bb", "ccc ", " ", "ümlaut", "東京", "\n", "key "), {
        minLength: 50,
        maxLength: 400,
      }),
      fc.nat(),
      (parts, at) => {
        const all: string[] = [...parts];
        all.splice(at % all.length, 0, " needle ");
        const text = all.join("");
        const h = highlight(text, ["needle"]);
        const sb = enc.encode(h.snippet);
        const [a, b] = h.ranges[0]!;
        assert.ok(a >= h.snippetOffsetBytes && b <= h.snippetOffsetBytes + sb.length);
        assert.ok(sb.length <= SNIPPET_MAX_BYTES);
        assert.equal(h.cutEnd, h.snippetOffsetBytes + sb.length < enc.encode(text).length);
      },
    ),
  );
});
