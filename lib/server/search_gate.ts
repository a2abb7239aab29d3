/**
 * The per-daemon concurrency cap for message search (spec: 2). Excess requests are
 * answered 429 `busy` with Retry-After instead of queueing, so a burst can never pile
 * work onto the daemon. A slot is released in `finally`, whatever happens to the request
 * (an aborted client included), so no slot leaks.
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
