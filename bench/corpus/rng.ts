/**
 * Deterministic randomness for the corpus generator: one seeded PRNG (xoshiro128**) and
 * the few distributions the corpus needs. Same seed, same calls → same corpus, on every
 * machine (no Math.random, no clock).
 */

/** Seeded PRNG with the distributions the generator uses. */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    // splitmix32 expands the seed into the four state words (never all zero).
    let s = seed >>> 0;
    const mix = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = mix();
    this.#b = mix();
    this.#c = mix();
    this.#d = mix() | 1;
  }

  /** A child generator whose stream does not depend on how much the parent is used later. */
  fork(label: number): Rng {
    return new Rng((this.u32() ^ Math.imul(label + 1, 0x27d4eb2f)) >>> 0);
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const r = Math.imul(rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = rotl(this.#d, 11);
    return r;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** Log-normal with the given median and shape σ. */
  lognormal(median: number, sigma: number): number {
    // Box–Muller; 1 - next() keeps log() away from 0.
    const z = Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
    return median * Math.exp(sigma * z);
  }

  /** 32 lowercase hex digits. */
  hex32(): string {
    let s = "";
    for (let i = 0; i < 4; i++) s += this.u32().toString(16).padStart(8, "0");
    return s;
  }

  /** A UUIDv4-shaped id. */
  uuid(): string {
    const h = this.hex32();
    const v = "89ab"[parseInt(h[16]!, 16) & 3];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${
      h.slice(20, 32)
    }`;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Samples ranks 0..n-1 with Zipf weights 1/(rank+1)^s (binary search over the CDF). */
export class Zipf {
  readonly #cdf: Float64Array;

  constructor(n: number, s: number) {
    this.#cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) this.#cdf[i] = sum += 1 / Math.pow(i + 1, s);
    for (let i = 0; i < n; i++) this.#cdf[i]! /= sum;
  }

  sample(rng: Rng): number {
    const u = rng.next();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
