/**
 * A bounded, ordered window over asynchronous work: items enter in order, their work
 * settles in any order, and they are consumed strictly in entry order. Admitting a new
 * item waits (consuming heads) while the window holds `maxItems` items, or while the
 * results that finished and wait behind an unfinished head weigh `maxWeight` or more
 * (`weigh`, e.g. a segment's encoded bytes). So at most `maxItems` units of work exist at
 * once, and the memory parked behind a slow head is bounded by what finished results
 * actually hold — not by a guess made before the work ran (a unit's source size says
 * little about its result: most transcript bytes are tool output that is never kept).
 * The consumer sees each item's outcome as a value or the error it failed with; a
 * failure never stops the window.
 */

/** A settled item. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Options for {@link OrderedWindow}. */
export interface OrderedWindowOptions<T, C> {
  maxItems: number;
  maxWeight: number;
  /** The memory a finished value holds while it waits. @default () => 0 */
  weigh?: (value: T) => number;
  /** Called once per item, in entry order, never concurrently. */
  consume: (item: Settled<T>, ctx: C) => Promise<void> | void;
}

interface Entry<T, C> {
  settled: Promise<Settled<T>>;
  ctx: C;
  /** Counted in the window's weight once settled. */
  weight: number;
}

/** See the header. */
export class OrderedWindow<T, C> {
  readonly #o: OrderedWindowOptions<T, C>;
  #entries: Entry<T, C>[] = [];
  #weight = 0;

  constructor(o: OrderedWindowOptions<T, C>) {
    if (!Number.isInteger(o.maxItems) || o.maxItems < 1) {
      throw new RangeError(`maxItems must be a positive integer, got ${o.maxItems}`);
    }
    this.#o = o;
  }

  /** Items entered and not consumed yet. */
  get size(): number {
    return this.#entries.length;
  }

  /** What the finished, unconsumed results weigh now. */
  get weight(): number {
    return this.#weight;
  }

  /**
   * Waits (consuming heads) until a new item is admitted, then starts its work with
   * `start()` and enters it with the context its consumer gets. Work is started only
   * once admitted.
   */
  async push(start: () => Promise<T>, ctx: C): Promise<void> {
    while (
      this.#entries.length > 0 &&
      (this.#entries.length >= this.#o.maxItems || this.#weight >= this.#o.maxWeight)
    ) await this.#consumeHead();
    let work: Promise<T>;
    try {
      work = start();
    } catch (error) {
      work = Promise.reject(error);
    }
    const entry: Entry<T, C> = { settled: null!, ctx, weight: 0 };
    // The handlers are attached at once: a failure must never be an unhandled rejection
    // while it waits behind a slower head.
    entry.settled = work.then(
      (value): Settled<T> => {
        entry.weight = this.#o.weigh?.(value) ?? 0;
        this.#weight += entry.weight;
        return { ok: true, value };
      },
      (error): Settled<T> => ({ ok: false, error }),
    );
    this.#entries.push(entry);
  }

  /** Consumes every item left, in order. */
  async drain(): Promise<void> {
    while (this.#entries.length > 0) await this.#consumeHead();
  }

  async #consumeHead(): Promise<void> {
    const head = this.#entries[0]!;
    const item = await head.settled;
    this.#entries.shift();
    this.#weight -= head.weight;
    await this.#o.consume(item, head.ctx);
  }
}
