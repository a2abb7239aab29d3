import assert from "node:assert/strict";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { objectMembers, topLevelMembers } from "./json_members.ts";

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

/** The scanner's verdict the way the manifest reader uses it: members, each value parsed. */
function scanParse(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const out: Record<string, unknown> = {};
    for (const m of topLevelMembers(bytes)) {
      Object.defineProperty(out, m.key, {
        value: JSON.parse(dec.decode(bytes.subarray(m.start, m.end))),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof TypeError || err instanceof RangeError) {
      return null;
    }
    throw err;
  }
}

/** JSON.parse of the whole text, as the old reader did; null when it throws or is no object. */
function wholeParse(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(bytes));
  } catch (err) {
    void err;
    return null;
  }
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

Deno.test("scanning members then parsing each value accepts exactly what JSON.parse accepts", () => {
  const objects = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 8 });
  const spaced = fc.tuple(objects, fc.constantFrom(0, 1, 2, "\t")).map(([o, sp]) =>
    enc.encode(JSON.stringify(o, null, sp))
  );
  // Mutants: truncations, bit flips and spliced bytes of valid texts, and raw bytes.
  const mutant = fc.tuple(spaced, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(3)).map(
    ([b, at, byte, how]) => {
      if (b.length === 0) return b;
      const i = at % b.length;
      if (how === 0) return b.slice(0, i);
      const c = b.slice();
      if (how === 1) c[i] = c[i]! ^ (1 << (byte % 8));
      else if (how === 2) c[i] = byte;
      else return new Uint8Array([...b.slice(0, i), byte, ...b.slice(i)]);
      return c;
    },
  );
  const input = fc.oneof(spaced, mutant, fc.uint8Array({ maxLength: 40 }));
  fc.assert(
    fc.property(input, (bytes) => {
      const whole = wholeParse(bytes);
      const scanned = scanParse(bytes);
      if (!isPlainObject(whole)) {
        // Not an object at the top (or not JSON): the scanner refuses it too.
        assert.equal(scanned, null, new TextDecoder().decode(bytes));
        return;
      }
      assert.notEqual(scanned, null, new TextDecoder().decode(bytes));
      assert.deepEqual(scanned, whole);
    }),
    { numRuns: STRESS ? 50_000 : 3_000, seed: 16 },
  );
});

Deno.test("objectMembers gives each member's exact value range, nested and with escapes", () => {
  const text = ' \n{"a" : 1 ,"b\\"q":{"x":[1,"}]\\\\",{"y":null}]},"c":"\\u00e9\\"","d":-1.5e3,' +
    '"e":true,"f":[],"g":{}}  ';
  const b = enc.encode(text);
  const { members, end } = objectMembers(b, 0);
  assert.equal(text.slice(end).trim(), "");
  const got = members.map((m) => [m.key, text.slice(m.start, m.end)]);
  assert.deepEqual(got, [
    ["a", "1"],
    ['b"q', '{"x":[1,"}]\\\\",{"y":null}]}'],
    ["c", '"\\u00e9\\""'],
    ["d", "-1.5e3"],
    ["e", "true"],
    ["f", "[]"],
    ["g", "{}"],
  ]);
  // A byte order mark before the object is skipped, as TextDecoder does for JSON.parse.
  assert.equal(
    topLevelMembers(new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"k":2}')]))[0]?.key,
    "k",
  );
  for (const bad of ['{"a":1}x', '{"a" 1}', '{"a":1,}', "[1]", '{"a":"x', "{a:1}", '{"a":1 2}']) {
    assert.throws(() => topLevelMembers(enc.encode(bad)), SyntaxError, bad);
  }
});
