import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8Length } from "./utf8_length.ts";

Deno.test("utf8Length equals TextEncoder's length on any string, lone surrogates included", () => {
  const enc = new TextEncoder();
  for (const s of ["", "abc", "café", "cafe\u0301", "東京", "👩‍💻", "\ud800", "a\udc00b", "\ud83d"]) {
    assert.equal(utf8Length(s), enc.encode(s).length, JSON.stringify(s));
  }
  fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
    assert.equal(utf8Length(s), enc.encode(s).length);
  }));
});
