/**
 * fast-check material for the extractor fuzz (tests/reliability_fuzz_test.ts): a batch
 * is a list of slots, each either a fresh valid line (a rel2_lines variant) or a mutant
 * of a line already written (a fixture line of the same session, or an earlier valid
 * line of the batch). Mutations are data, so fast-check can shrink a failing batch:
 * field drops, type swaps, Unicode injections, truncations, duplicated and odd ids, huge
 * values (≤ 1 MiB strings, 20k-deep arrays, 1e400), whole-line JSON or raw bytes.
 * A mutant always comes AFTER the line it copies: duplicated ids then follow the formats'
 * first-wins rules instead of shadowing a valid line that is not written yet.
 */
import fc from "fast-check";
import type { Source } from "../../lib/message_search/mod.ts";
import { concatBytes, VALID_VARIANTS, validLine, type ValidVariant } from "./rel2_lines.ts";

/** One mutation step. `pick` chooses a path of the object (modulo the path count). */
export type Mutation =
  | { op: "drop"; pick: number }
  | { op: "swap"; pick: number; value: unknown }
  | { op: "unicode"; pick: number; at: number; inject: string }
  | { op: "id"; which: number; dup: number | null; value: unknown }
  | { op: "huge"; pick: number; kind: "string" | "deep" | "number" | "array"; size: number }
  | { op: "truncate"; at: number };

/** One line of a batch. */
export type Slot =
  | { kind: "valid"; variant: ValidVariant }
  | { kind: "mutant"; src: number; ops: Mutation[] }
  | { kind: "json"; value: unknown }
  | { kind: "raw"; bytes: Uint8Array };

const INJECT = [
  "\ud800",
  "\udfff",
  "\u0000",
  "\u202e",
  "\ufeff",
  "\uffff",
  "🧪",
  "e\u0301",
  "\u2028",
  "\\",
  '"',
  "\r",
  "\n",
  "</script>",
  "%2e%2e%2f",
];

const specialNumber = fc.constantFrom(
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  1e-300,
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  specialNumber,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);
const oddId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    "",
    "x".repeat(10_000),
    "../../etc/passwd",
    "/etc/passwd",
    "🧪\ud800",
    "a\u0000b",
    "L1",
    "main:L1",
    0,
    -1,
    1.5,
    1e308,
    null,
    true,
  ),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.uuid(),
);

const lightMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("drop" as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant("swap" as const), pick: fc.nat(), value: anyValue }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("unicode" as const),
      pick: fc.nat(),
      at: fc.nat(),
      inject: fc.constantFrom(...INJECT),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("id" as const),
      which: fc.nat(),
      dup: fc.option(fc.nat(), { freq: 2, nil: null }),
      value: oddId,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }) },
);
const hugeMutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constant("huge" as const),
  pick: fc.nat(),
  kind: fc.constantFrom("string" as const, "deep" as const, "number" as const, "array" as const),
  size: fc.integer({ min: 1 << 10, max: 1 << 20 }),
});

const mutantSlot: fc.Arbitrary<Slot> = fc.record({
  kind: fc.constant("mutant" as const),
  src: fc.nat(),
  ops: fc.tuple(
    fc.array(lightMutation, { minLength: 1, maxLength: 3 }),
    // About one mutant in 30 carries one huge value (never two: Kimi's 2 MiB record cap).
    fc.oneof(
      { weight: 29, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: hugeMutation },
    ),
  ).map(([light, huge]) => (huge ? [...light, huge] : light)),
});

/** A batch of `n` slots: ~20 % valid lines, mostly mutants, a few whole-line oddities. */
export function batchArb(n: number): fc.Arbitrary<Slot[]> {
  const slot: fc.Arbitrary<Slot> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("valid" as const),
        variant: fc.constantFrom(...VALID_VARIANTS.filter((v) => v !== "big_text")),
      }),
    },
    { weight: 18, arbitrary: mutantSlot },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("json" as const),
        value: fc.jsonValue({ maxDepth: 4 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("raw" as const),
        bytes: fc.uint8Array({ maxLength: 120 }),
      }),
    },
  );
  return fc.array(slot, { minLength: n, maxLength: n });
}

/** Id-like fields per format (paths into a line object). */
const ID_FIELDS: Partial<Record<Source, string[][]>> = {
  intendant: [["data", "message_seq"], ["data", "cut_after_seq"], ["turn"], ["file"]],
  codex: [["payload", "id"], ["payload", "turn_id"], ["payload", "call_id"]],
  "claude-code": [["uuid"], ["parentUuid"], ["sessionId"], ["message", "id"], ["leafUuid"]],
  kimi: [["agentId"], ["event", "uuid"], ["event", "stepUuid"], ["count"]],
  pi: [["id"], ["parentId"], ["parentSession"]],
  gemini: [["id"], ["$rewindTo"], ["sessionId"]],
  qwen: [["uuid"], ["parentUuid"], ["sessionId"]],
  copilot: [["id"], ["parentId"], ["data", "messageId"]],
  droid: [["id"], ["message", "id"], ["parentId"]],
};

/** A format's id-like fields; none for a source this mutator does not know yet. */
function idFieldsOf(source: Source): string[][] {
  return ID_FIELDS[source] ?? [];
}

type Json = Record<string, unknown> | unknown[];
type Path = (string | number)[];

function paths(v: unknown, at: Path = [], out: Path[] = [], depth = 0): Path[] {
  if (depth > 6 || typeof v !== "object" || v === null) return out;
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  for (const [k, x] of entries) {
    const p = [...at, k];
    out.push(p);
    paths(x, p, out, depth + 1);
  }
  return out;
}

function getAt(o: unknown, p: Path): unknown {
  let cur = o;
  for (const k of p) cur = (cur as Record<string | number, unknown> | null)?.[k];
  return cur;
}

function setAt(o: Json, p: Path, value: unknown, del = false): void {
  let cur: unknown = o;
  for (const k of p.slice(0, -1)) {
    const next = (cur as Record<string | number, unknown>)[k];
    if (typeof next !== "object" || next === null) {
      (cur as Record<string | number, unknown>)[k] = {};
    }
    cur = (cur as Record<string | number, unknown>)[k];
  }
  const last = p[p.length - 1]!;
  if (Array.isArray(cur) && typeof last === "number") {
    if (del) cur.splice(last, 1);
    else cur[last] = value;
  } else if (del) delete (cur as Record<string, unknown>)[last];
  else (cur as Record<string | number, unknown>)[last] = value;
}

/** Materializes a batch: the bytes of every line, and the valid lines' indices. */
export interface BuiltBatch {
  lines: Uint8Array[];
  /** Marker indices of the valid lines (1-based, consecutive). */
  valid: number[];
}

/**
 * Builds the lines of `batch` for `source`. `pool` holds the fixture session's own line
 * objects; `userLine` makes valid lines; `tag` is the marker tag.
 */
export function buildBatch(
  source: Source,
  batch: Slot[],
  o: {
    pool: Record<string, unknown>[];
    userLine: (text: string, i: number) => string;
    tag: string;
  },
): BuiltBatch {
  const enc = new TextEncoder();
  const lines: Uint8Array[] = [];
  const valid: number[] = [];
  // Sources a mutant may copy: the fixture's lines, then each valid line once written.
  const sources: Record<string, unknown>[] = [...o.pool];
  const ids: unknown[] = [];
  for (const p of o.pool) for (const f of idFieldsOf(source)) ids.push(getAt(p, f));
  for (const slot of batch) {
    if (slot.kind === "valid") {
      const i = valid.length + 1;
      valid.push(i);
      const bytes = validLine(o.userLine, o.tag, i, slot.variant);
      lines.push(bytes);
      sources.push(JSON.parse(o.userLine(`${o.tag} copy of ${i}`, i)));
      continue;
    }
    if (slot.kind === "json") {
      lines.push(enc.encode(JSON.stringify(slot.value) + "\n"));
      continue;
    }
    if (slot.kind === "raw") {
      lines.push(concatBytes([slot.bytes.map((b) => (b === 0x0a ? 0x20 : b)), enc.encode("\n")]));
      continue;
    }
    const obj = structuredClone(sources[slot.src % sources.length]!) as Json;
    const raw = new Map<string, string>();
    let truncateAt: number | null = null;
    for (const m of slot.ops) {
      const ps = paths(obj);
      const pick = (n: number) => (ps.length ? ps[n % ps.length]! : null);
      if (m.op === "truncate") truncateAt = m.at;
      else if (m.op === "drop") {
        const p = pick(m.pick);
        if (p) setAt(obj, p, undefined, true);
      } else if (m.op === "swap") {
        const p = pick(m.pick);
        if (p) setAt(obj, p, structuredClone(m.value));
      } else if (m.op === "unicode") {
        const p = pick(m.pick);
        if (!p) continue;
        const cur = getAt(obj, p);
        // Not String(): a generated object may carry its own "toString" key.
        const s = typeof cur === "string" ? cur : JSON.stringify(cur) ?? "";
        const at = m.at % (s.length + 1);
        setAt(obj, p, s.slice(0, at) + m.inject + s.slice(at));
      } else if (m.op === "id") {
        // A format without id fields (Cursor's transcripts) has nothing to forge.
        if (idFieldsOf(source).length === 0) continue;
        const f = idFieldsOf(source)[m.which % idFieldsOf(source).length]!;
        const dupOf = m.dup !== null && ids.length ? ids[m.dup % ids.length] : undefined;
        // A copy: a shared sub-object could otherwise make a later line circular.
        setAt(obj, f, structuredClone(dupOf !== undefined ? dupOf : m.value));
      } else if (m.op === "huge") {
        const p = pick(m.pick);
        if (!p) continue;
        const token = `@@RAW${raw.size}@@`;
        raw.set(
          token,
          m.kind === "string"
            ? JSON.stringify("\u00e9".repeat(m.size / 2))
            : m.kind === "deep"
            ? "[".repeat(Math.min(m.size, 20_000)) + "]".repeat(Math.min(m.size, 20_000))
            : m.kind === "number"
            ? ["1e400", "-1e400", "123456789012345678901234567890", "-0.0e-400"][m.size % 4]!
            : JSON.stringify(Array.from({ length: Math.min(m.size, 50_000) }, (_, k) => k)),
        );
        setAt(obj, p, token);
      }
    }
    for (const f of idFieldsOf(source)) ids.push(getAt(obj, f));
    let text = JSON.stringify(obj);
    for (const [token, fragment] of raw) text = text.replace(`"${token}"`, () => fragment);
    let bytes = enc.encode(text);
    if (truncateAt !== null) bytes = bytes.subarray(0, truncateAt % (bytes.length + 1));
    lines.push(concatBytes([bytes, enc.encode("\n")]));
  }
  return { lines, valid };
}
