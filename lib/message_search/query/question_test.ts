import assert from "node:assert/strict";
import { parseQuestion, suffixFold } from "./question.ts";

Deno.test("parseQuestion keeps content words, drops question words, folds suffixes as a fallback", () => {
  const q = parseQuestion("How did we fix the Deadlocks in Kubernetes?");
  assert.deepEqual(q.terms.map((t) => t.text), ["fix", "deadlocks", "kubernetes"]);
  assert.deepEqual(q.dropped, ["how", "did", "we", "the", "in"]);
  assert.equal(q.terms[1]!.stem, "deadlock");
  assert.equal(q.onlyCommon, false);
  assert.equal(parseQuestion("how did we").onlyCommon, true);
  // Inner punctuation stays; edge punctuation goes.
  assert.deepEqual(parseQuestion("(node.js) e2e-test,").terms.map((t) => t.text), [
    "node.js",
    "e2e-test",
  ]);
  for (
    const [w, s] of [
      ["migrations", "migration"],
      ["fixing", "fix"],
      ["caches", "cache"],
      [
        "queries",
        "query",
      ],
      ["class", null],
      ["bus", null],
    ] as const
  ) assert.equal(suffixFold(w), s, w);
});

Deno.test("parseQuestion: phrases stay exact, accents get a bare form, CJK runs become bigrams", () => {
  const q = parseQuestion('"lease lock" in Zürich 数据库迁移');
  assert.deepEqual(q.terms[0], { text: "lease lock", phrase: true, bare: null, stem: null });
  const z = q.terms.find((t) => t.text.startsWith("zu"))!;
  assert.equal(z.bare, "zurich");
  assert.deepEqual(q.terms.slice(2).map((t) => t.text), ["数据", "据库", "库迁", "迁移"]);
  assert.deepEqual(parseQuestion("龍").terms.map((t) => t.text), ["龍"]);
  assert.throws(() => parseQuestion("   "), RangeError);
  assert.throws(() => parseQuestion("x"), RangeError);
});
