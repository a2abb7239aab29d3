/**
 * json_patch: applyPatch(a, diffJson(a, b)) rebuilds b for arbitrary JSON values, never
 * mutates a, and sliding windows come out as small patches; ill-fitting patches throw
 * PatchError.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { applyPatch, diffJson, type Patch, PatchError } from "./json_patch.ts";

Deno.test("property: patch(a, diff(a, b)) deep-equals b and leaves a untouched", () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  // Related pairs are the interesting case: b derived from a by small edits.
  const related = json.chain((a) =>
    fc.tuple(fc.constant(a), fc.oneof(json, fc.constant(structuredClone(a)), edited(a)))
  );
  fc.assert(
    fc.property(related, ([a, b]) => {
      const before = JSON.stringify(a);
      const p = diffJson(a, b);
      if (p === undefined) return assert.deepEqual(a, b);
      const out = JSON.parse(JSON.stringify(applyPatch(a, JSON.parse(JSON.stringify(p)))));
      assert.deepEqual(out, JSON.parse(JSON.stringify(b)));
      assert.equal(JSON.stringify(a), before, "a is not mutated");
    }),
    { numRuns: STRESS ? 50_000 : 3_000, seed: 4 },
  );
});

function edited(a: unknown): fc.Arbitrary<unknown> {
  return fc.nat(5).map((n) => {
    const c = structuredClone(a);
    if (Array.isArray(c)) {
      c.splice(0, Math.min(n, c.length));
      c.push(n, { n });
      if (c.length > 0) c[0] = [c[0]];
    } else if (c !== null && typeof c === "object") {
      (c as Record<string, unknown>)[`k${n}`] = n;
      const first = Object.keys(c)[0];
      if (first !== undefined && n % 2 === 0) delete (c as Record<string, unknown>)[first];
    }
    return c;
  });
}

Deno.test("a sliding window with updated flags patches as a drop, a few fields and a tail", () => {
  const uuid = (i: number) => `00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`;
  const win = (from: number, flag: number) =>
    Array.from({ length: 24 }, (_, i) => [uuid(from + i), uuid(from + i - 1), flag]);
  const a = { nodes: 100, win: win(0, 3) };
  const b = { nodes: 101, win: win(1, 1) };
  const p = diffJson(a, b)!;
  assert.deepEqual(applyPatch(a, p), b);
  assert.ok(JSON.stringify(p).length < JSON.stringify(b).length / 2, JSON.stringify(p));
});

Deno.test("patches that do not fit their value throw PatchError", () => {
  const bad: [unknown, unknown][] = [
    [1, { $o: {} }],
    [[1], { $s: [2, {}, []] }],
    [[1], { $s: [0, { 5: { $v: 1 } }, []] }],
    [{ a: 1 }, { $o: { b: { $o: {} } } }],
    [{}, JSON.parse('{"$o":{"__proto__":{"$v":1}}}')],
    [{}, { nope: 1 }],
    [[], { $s: [0, {}, "x"] }],
  ];
  for (const [value, patch] of bad) {
    assert.throws(() => applyPatch(value, patch as Patch), PatchError, JSON.stringify(patch));
  }
});
