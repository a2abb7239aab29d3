/**
 * checkManifestEntry and checkDelta against their oracles, ManifestEntrySchema and the
 * journal's DeltaSchema: over random valid inputs and mutants of them (wrong types,
 * missing and extra keys, NaN/±Infinity/-0/non-integers/unsafe integers, bad generation
 * names, hostile keys such as "__proto__" and "constructor", non-plain objects, symbol
 * keys, junk nested in cursors, meta and the delta's maps), the verdict must be zod's, and
 * an accepted value must equal zod's `data` down to key order and -0.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { SOURCES } from "../record.ts";
import { DeltaSchema } from "./journal.ts";
import { checkDelta, checkManifestEntry, ENTRY_KEYS } from "./manifest_check.ts";
import { parseManifestBytes } from "./manifest_io.ts";
import { ManifestEntrySchema } from "./types.ts";

const SEED = Number(Deno.env.get("INTENDANT_SEED") ?? "1616");

type Obj = Record<string, unknown>;

/** An object with these own enumerable keys, "__proto__" included (as JSON.parse makes). */
function dict(entries: [string, unknown][], o: Obj = {}): Obj {
  for (const [k, v] of entries) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/** `o` with `src`'s own enumerable string keys defined on it (never a prototype change). */
function copyInto(o: Obj, src: object): Obj {
  return dict(Object.keys(src).map((k) => [k, (src as Obj)[k]]), o);
}

/**
 * a and b are the same value: deepStrictEqual (prototypes, -0, undefined-valued keys) and,
 * which it ignores, the same own keys in the same order at every level.
 */
function assertSame(a: unknown, b: unknown, path = "$"): void {
  if (path === "$") assert.deepStrictEqual(a, b);
  if (a === null || typeof a !== "object" || b === null || typeof b !== "object") return;
  assert.deepEqual(Reflect.ownKeys(a), Reflect.ownKeys(b), `key order at ${path}`);
  for (const k of Reflect.ownKeys(a)) {
    assertSame((a as Obj)[k as string], (b as Obj)[k as string], `${path}.${String(k)}`);
  }
}

const hostileKey = fc.constantFrom(
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "0",
  "7",
  "/s/a b.jsonl",
  "",
  "source",
  "state",
);
const key = fc.oneof(hostileKey, fc.string({ maxLength: 6 }));
const int = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
);
const nat = fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER));
const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const text = fc.string({ maxLength: 8 });
const genName = fc.stringMatching(/^[0-9a-f]{16}\.seg$/);

/** Values that break some field or other (made anew each time: mutants are edited in place). */
const junk = fc.constantFrom<() => unknown>(
  () => undefined,
  () => null,
  () => -1,
  () => -0,
  () => 0.5,
  () => -2.5,
  () => NaN,
  () => Infinity,
  () => -Infinity,
  () => 2 ** 53,
  () => -(2 ** 53),
  () => 1e300,
  () => "",
  () => "x",
  () => "1",
  () => "0123456789abcdef.seg",
  () => "0123456789ABCDEF.seg",
  () => "0123456789abcdef.json",
  () => "../0123456789abcdef.seg",
  () => "0123456789abcdef.seg\n",
  () => "codex",
  () => true,
  () => false,
  () => [],
  () => [1],
  () => ["0123456789abcdef.seg"],
  () => ({}),
  () => ({ a: 1 }),
  () => new Date(0),
  () => Object.create(null),
  () => new Map(),
).map((make) => ({ make }));

const cursor = fc.record({
  dev: int,
  ino: int,
  size: nat,
  mtime_ms: fc.option(finite, { nil: null }),
  captured_at_ms: int,
  prefix_len: nat,
  prefix_hash: text,
  offset: nat,
  anchor_len: nat,
  anchor_hash: text,
  next_line: fc.integer({ min: 1 }),
  rewrite_epoch: fc.oneof(nat, fc.constant(undefined)),
}, {
  requiredKeys: [
    "dev",
    "ino",
    "size",
    "mtime_ms",
    "captured_at_ms",
    "prefix_len",
    "prefix_hash",
    "offset",
    "anchor_len",
    "anchor_hash",
    "next_line",
  ],
}).map((c) => c as Obj);

const entryFields = {
  source: fc.constantFrom(...SOURCES),
  session_id: fc.string({ minLength: 1, maxLength: 6 }),
  generations: fc.array(genName, { maxLength: 3 }),
  records: nat,
  newest_ts_ms: int,
  oldest_ts_ms: int,
  source_watermark: nat,
  source_fingerprint: text,
  cursors: fc.array(fc.tuple(key, cursor), { maxLength: 3 }).map(dict),
  state: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined)),
  source_gone: fc.boolean(),
  meta: fc.record({
    project: fc.option(text, { nil: null }),
    title: fc.option(text, { nil: null }),
    parent_session_id: fc.option(text, { nil: null }),
    files: fc.array(text, { maxLength: 3 }),
  }),
  skipped: fc.array(fc.tuple(key, nat), { maxLength: 3 }).map(dict),
  published_at_ms: int,
  quarantined_at_ms: fc.oneof(int, fc.constant(undefined)),
};

/** A valid entry (up to its cursors' omitted fields), its keys shuffled, extra keys added. */
const validEntry = fc.tuple(
  fc.record(entryFields, {
    requiredKeys: Object.keys(entryFields).filter((k) => k !== "quarantined_at_ms") as never,
  }),
  fc.array(fc.nat(), { minLength: 20, maxLength: 20 }),
  fc.array(fc.tuple(key, fc.anything({ maxDepth: 1 })), { maxLength: 2 }),
).map(([e, order, extra]) => {
  const keys = Object.keys(e).map((k, i) => [order[i]!, k] as const).sort((a, b) => a[0] - b[0]);
  const out = dict(keys.map(([, k]) => [k, (e as Obj)[k]]));
  for (const [k, v] of extra) if (!Object.hasOwn(entryFields, k)) dict([[k, v]], out);
  return out;
});

/** Every [container, key] reachable in `v`, the root's holder included. */
function slots(root: { v: unknown }): [Obj, string][] {
  const out: [Obj, string][] = [];
  const walk = (holder: Obj, k: string, depth: number) => {
    out.push([holder, k]);
    const v = holder[k];
    if (depth > 4 || v === null || typeof v !== "object") return;
    for (const kk of Object.keys(v)) walk(v as Obj, kk, depth + 1);
  };
  walk(root as unknown as Obj, "v", 0);
  return out;
}

class Klass {
  a = 1;
}

/** Applies one of several damages, in place, at slot number `pick` under `root`. */
function mutate(
  root: { v: unknown },
  pick: number,
  op: number,
  junk: { make: () => unknown },
  k: string,
): void {
  const bad = junk.make();
  const all = slots(root);
  const [holder, slot] = all[pick % all.length]!;
  const cur = holder[slot];
  switch (op % 7) {
    case 0:
      holder[slot] = bad;
      break;
    case 1:
      delete holder[slot];
      break;
    case 2: // an extra key (own, "__proto__" too) beside the slot's value
      if (cur !== null && typeof cur === "object") dict([[k, bad]], cur as Obj);
      else holder[slot] = bad;
      break;
    case 3: // the same fields in an object that is not plain
      if (cur !== null && typeof cur === "object" && !Array.isArray(cur)) {
        holder[slot] = copyInto(Object.create(Klass.prototype), cur);
      } else holder[slot] = new Klass();
      break;
    case 4: // a null-prototype copy (plain for zod's isPlainObject)
      if (cur !== null && typeof cur === "object" && !Array.isArray(cur)) {
        holder[slot] = copyInto(Object.create(null), cur);
      } else holder[slot] = bad;
      break;
    case 5: // an enumerable symbol key
      if (cur !== null && typeof cur === "object") {
        (cur as Record<symbol, unknown>)[Symbol("s")] = bad;
      } else holder[slot] = bad;
      break;
    default: // an own "constructor" (zod's isPlainObject reads it)
      if (cur !== null && typeof cur === "object") dict([["constructor", bad]], cur as Obj);
      else holder[slot] = bad;
  }
}

/** A deep copy of plain data (objects, arrays, primitives; "__proto__" keys kept). */
function structuredCloneKeepingProto(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return Array.from(v, structuredCloneKeepingProto);
  return dict(Object.keys(v).map((k) => [k, structuredCloneKeepingProto((v as Obj)[k])]));
}

function agree(x: unknown): boolean {
  const zod = ManifestEntrySchema.safeParse(x);
  const ours = checkManifestEntry(x);
  assert.equal(ours.ok, zod.success, ours.ok ? "we accepted" : `we refused: ${ours.error}`);
  if (ours.ok && zod.success) assertSame(ours.value, zod.data);
  return zod.success;
}

Deno.test("the entry slots are ManifestEntrySchema's keys, in its order", () => {
  assert.deepEqual(ENTRY_KEYS, Object.keys(ManifestEntrySchema.shape));
});

Deno.test("property: checkManifestEntry gives zod's verdict and value on valid entries", () => {
  let accepted = 0;
  const runs = STRESS ? 20_000 : 1_000;
  fc.assert(
    fc.property(validEntry, fc.boolean(), (e, viaJson) => {
      // Through JSON an undefined state disappears, and zod refuses an absent state.
      if (agree(viaJson ? JSON.parse(JSON.stringify(e)) : e)) accepted++;
    }),
    { numRuns: runs, seed: SEED },
  );
  assert.ok(accepted > runs / 2, `accepted ${accepted} of ${runs}`);
});

Deno.test("property: checkManifestEntry gives zod's verdict and value on mutated entries", () => {
  let refused = 0;
  let accepted = 0;
  fc.assert(
    fc.property(
      validEntry,
      fc.array(fc.tuple(fc.nat(), fc.nat(), junk, key), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      (e, damages, viaJson) => {
        const root = { v: structuredCloneKeepingProto(e) };
        for (const [pick, op, bad, k] of damages) mutate(root, pick, op, bad, k);
        let x = root.v;
        if (viaJson) {
          const json = JSON.stringify(x);
          if (json === undefined) return;
          x = JSON.parse(json);
        }
        if (agree(x)) accepted++;
        else refused++;
      },
    ),
    { numRuns: STRESS ? 50_000 : 3_000, seed: SEED },
  );
  // Both verdicts are exercised (a check that refused or accepted everything would agree
  // with zod on one side only).
  assert.ok(refused > 1_000 && accepted > 300, `refused ${refused}, accepted ${accepted}`);
});

Deno.test("checkManifestEntry agrees with zod on hand-picked edge cases", () => {
  const base = () =>
    JSON.parse(
      '{"source":"codex","session_id":"s","generations":["0123456789abcdef.seg"],"records":1,' +
        '"newest_ts_ms":2,"oldest_ts_ms":1,"source_watermark":0,"source_fingerprint":"",' +
        '"cursors":{"/a":{"dev":1,"ino":2,"size":3,"mtime_ms":null,"captured_at_ms":4,' +
        '"prefix_len":0,"prefix_hash":"","offset":0,"anchor_len":0,"anchor_hash":"",' +
        '"next_line":1}},"state":{"k":[1]},"source_gone":false,"meta":{"project":null,' +
        '"title":"t","parent_session_id":null,"files":["/a"]},"skipped":{"x":1},' +
        '"published_at_ms":5}',
    );
  const cases: [string, (e: Obj) => void][] = [
    ["as is", () => {}],
    ["state undefined", (e) => (e.state = undefined)],
    ["state absent", (e) => delete e.state],
    ["quarantined_at_ms undefined", (e) => (e.quarantined_at_ms = undefined)],
    ["quarantined_at_ms -0", (e) => (e.quarantined_at_ms = -0)],
    ["records -0", (e) => (e.records = -0)],
    ["records 2^53", (e) => (e.records = 2 ** 53)],
    ["newest MIN_SAFE", (e) => (e.newest_ts_ms = Number.MIN_SAFE_INTEGER)],
    ["newest -2^53", (e) => (e.newest_ts_ms = -(2 ** 53))],
    ["skipped __proto__ -1", (e) => (e.skipped = JSON.parse('{"__proto__":-1,"a":2}'))],
    ["cursors __proto__ junk", (e) => (e.cursors = JSON.parse('{"__proto__":7}'))],
    ["skipped constructor", (e) => (e.skipped = JSON.parse('{"constructor":1}'))],
    ["cursor rewrite_epoch null", (e) => ((e.cursors as Obj)["/a"] as Obj).rewrite_epoch = null],
    ["cursor rewrite_epoch undefined", (e) => {
      ((e.cursors as Obj)["/a"] as Obj).rewrite_epoch = undefined;
    }],
    ["cursor mtime 0.5", (e) => ((e.cursors as Obj)["/a"] as Obj).mtime_ms = 0.5],
    ["cursor next_line 0", (e) => ((e.cursors as Obj)["/a"] as Obj).next_line = 0],
    ["meta as class", (e) => (e.meta = Object.assign(new Klass(), e.meta as Obj))],
    ["skipped as class", (e) => (e.skipped = new Klass())],
    ["skipped null proto", (e) => (e.skipped = Object.assign(Object.create(null), { a: 1 }))],
    ["inherited source", (e) => {
      delete e.source;
      Object.setPrototypeOf(e, { source: "codex" });
    }],
    ["generation upper", (e) => (e.generations = ["0123456789ABCDEF.seg"])],
    ["session_id empty", (e) => (e.session_id = "")],
  ];
  for (const [label, edit] of cases) {
    const e = base();
    edit(e);
    const zod = ManifestEntrySchema.safeParse(e);
    const ours = checkManifestEntry(e);
    assert.equal(ours.ok, zod.success, label);
    if (ours.ok && zod.success) assertSame(ours.value, zod.data);
  }
});

const delta = fc.record({
  b: nat,
  r: nat,
  u: int,
  p: nat,
  s: fc.array(fc.tuple(key, fc.option(validEntry, { nil: null })), { maxLength: 2 }).map(dict),
  x: fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { maxLength: 2 }).map(dict),
  t: fc.array(fc.tuple(key, fc.option(int, { nil: null })), { maxLength: 2 }).map(dict),
  g: fc.array(fc.tuple(key, fc.option(int, { nil: null })), { maxLength: 2 }).map(dict),
}, { requiredKeys: ["b", "r", "u", "p", "s", "t"] });

Deno.test("property: checkDelta gives DeltaSchema's verdict and value", () => {
  let refused = 0;
  let accepted = 0;
  fc.assert(
    fc.property(
      delta,
      fc.array(fc.tuple(fc.nat(), fc.nat(), junk, key), { maxLength: 2 }),
      fc.boolean(),
      (d, damages, viaJson) => {
        const root = { v: structuredCloneKeepingProto(d) };
        for (const [pick, op, bad, k] of damages) mutate(root, pick, op, bad, k);
        let x = root.v;
        if (viaJson) {
          const json = JSON.stringify(x);
          if (json === undefined) return;
          x = JSON.parse(json);
        }
        const zod = DeltaSchema.safeParse(x);
        const ours = checkDelta(x);
        assert.equal(ours.ok, zod.success, ours.ok ? "we accepted" : `we refused: ${ours.error}`);
        if (ours.ok && zod.success) assertSame(ours.value, zod.data);
        if (zod.success) accepted++;
        else refused++;
      },
    ),
    { numRuns: STRESS ? 20_000 : 1_500, seed: SEED },
  );
  assert.ok(refused > 300 && accepted > 300, `refused ${refused}, accepted ${accepted}`);
});

Deno.test("a refusal names the field's path and describes the value without its text", () => {
  const e = {
    source: "codex",
    session_id: "s",
    generations: ["0123456789abcdef.seg", "secret title"],
  };
  const r = checkManifestEntry(e);
  assert.deepEqual(r, {
    ok: false,
    error: "generations[1]: expected a <hash16>.seg name, got a string of 12 characters",
  });
  const c = checkManifestEntry({
    ...JSON.parse(JSON.stringify(e)),
    generations: [],
    records: 0,
    newest_ts_ms: 0,
    oldest_ts_ms: 0,
    source_watermark: 0,
    source_fingerprint: "",
    cursors: { "/a b.jsonl": { dev: 1, ino: 1, size: 1, mtime_ms: null, offset: -1 } },
  });
  assert.deepEqual(c, { ok: false, error: 'cursors["/a b.jsonl"].captured_at_ms: missing' });
  assert.deepEqual(checkDelta([]), {
    ok: false,
    error: "(value): expected an object, got an array of 0",
  });
});

Deno.test("a snapshot entry the schema refuses makes the manifest corrupt, naming session and field", () => {
  const m = {
    schema: 1,
    parser_version: 1,
    revision: 1,
    updated_at_ms: 1,
    sessions: { "codex:a": { source: "codex", session_id: "a", generations: {} } },
    tombstones: {},
  };
  const r = parseManifestBytes(new TextEncoder().encode(JSON.stringify(m)));
  assert.equal(r.kind, "corrupt");
  const cause = r.kind === "corrupt" ? r.error.cause : null;
  assert.ok(cause instanceof Error);
  assert.equal(
    cause.message,
    'Session "codex:a" is invalid: generations: expected an array, got an object',
  );
});
