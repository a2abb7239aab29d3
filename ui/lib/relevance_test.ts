import assert from "node:assert/strict";
import type { GroupRelevance } from "../api_client.ts";
import { detailQuery, relatedLabel, relatedTip } from "./relevance.ts";

const rel = (o: Partial<GroupRelevance>): GroupRelevance => ({
  tier: "related",
  terms_matched: 3,
  terms_total: 3,
  spread: false,
  loose: false,
  score: 1,
  ...o,
});

Deno.test("relatedLabel() marks every related group and no exact one", () => {
  assert.equal(relatedLabel(undefined), null, "a newest page's group");
  assert.equal(relatedLabel(rel({ tier: "exact" })), null);
  assert.equal(relatedLabel(rel({ terms_matched: 2 })), "related · 2 of 3 words");
  assert.equal(relatedLabel(rel({ terms_matched: 1, terms_total: 1 })), "related");
  assert.equal(relatedLabel(rel({ spread: true })), "related · all words, across messages");
  assert.equal(relatedLabel(rel({ loose: true })), "related · without accents");
  // Loose: never "across messages" (spread may mean "not all in one message exactly").
  assert.equal(relatedLabel(rel({ spread: true, loose: true })), "related · without accents");
  // Missing words are the strongest shortfall: said first (spread is moot then).
  assert.equal(
    relatedLabel(rel({ terms_matched: 1, terms_total: 2, spread: true, loose: true })),
    "related · 1 of 2 words · without accents",
  );
});

Deno.test("relatedTip() says the same facts in a sentence", () => {
  assert.equal(
    relatedTip(rel({ terms_matched: 2 })),
    "Not an exact match. Holds 2 of the 3 searched words",
  );
  assert.equal(
    relatedTip(rel({ spread: true })),
    "Not an exact match. Holds every searched word, but no one message holds them all",
  );
  assert.equal(
    relatedTip(rel({ spread: true, loose: true })),
    "Not an exact match. Holds every searched word; some only without accents or with another ending",
  );
});

Deno.test("detailQuery() hands the detail the kept words of a relevance page, else q", () => {
  const q = 'where is the "connection pool" marmot';
  assert.equal(detailQuery(q, null), q);
  const terms = { kept: ["connection pool", "marmot"], dropped: ["where", "is", "the"] };
  assert.equal(detailQuery(q, { ...terms, only_common: false }), '"connection pool" marmot');
  assert.equal(detailQuery(q, { kept: [], dropped: [], only_common: true }), q);
});
