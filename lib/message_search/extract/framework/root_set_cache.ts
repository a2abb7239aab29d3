/**
 * A process-wide cache per set of roots (discovery's header/metadata caches). The wiring
 * builds extractors anew every sweep, so a cache that died with its extractor made every
 * sweep re-read every header; keyed by the root set, it outlives them. Bounded: past
 * `maxRootSets` sets (tests build many), the set used least recently is dropped — a miss
 * only costs a re-read, since entries are validated by file signature where they are used.
 */

/** Root sets kept by default. */
export const ROOT_SET_CACHES = 16;

/** Caches of type `C`, one per root set (order of the roots matters: it is their priority). */
export class RootSetCache<C> {
  #caches = new Map<string, C>();
  #max: number;

  constructor(o: { maxRootSets?: number } = {}) {
    const { maxRootSets = ROOT_SET_CACHES } = o;
    if (!Number.isSafeInteger(maxRootSets) || maxRootSets <= 0) {
      throw new RangeError(`Root set cache size must be a positive integer: got ${maxRootSets}`);
    }
    this.#max = maxRootSets;
  }

  /** The cache of `roots`, if one is kept. */
  get(roots: readonly string[]): C | undefined {
    return this.#caches.get(JSON.stringify(roots));
  }

  /** Keeps `cache` for `roots` as the most recently used (dropping the oldest past the cap). */
  set(roots: readonly string[], cache: C): void {
    const key = JSON.stringify(roots);
    this.#caches.delete(key);
    this.#caches.set(key, cache);
    if (this.#caches.size > this.#max) this.#caches.delete(this.#caches.keys().next().value!);
  }

  /** The cache of `roots`, created with `make` when none is kept; marked most recent. */
  obtain(roots: readonly string[], make: () => C): C {
    const cache = this.get(roots) ?? make();
    this.set(roots, cache);
    return cache;
  }
}
