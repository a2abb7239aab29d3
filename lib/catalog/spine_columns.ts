/**
 * Growable typed-array columns for the spine index (spine_index.ts): one number per
 * element in a flat buffer instead of an object per row, so a 120 MB session.jsonl's
 * index is a few MiB. Capacity grows by half again when full; `trim()` gives the slack
 * back once a build or an extension is done (a cached index holds exactly what it uses).
 */

type Typed = Uint8Array | Uint32Array | Int32Array | Float64Array;
type Ctor<T extends Typed> = { new (n: number): T };

/** One growable column of `T`. */
export class Column<T extends Typed> {
  #a: T;
  #n = 0;
  readonly #ctor: Ctor<T>;

  constructor(ctor: Ctor<T>, capacity = 256) {
    this.#ctor = ctor;
    this.#a = new ctor(capacity);
  }

  get length(): number {
    return this.#n;
  }

  /** Bytes held (capacity, not length). */
  get bytes(): number {
    return this.#a.byteLength;
  }

  /** Appends `v`; returns its index. */
  push(v: number): number {
    if (this.#n === this.#a.length) this.#resize(Math.max(256, Math.ceil(this.#a.length * 1.5)));
    this.#a[this.#n] = v;
    return this.#n++;
  }

  /** The value at `i` (the caller keeps `i` in range). */
  at(i: number): number {
    return this.#a[i]!;
  }

  set(i: number, v: number): void {
    this.#a[i] = v;
  }

  /** Drops the unused capacity. */
  trim(): void {
    if (this.#a.length > this.#n) this.#resize(Math.max(1, this.#n));
  }

  #resize(n: number): void {
    const next = new this.#ctor(n);
    next.set(this.#a.subarray(0, Math.min(this.#n, n)) as never);
    this.#a = next;
  }
}

export const u8 = () => new Column(Uint8Array);
export const u32 = () => new Column(Uint32Array);
export const i32 = () => new Column(Int32Array);
export const f64 = () => new Column(Float64Array);

/** Estimated bytes of a Map from strings (V8: an entry, a key string, a small value). */
export function mapBytes(m: Map<string, unknown>, perValue = 16): number {
  let n = 0;
  for (const k of m.keys()) n += 48 + k.length * 2 + perValue;
  return n;
}
