import assert from "node:assert/strict";
import { walkJsonl } from "./jsonl_walk.ts";

Deno.test("walkJsonl visits complete object lines and counts torn, oversized and malformed ones", () => {
  const text = [
    '{"a":1}',
    "",
    "not json",
    "[1,2]",
    `{"big":"${"x".repeat(64)}"}`,
    '{"b":2}\r',
    '{"torn":',
  ].join("\n");
  const skipped: Record<string, number> = {};
  const seen: [number, unknown][] = [];
  walkJsonl(new TextEncoder().encode(text), skipped, (line, row) => seen.push([line, row]), {
    maxLineBytes: 32,
  });
  assert.deepEqual(seen, [[1, { a: 1 }], [6, { b: 2 }]]);
  assert.deepEqual(skipped, { malformed_line: 2, oversized_line: 1, torn_tail: 1 });
});
