import assert from "node:assert/strict";
import { findHits, hitNeedles } from "./detail_hits.ts";

const texts = ["The Café opens", "cafe\u0301 au lait", undefined, "nothing here", "CAFÉ and OPENS"];

Deno.test("findHits matches every term with search's fold (case, NFC/NFD) and lists indices in order", async () => {
  const needles = hitNeedles("café")!;
  assert.deepEqual(await findHits(texts.length, needles, (i) => texts[i]), {
    hits: [0, 1, 4],
    complete: true,
  });
  const both = hitNeedles("opens CAFÉ")!;
  assert.deepEqual((await findHits(texts.length, both, (i) => texts[i])).hits, [0, 4]);
  const phrase = (q: string) => findHits(texts.length, hitNeedles(q)!, (i) => texts[i]);
  assert.deepEqual((await phrase('"café opens"')).hits, [0]);
  assert.deepEqual((await phrase('"opens café"')).hits, []);
});

Deno.test("findHits stops at its bounds and says so; a query with nothing searchable has no needles", async () => {
  const needles = hitNeedles("café")!;
  const capped = await findHits(texts.length, needles, (i) => texts[i], { maxHits: 2 });
  assert.deepEqual(capped, { hits: [0, 1], complete: false });
  const budget = await findHits(texts.length, needles, (i) => texts[i], { maxBytes: 40 });
  assert.deepEqual(budget, { hits: [0], complete: false });
  assert.equal(hitNeedles("a b"), null);
  assert.equal(hitNeedles("   "), null);
});
