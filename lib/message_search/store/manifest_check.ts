/**
 * The manifest's per-entry check, without zod (issue 16: in a CPU profile of a one-shot
 * `intendant search` on the bench's 1,700-session store, ManifestEntrySchema over the
 * snapshot's entries and a 2.2 MiB journal replay took ≈ 250 ms of zod's parse and checks,
 * the largest part of reading the manifest in a cold process).
 *
 * Invariant: checkManifestEntry(x) accepts exactly what ManifestEntrySchema.safeParse(x)
 * accepts, and its value is the same as zod's `data` — key order included — and likewise
 * checkDelta for the journal's DeltaSchema (journal.ts). Both schemas stay the definition:
 * manifest_check_test.ts holds them as the oracle over random valid and mutated inputs.
 * What zod v4 (4.6) does, reproduced here:
 *  - z.object: any non-array object (class instances too); fields are read with `x[k]`
 *    and `k in x` (inherited ones count); the output is a new object holding the shape's
 *    keys in the shape's order — unknown keys are stripped. A required key must be
 *    present (even `z.unknown()`: an absent `state` is refused, `state: undefined` kept);
 *    an optional one is copied only when present (`undefined` included); a defaulted one
 *    (`rewrite_epoch`) is always set, its default when the value is undefined.
 *  - z.record: only "plain" objects (zod's isPlainObject, which reads `constructor`); its
 *    own enumerable keys in property order; "__proto__" is skipped without checking its
 *    value (so `{"__proto__": -1}` passes and is dropped); an enumerable symbol key is
 *    refused; the output is a new object.
 *  - z.array: a new array; numbers: finite, `.int()` is a safe integer, -0 passes as -0;
 *    z.unknown() values and strings are passed through as the same reference.
 * A refusal names the first refused field's path (zod lists every issue; the verdict is
 * the same). Values are described by kind, never quoted whole: a manifest holds session
 * titles, which are conversation text.
 */
import { SOURCES } from "../record.ts";
import type { FileCursor } from "../cursor_types.ts";
import type { Delta } from "./journal.ts";
import type { EntryMeta, ManifestEntry } from "./types.ts";

/** A checked value, or why it was refused (`where: what`, e.g. `cursors["/a"].offset: …`). */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

type Obj = Record<string, unknown>;
type Key = string | number;

/** Set by a refusing parser; the path is filled in by the parsers it unwinds through. */
interface Refusal {
  path: Key[];
  expected: string;
  got: unknown;
}

const FAIL = Symbol("refused");
/** Refusal.expected of a required field that is absent. */
const MISSING = "the field";
/** Returns the parsed value (a copy where zod copies), or FAIL with `r` filled in. */
type Parse = (x: unknown, r: Refusal) => unknown;

/** How an object field may be absent (zod's optin/optout). */
interface Slot {
  parse: Parse;
  presence: "required" | "optional" | "defaulted";
  /** The value of a defaulted field whose value is undefined. */
  fallback?: unknown;
}

function refuse(r: Refusal, expected: string, got: unknown): typeof FAIL {
  r.path = [];
  r.expected = expected;
  r.got = got;
  return FAIL;
}

const leaf = (test: (x: unknown) => boolean, expected: string): Parse => (x, r) =>
  test(x) ? x : refuse(r, expected, x);

const SOURCE_SET: ReadonlySet<unknown> = new Set(SOURCES);
const GENERATION_NAME = /^[0-9a-f]{16}\.seg$/;

const str = leaf((x) => typeof x === "string", "a string");
const bool = leaf((x) => typeof x === "boolean", "a boolean");
const num = leaf((x) => typeof x === "number" && Number.isFinite(x), "a finite number");
const int = leaf((x) => Number.isSafeInteger(x), "a safe integer");
const nat = leaf((x) => Number.isSafeInteger(x) && (x as number) >= 0, "a non-negative integer");
const pos = leaf((x) => Number.isSafeInteger(x) && (x as number) > 0, "a positive integer");
const any: Parse = (x) => x;

function nullable(p: Parse): Parse {
  return (x, r) => x === null ? null : p(x, r);
}

const required = (parse: Parse): Slot => ({ parse, presence: "required" });
const optional = (parse: Parse): Slot => ({ parse, presence: "optional" });

/** zod's util.isObject. */
function isObject(x: unknown): x is Obj {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** zod's util.isPlainObject, step for step (it decides what z.record accepts). */
function isPlainObject(x: unknown): x is Obj {
  if (!isObject(x)) return false;
  const ctor = x.constructor;
  if (ctor === undefined || typeof ctor !== "function") return true;
  const proto: unknown = ctor.prototype;
  return isObject(proto) && Object.hasOwn(proto, "isPrototypeOf");
}

function array(element: Parse): Parse {
  return (x, r) => {
    if (!Array.isArray(x)) return refuse(r, "an array", x);
    const out = new Array(x.length);
    for (let i = 0; i < x.length; i++) {
      const v = element(x[i], r);
      if (v === FAIL) return at(r, i);
      out[i] = v;
    }
    return out;
  };
}

function record(value: Parse): Parse {
  return (x, r) => {
    if (!isPlainObject(x)) return refuse(r, "an object", x);
    const out: Obj = {};
    // Object.keys is Reflect.ownKeys' string part, enumerable only: zod's iteration.
    for (const k of Object.keys(x)) {
      if (k === "__proto__") continue;
      const v = value(x[k], r);
      if (v === FAIL) return at(r, k);
      out[k] = v;
    }
    for (const s of Object.getOwnPropertySymbols(x)) {
      if (Object.prototype.propertyIsEnumerable.call(x, s)) {
        return refuse(r, "string keys only", String(s));
      }
    }
    return out;
  };
}

function object(shape: Record<string, Slot>): Parse {
  // Parallel arrays and an index loop: in a cold process most entries are checked by the
  // interpreter, where destructuring an entries() iterator per field costs more than the
  // check itself.
  const keys = Object.keys(shape);
  const slots = Object.values(shape);
  return (x, r) => {
    if (!isObject(x)) return refuse(r, "an object", x);
    const out: Obj = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const slot = slots[i]!;
      const v = x[k];
      if (v === undefined) {
        if (slot.presence === "defaulted") {
          out[k] = slot.fallback;
          continue;
        }
        const present = k in x;
        if (slot.presence === "optional") {
          if (present) out[k] = undefined;
          continue;
        }
        if (!present) {
          refuse(r, MISSING, v);
          return at(r, k);
        }
      }
      const p = slot.parse(v, r);
      if (p === FAIL) return at(r, k);
      out[k] = p;
    }
    return out;
  };
}

function at(r: Refusal, key: Key): typeof FAIL {
  r.path.unshift(key);
  return FAIL;
}

/** One slot per FileCursor field, in FileCursorSchema's order (the output's key order). */
const CURSOR: { [K in keyof Required<FileCursor>]: Slot } = {
  dev: required(int),
  ino: required(int),
  size: required(nat),
  mtime_ms: required(nullable(num)),
  captured_at_ms: required(int),
  prefix_len: required(nat),
  prefix_hash: required(str),
  offset: required(nat),
  anchor_len: required(nat),
  anchor_hash: required(str),
  next_line: required(pos),
  rewrite_epoch: { parse: nat, presence: "defaulted", fallback: 0 },
};

const META: { [K in keyof Required<EntryMeta>]: Slot } = {
  project: required(nullable(str)),
  title: required(nullable(str)),
  parent_session_id: required(nullable(str)),
  files: required(array(str)),
};

/**
 * One slot per ManifestEntry field, in ManifestEntrySchema's order. Typed against the
 * schema's inferred type, so a field added to or removed from the schema fails to compile
 * here until its slot is written (the oracle test then checks the slot against zod).
 */
const ENTRY: { [K in keyof Required<ManifestEntry>]: Slot } = {
  source: required(leaf((x) => SOURCE_SET.has(x), `one of ${SOURCES.join(", ")}`)),
  session_id: required(leaf((x) => typeof x === "string" && x.length > 0, "a non-empty string")),
  generations: required(
    array(leaf((x) => typeof x === "string" && GENERATION_NAME.test(x), "a <hash16>.seg name")),
  ),
  records: required(nat),
  newest_ts_ms: required(int),
  oldest_ts_ms: required(int),
  source_watermark: required(nat),
  source_fingerprint: required(str),
  cursors: required(record(object(CURSOR))),
  state: required(any),
  source_gone: required(bool),
  meta: required(object(META)),
  skipped: required(record(nat)),
  published_at_ms: required(int),
  quarantined_at_ms: optional(int),
};

const parseEntry = object(ENTRY);

const DELTA: { [K in keyof Required<Delta>]: Slot } = {
  b: required(nat),
  r: required(nat),
  u: required(int),
  p: required(nat),
  s: required(record(nullable(parseEntry))),
  x: optional(record(any)),
  t: required(record(nullable(int))),
  g: optional(record(nullable(int))),
};

const parseDelta = object(DELTA);

/** The shape's keys in output order, for the oracle test. */
export const ENTRY_KEYS: readonly string[] = Object.keys(ENTRY);

/** `x` as ManifestEntrySchema would parse it (see the header), or where it is refused. */
export function checkManifestEntry(x: unknown): Checked<ManifestEntry> {
  return run(parseEntry, x) as Checked<ManifestEntry>;
}

/** `x` as the journal's DeltaSchema would parse it, or where it is refused. */
export function checkDelta(x: unknown): Checked<Delta> {
  return run(parseDelta, x) as Checked<Delta>;
}

function run(parse: Parse, x: unknown): Checked<unknown> {
  const r: Refusal = { path: [], expected: "", got: undefined };
  const value = parse(x, r);
  if (value !== FAIL) return { ok: true, value };
  const where = r.path.length === 0 ? "(value)" : pathText(r.path);
  if (r.expected === MISSING) return { ok: false, error: `${where}: missing` };
  return { ok: false, error: `${where}: expected ${r.expected}, got ${kindOf(r.got)}` };
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

/** `a.b["c d"][0]` */
function pathText(path: Key[]): string {
  let out = "";
  for (const k of path) {
    if (typeof k === "number") out += `[${k}]`;
    else if (IDENT.test(k)) out += out === "" ? k : `.${k}`;
    else out += `[${JSON.stringify(k)}]`;
  }
  return out;
}

/** A refused value, told without its text (numbers, booleans and null are shown). */
function kindOf(x: unknown): string {
  if (x === null || typeof x === "boolean") return String(x);
  if (typeof x === "number") return Object.is(x, -0) ? "-0" : String(x);
  if (typeof x === "string") return `a string of ${x.length} characters`;
  if (Array.isArray(x)) return `an array of ${x.length}`;
  return typeof x === "object" ? "an object" : typeof x;
}
