/**
 * Structural diff and patch of JSON values, pure. The manifest journal writes an entry
 * that changed as a patch against its previous version: appending one message to a long
 * Claude session changes a few numbers, one cursor and a sliding window of DAG nodes,
 * while the whole entry is ~4.5 KiB (issue 9: ≤ 4 KiB written per appended message).
 *
 * A patch is one of
 *   {"$v": value}                        replace with value;
 *   {"$o": {key: patch}, "$d": [keys]}   object: patch these keys, delete those;
 *   {"$s": [drop, {i: patch}, [tail]]}   array: drop `drop` leading elements, patch
 *                                        element i of what remains, append `tail`.
 * The array form captures sliding windows (drop old, append new) and in-place updates.
 * Invariant: applyPatch(a, diffJson(a, b)) deep-equals b for all JSON values a, b
 * (diffJson returns undefined when they are already equal). applyPatch never mutates its
 * input (it copies along the patched path) and throws PatchError on a patch that does
 * not fit the value it is applied to.
 */

export type Patch =
  | { $v: unknown }
  | { $o: Record<string, Patch>; $d?: string[] }
  | { $s: [number, Record<string, Patch>, unknown[]] };

/** A patch that does not fit the value (a damaged or misapplied journal line). */
export class PatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatchError";
  }
}

/** Arrays longer than this are replaced whole (alignment search is quadratic). */
const MAX_ALIGN = 256;
/** Leading elements an array patch may drop (a window sliding by more is replaced). */
const MAX_DROP = 64;

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** Deep equality over JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isObj(a) || !isObj(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

/** The patch turning `a` into `b`, or undefined when they are equal. */
export function diffJson(a: unknown, b: unknown): Patch | undefined {
  if (jsonEqual(a, b)) return undefined;
  if (isObj(a) && isObj(b)) {
    const o: Record<string, Patch> = {};
    for (const k of Object.keys(b)) {
      const p = Object.hasOwn(a, k) ? diffJson(a[k], b[k]) : { $v: b[k] };
      if (p !== undefined) o[k] = p;
    }
    const d = Object.keys(a).filter((k) => !Object.hasOwn(b, k));
    return d.length > 0 ? { $o: o, $d: d } : { $o: o };
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length <= MAX_ALIGN && b.length <= MAX_ALIGN) {
    const p = diffArray(a, b);
    if (p !== null) return p;
  }
  return { $v: b };
}

/**
 * Aligns b after dropping d leading elements of a (d ≤ MAX_DROP), choosing the d whose
 * patch is smallest; null when replacing the array is no larger.
 */
function diffArray(a: unknown[], b: unknown[]): Patch | null {
  const full = size(b);
  let best: { cost: number; at: Record<string, Patch>; d: number; overlap: number } | null = null;
  for (let d = 0; d <= Math.min(a.length, MAX_DROP); d++) {
    const overlap = a.length - d;
    // A shrink at the end (elements of `a` past what b keeps): a replacement says it best.
    if (overlap > b.length) continue;
    let cost = size(b.slice(overlap));
    const at: Record<string, Patch> = {};
    const bound = Math.min(best?.cost ?? full, full);
    for (let i = 0; i < overlap && cost < bound; i++) {
      const p = diffJson(a[d + i], b[i]);
      if (p !== undefined) {
        at[i] = p;
        cost += size(p) + 4;
      }
    }
    if (cost < bound) best = { cost, at, d, overlap };
  }
  return best === null ? null : { $s: [best.d, best.at, b.slice(best.overlap)] };
}

function size(x: unknown): number {
  return JSON.stringify(x).length;
}

/** `a` with `p` applied (a new value; `a` is not mutated). */
export function applyPatch(a: unknown, p: Patch): unknown {
  if (!isObj(p)) throw new PatchError("a patch must be an object");
  if ("$v" in p) return p.$v;
  if ("$o" in p) {
    if (!isObj(a) || !isObj(p.$o)) throw new PatchError("object patch on a non-object");
    const out: Obj = { ...a };
    for (const [k, sub] of Object.entries(p.$o)) {
      if (k === "__proto__") throw new PatchError("prototype key in a patch");
      out[k] = Object.hasOwn(a, k) ? applyPatch(a[k], sub) : applyNew(sub);
    }
    for (const k of p.$d ?? []) {
      if (typeof k !== "string") throw new PatchError("deleted keys must be strings");
      delete out[k];
    }
    return out;
  }
  if ("$s" in p) {
    const s = p.$s;
    if (!Array.isArray(a) || !Array.isArray(s) || s.length !== 3) {
      throw new PatchError("array patch on a non-array");
    }
    const [drop, at, tail] = s;
    if (!Number.isSafeInteger(drop) || drop < 0 || drop > a.length || !isObj(at)) {
      throw new PatchError("array patch does not fit");
    }
    if (!Array.isArray(tail)) throw new PatchError("array patch tail must be an array");
    const out = a.slice(drop);
    for (const [i, sub] of Object.entries(at)) {
      const n = Number(i);
      if (!Number.isSafeInteger(n) || n < 0 || n >= out.length) {
        throw new PatchError("array patch index out of range");
      }
      out[n] = applyPatch(out[n], sub as Patch);
    }
    for (const x of tail) out.push(x);
    return out;
  }
  throw new PatchError("unknown patch form");
}

/** A key the old value lacked: only a replacement can create it. */
function applyNew(p: Patch): unknown {
  if (isObj(p) && "$v" in p) return p.$v;
  throw new PatchError("a new key needs a replacement patch");
}
