import assert from "node:assert/strict";
import { encodeLocator } from "../locator.ts";
import { buildShardEntry } from "./shard_entry.ts";
import { entryOf, rec } from "./_test_support.ts";

Deno.test("records wider than one byte a unit get blocks of their own", () => {
  const e = entryOf(["plain ascii", "more ascii", "東京 wide", "naïve is one byte wide", "tail"]);
  // "naïve" folds to n a i U+0308 v e: the combining mark makes it two-byte as well.
  assert.deepEqual(e.blocks.map((b) => [b.first, b.last]), [[0, 2], [2, 4], [4, 5]]);
  for (const b of e.blocks) {
    for (let i = b.first; i < b.last; i++) {
      assert.equal(b.text.slice(b.recStart[i], b.recEnd[i]).length, b.recEnd[i]! - b.recStart[i]!);
    }
  }
});

Deno.test("shared locator strings leave every locator's encoding unchanged", () => {
  const records = [
    rec(0, "a"),
    rec(1, "b", {
      locator: {
        v: 1,
        kind: "external_line",
        file: "f.jsonl",
        generation: 0,
        line: 2,
        hash: "1".repeat(16),
      },
    }),
    rec(2, "c", {
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: "other",
        file: "f.jsonl",
        hash: "2".repeat(16),
      },
    }),
    rec(3, "d", { locator: { v: 1, kind: "native_event", line: 4, hash: "3".repeat(16) } }),
  ];
  const want = records.map((r) => encodeLocator(structuredClone(r.locator)));
  const e = buildShardEntry("0".repeat(16) + ".json", {
    schema: 1,
    parser_version: 1,
    key: "pi:s",
    records,
    marks: [],
  });
  assert.deepEqual(e.locators.map(encodeLocator), want);
});
