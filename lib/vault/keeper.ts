/**
 * The Keeper: runs vault keeps off the sweep's path. A sweep offers the units it listed
 * (every unit on a full sweep, the touched ones on a scoped sweep) and the keys it found
 * gone; the Keeper keeps them one batch at a time in the background, merging what is
 * offered meanwhile (the latest files of a key win), so a daemon's searches and sweeps
 * never wait for compression. `settled()` resolves once everything offered so far is
 * kept (one-shot commands await it before they exit; tests too).
 * stop() ends the work after the unit in hand.
 * Invariant: at most one keep in flight (the vault has one writer); a failed keep is
 * reported through `logger` and in `last`, and the next offer runs normally.
 */
import type { KeepReport, KeepUnit, Vault } from "./vault.ts";

/** Options for {@link Keeper}. */
export interface KeeperOptions {
  vault: Vault;
  /** Which sources are kept (the source table's keep rule: files only). */
  keeps: (source: string) => boolean;
  logger?: (line: string) => void;
}

/** See the module header. */
export class Keeper {
  readonly vault: Vault;
  readonly #o: KeeperOptions;
  #units = new Map<string, KeepUnit>();
  #gone = new Set<string>();
  #running: Promise<void> | null = null;
  #stopped = false;
  /** The last keep's report (null until one ran). */
  last: KeepReport | null = null;

  constructor(o: KeeperOptions) {
    this.vault = o.vault;
    this.#o = o;
  }

  /** Offers what a sweep listed; returns at once (ignored once stopped). */
  offer(units: readonly KeepUnit[], gone: readonly string[] = []): void {
    if (this.#stopped) return;
    for (const u of units) if (this.#o.keeps(u.source)) this.#units.set(u.key, u);
    for (const k of gone) this.#gone.add(k);
    if (this.#units.size + this.#gone.size > 0) this.#running ??= this.#run();
  }

  /** Resolves when everything offered so far is kept. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /**
   * Stops after the unit being kept (a daemon's shutdown must not wait for a backlog;
   * what was not kept is kept by the next process's first sweep, the files being there).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#units.clear();
    this.#gone.clear();
    await this.settled();
  }

  async #run(): Promise<void> {
    try {
      while (this.#units.size + this.#gone.size > 0) {
        const units = [...this.#units.values()];
        const gone = [...this.#gone];
        this.#units = new Map();
        this.#gone = new Set();
        try {
          const r = await this.vault.keep(units, { stop: () => this.#stopped });
          await this.vault.markGone(gone);
          this.last = r;
          for (const e of r.errors.slice(0, 5)) this.#o.logger?.(`vault: ${e}`);
          if (r.errors.length > 5) {
            this.#o.logger?.(`vault: ${r.errors.length - 5} more files not kept`);
          }
        } catch (err) {
          this.#o.logger?.(`vault: keep failed: ${err instanceof Error ? err.message : err}`);
        }
      }
    } finally {
      this.#running = null;
    }
  }
}
