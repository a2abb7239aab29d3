/**
 * segment_check: the non-copying check accepts exactly what ShardSegmentSchema accepts
 * unchanged — generated segments pass and parse to themselves; every single-field
 * corruption is refused by both, or refused by the check and stripped by zod.
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { SOURCES } from "../record.ts";
import { isExactSegment } from "./segment_check.ts";
import { SEGMENT_SCHEMA, ShardSegmentSchema } from "./types.ts";

const hex16 = fc.stringMatching(/^[0-9a-f]{16}$/);
const file = fc.string({ minLength: 1, maxLength: 40 });
const locator = fc.oneof(
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_message_id"),
    message_seq: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_event"),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_sidecar_span"),
    file,
    offset: fc.nat(),
    len: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("external_record_id"),
    record_id: file,
    file,
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("external_line"),
    file,
    generation: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
);
const record = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    source: fc.constantFrom(...SOURCES),
    session_id: fc.string({ minLength: 1 }),
    role: fc.constantFrom("user", "assistant"),
    ts_ms: fc.integer(),
    text: fc.string({ unit: "grapheme" }),
    truncated: fc.boolean(),
    locator,
    order: fc.nat(),
    seq: fc.nat(),
    user_turn: fc.nat(),
    item_id: fc.string(),
    generation: fc.nat(),
    subagent: fc.boolean(),
  },
  {
    requiredKeys: [
      "id",
      "source",
      "session_id",
      "role",
      "ts_ms",
      "text",
      "truncated",
      "locator",
      "order",
      "generation",
      "subagent",
    ],
  },
);
const segment = fc.record({
  schema: fc.constant(SEGMENT_SCHEMA),
  parser_version: fc.nat(),
  key: fc.string(),
  records: fc.array(record, { maxLength: 4 }),
  marks: fc.constant([]),
});

/** Replaces one leaf or adds a key somewhere in `v` (path picked by `pick`). */
function corrupt(v: unknown, pick: number, bad: unknown): unknown {
  const c = structuredClone(v) as Record<string, unknown>;
  const nodes: Record<string, unknown>[] = [];
  const walk = (x: unknown) => {
    if (x !== null && typeof x === "object") {
      if (!Array.isArray(x)) nodes.push(x as Record<string, unknown>);
      for (const y of Object.values(x)) walk(y);
    }
  };
  walk(c);
  const node = nodes[pick % nodes.length]!;
  const keys = Object.keys(node);
  if (pick % 3 === 0 || keys.length === 0) node[`extra${pick}`] = bad;
  else node[keys[pick % keys.length]!] = bad;
  return c;
}

Deno.test("property: the check accepts a value only when zod parses it to itself", () => {
  const bad = fc.oneof(
    fc.constant(null),
    fc.constant(-1),
    fc.constant(1.5),
    fc.constant(""),
    fc.constant("x".repeat(600)),
    fc.constant("nope"),
    fc.constant(true),
    fc.constant(2 ** 60),
    fc.constant({}),
    fc.constant([]),
  );
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(segment, fc.nat(), bad, fc.boolean(), (seg, pick, b, doCorrupt) => {
      // Real segments come from JSON.parse (plain prototypes), and so do these.
      const plain = JSON.parse(JSON.stringify(seg));
      const v = doCorrupt ? corrupt(plain, pick, b) : plain;
      const z = ShardSegmentSchema.safeParse(v);
      if (isExactSegment(v)) {
        accepted++;
        assert.ok(z.success, "the check accepted what zod refuses");
        assert.ok(isDeepStrictEqual(z.data, v), "the check accepted what zod would change");
      } else {
        refused++;
        if (!doCorrupt) assert.fail(`a valid segment was refused: ${JSON.stringify(v)}`);
      }
    }),
    { numRuns: STRESS ? 100_000 : 3_000, seed: 11 },
  );
  assert.ok(accepted > 0 && refused > 0);
});
