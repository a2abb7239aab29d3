/**
 * OutputBudget.addEntry, the paged reads' cap rule: entries are added while they fit; the
 * first entry of a page that does not fit at all is shown cut with a note (so paging always
 * moves on — before it was refused, leaving the page empty and the next page the same);
 * a later one ends the page.
 */
import assert from "node:assert/strict";
import { byteLength, OutputBudget } from "./framing.ts";

Deno.test("addEntry: fits, cut first entry with a note, full on a later one", () => {
  const small = new OutputBudget(4000);
  assert.equal(small.addEntry("a short entry", true), "added");
  assert.equal(small.addEntry("x".repeat(5000), false), "full");
  assert.ok(!small.text().includes("xxxx"));

  const big = new OutputBudget(4000);
  assert.equal(big.addEntry("é".repeat(5000), true), "cut");
  const text = big.text();
  assert.match(text, /é{10,}/, "the cut entry is shown");
  assert.match(text, /this entry was cut to fit the output cap/);
  assert.ok(byteLength(text) <= 4000);
  assert.ok(big.cut, "the budget still says it is full");
  assert.equal(big.addEntry("more", false), "full");
});
