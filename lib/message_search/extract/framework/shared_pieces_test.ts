import assert from "node:assert/strict";
import { parseJsonLine } from "./json_line.ts";
import { RootSetCache } from "./root_set_cache.ts";
import { firstLineTitle, foldedTitle } from "./title.ts";
import { assertLineLimit } from "./read_lines.ts";
import { MAX_LINE_BYTES } from "../../cursor.ts";

const enc = new TextEncoder();

Deno.test("firstLineTitle() keeps the first non-blank line and marks a cut", () => {
  assert.equal(firstLineTitle("\n  fix the build  \nmore"), "fix the build");
  assert.equal(firstLineTitle(" \n\t"), null);
  assert.equal(firstLineTitle("🍪".repeat(101)), "🍪".repeat(100) + "…");
  assert.equal(firstLineTitle("🍪".repeat(100)), "🍪".repeat(100));
});

Deno.test("foldedTitle() folds whitespace and cuts at 100 code points without a mark", () => {
  assert.equal(foldedTitle("  fix\n\tthe  café  "), "fix the café");
  assert.equal(foldedTitle("🍪".repeat(150)), "🍪".repeat(100));
});

Deno.test("parseJsonLine() tells blank, malformed and JSON lines apart, decoding leniently", () => {
  assert.deepEqual(parseJsonLine(new Uint8Array()), { kind: "skip", reason: "blank_line" });
  assert.deepEqual(parseJsonLine(enc.encode("  \t")), { kind: "skip", reason: "blank_line" });
  assert.deepEqual(parseJsonLine(enc.encode("{nope")), { kind: "skip", reason: "malformed_line" });
  const bad = new Uint8Array([...enc.encode('{"t":"a'), 0xff, ...enc.encode('"}')]);
  assert.deepEqual(parseJsonLine(bad), { kind: "json", value: { t: "a\uFFFD" } });
});

Deno.test("RootSetCache keeps one cache per root set and drops the least recent past its cap", () => {
  const c = new RootSetCache<string>({ maxRootSets: 2 });
  c.set(["/a"], "A");
  c.set(["/b"], "B");
  assert.equal(c.obtain(["/a"], () => "new"), "A"); // /a is now the most recent
  c.set(["/c"], "C");
  assert.equal(c.get(["/b"]), undefined);
  assert.equal(c.get(["/a"]), "A");
  assert.equal(c.get(["/c"]), "C");
  assert.equal(c.get(["/c", "/a"]), undefined, "the order of the roots is part of the key");
  assert.throws(() => new RootSetCache({ maxRootSets: 0 }), RangeError);
});

Deno.test("assertLineLimit() refuses a line cap above the cursor reader's", () => {
  assertLineLimit("Test", "maxLineBytes", MAX_LINE_BYTES);
  assert.throws(
    () => assertLineLimit("Test", "maxLineBytes", MAX_LINE_BYTES + 1),
    /Test limit "maxLineBytes" must be at most/,
  );
});
