/**
 * The catalog's async locks, for work whose memory must not multiply with the number of
 * requests: a FIFO mutex (one big spine line, one external source file at a time), a
 * counting semaphore whose waiters queue (spine builds), and a reader-writer lock per
 * session spine (spine_cache.ts). Holders release in `finally`; waiters are served in
 * arrival order.
 */

/** A FIFO mutex. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Waits for the lock; resolves with its release function. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => held);
    return ready;
  }
}

/** A reader-writer lock (writers first once waiting, so an extension is not starved). */
export class RwLock {
  readers = 0;
  writer = false;
  #waiting: { write: boolean; go: () => void }[] = [];

  get idle(): boolean {
    return !this.writer && this.readers === 0 && this.#waiting.length === 0;
  }

  read(): Promise<void> {
    if (!this.writer && !this.#waiting.some((w) => w.write)) {
      this.readers++;
      return Promise.resolve();
    }
    return new Promise((go) => this.#waiting.push({ write: false, go }));
  }

  write(): Promise<void> {
    if (!this.writer && this.readers === 0) {
      this.writer = true;
      return Promise.resolve();
    }
    return new Promise((go) => this.#waiting.push({ write: true, go }));
  }

  release(): void {
    if (this.writer) this.writer = false;
    else this.readers--;
    this.#wake();
  }

  /** Write → read, letting waiting readers in too. */
  downgrade(): void {
    this.writer = false;
    this.readers++;
    this.#wake();
  }

  #wake(): void {
    while (this.#waiting.length && !this.writer) {
      const next = this.#waiting[0]!;
      if (next.write) {
        if (this.readers > 0) return;
        this.writer = true;
      } else this.readers++;
      this.#waiting.shift();
      next.go();
    }
  }
}

/** A counting semaphore whose waiters queue. */
export class Semaphore {
  #free: number;
  #queue: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((r) => this.#queue.push(r));
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#queue.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
