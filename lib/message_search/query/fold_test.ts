import assert from "node:assert/strict";
import { fold, foldWithMap, toByteRange } from "./fold.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function highlight(text: string, needle: string): string[] {
  const m = foldWithMap(text);
  const n = fold(needle);
  const out: string[] = [];
  for (let i = m.folded.indexOf(n); i >= 0; i = m.folded.indexOf(n, i + n.length)) {
    const [a, b] = toByteRange(m, i, i + n.length);
    out.push(dec.decode(enc.encode(text).subarray(a, b)));
  }
  return out;
}

Deno.test("NFC and NFD spellings fold equal and highlight whole original characters", () => {
  const nfc = "Café au lait";
  const nfd = "Cafe\u0301 au lait";
  assert.equal(fold(nfc), fold(nfd));
  assert.deepEqual(highlight(nfc, "CAFÉ"), ["Café"]);
  assert.deepEqual(highlight(nfd, "café"), ["Cafe\u0301"]);
  // A bare "e" matches inside "é": the range covers the whole original character.
  assert.deepEqual(highlight(nfc, "fé"), ["fé"]);
});

Deno.test("byte offsets are exact over CJK, emoji and combining marks", () => {
  const text = "修复 the 登录 bug 🍪🍪 naïve";
  const m = foldWithMap(text);
  assert.equal(m.byteLength, enc.encode(text).length);
  assert.deepEqual(highlight(text, "登录"), ["登录"]);
  assert.deepEqual(highlight(text, "🍪"), ["🍪", "🍪"]);
  assert.deepEqual(highlight(text, "NAÏVE"), ["naïve"]);
  assert.deepEqual(highlight(text, "bug 🍪"), ["bug 🍪"]);
});

Deno.test("case folding beyond ASCII, including characters whose lowercase grows", () => {
  assert.deepEqual(highlight("ΣΟΦΊΑ and İstanbul", "σοφία"), ["ΣΟΦΊΑ"]);
  assert.deepEqual(highlight("ΣΟΦΊΑ and İstanbul", "i̇stanbul"), ["İstanbul"]);
  assert.equal(fold("ÀÉÎ"), "àéî".normalize("NFD"));
});
