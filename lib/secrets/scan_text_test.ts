import assert from "node:assert/strict";
import fc from "fast-check";
import { scanTextOf } from "./scan_text.ts";

Deno.test("escapes are taken out and every clean offset maps back to its character", () => {
  const text = "a\x1b[32mkey\x1b[0m b \\u001b[1;31mred\\u001b[0m \\033[2Jx \x9b2Jy \x1b]0;t\x07z";
  const s = scanTextOf(text);
  assert.equal(s.clean, "akey b red x y z");
  for (let i = 0; i < s.clean.length; i++) assert.equal(text[s.toOriginal(i)], s.clean[i], `${i}`);
  // A span of the clean text covers the escapes inside it, none outside it.
  const k = s.clean.indexOf("key");
  assert.equal(text.slice(s.toOriginal(k), s.toOriginalEnd(k + 3)), "key");
  const whole = text.slice(s.toOriginal(0), s.toOriginalEnd(s.clean.indexOf(" b")));
  assert.equal(whole, "a\x1b[32mkey");
  // Clean text is returned as is.
  const plain = scanTextOf("nothing to see");
  assert.equal(plain.clean, "nothing to see");
  assert.equal(plain.toOriginal(3), 3);
});

Deno.test("latin1 bytes keep their 0x80-0x9F continuation bytes; only 7-bit escapes go", () => {
  // "ŝ" is C5 9D in UTF-8: as latin1 "\xc5\x9d", which the 8-bit OSC rule would eat.
  const bytes = "\xc5\x9d key \x1b[32mred\x1b[0m";
  assert.equal(scanTextOf(bytes, { latin1: true }).clean, "\xc5\x9d key red");
});

Deno.test("the offset map is exact on any mix of text and escapes", () => {
  const piece = fc.constantFrom(
    "ab",
    " ",
    "é",
    "東",
    "\x1b[31m",
    "\x1b[0m",
    "\\u001b[2m",
    "\x07",
    "\n",
  );
  fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
    const text = parts.join("");
    const s = scanTextOf(text);
    for (let i = 0; i < s.clean.length; i++) assert.equal(text[s.toOriginal(i)], s.clean[i]);
    assert.ok(s.toOriginalEnd(s.clean.length) <= text.length);
  }));
});
