/**
 * A per-daemon concurrency cap: message search has one (spec: 2), and so does each heavy
 * route (heavy_gates.ts). Excess requests are answered 429 `busy` with Retry-After
 * instead of queueing, so a burst can never pile work onto the daemon. A slot is
 * released in `finally`, whatever happens to the request (an aborted client included),
 * so no slot leaks; a streamed answer holds its slot through `tryAcquire` until the
 * stream ends, errors or is cancelled.
 */

/** A counting gate. */
export class SearchGate {
  readonly capacity: number;
  #inFlight = 0;
  #maxSeen = 0;

  constructor(capacity = 2) {
    this.capacity = capacity;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Highest concurrency ever observed (for tests). */
  get maxSeen(): number {
    return this.#maxSeen;
  }

  /**
   * Takes a slot, or returns null at once when the gate is full. The release function
   * frees it once, however often it is called.
   */
  tryAcquire(): (() => void) | null {
    if (this.#inFlight >= this.capacity) return null;
    this.#inFlight++;
    this.#maxSeen = Math.max(this.#maxSeen, this.#inFlight);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#inFlight--;
    };
  }

  /** Runs `fn` in a slot, or returns null at once when the gate is full. */
  async run<T>(fn: () => Promise<T>): Promise<{ value: T } | null> {
    if (this.#inFlight >= this.capacity) return null;
    this.#inFlight++;
    this.#maxSeen = Math.max(this.#maxSeen, this.#inFlight);
    try {
      return { value: await fn() };
    } finally {
      this.#inFlight--;
    }
  }
}
