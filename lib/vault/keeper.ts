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
 * The disk budget is enforced between keeps, in the same queue (so a prune never races
 * a keep): the first keep of a process measures the vault, later ones add what they
 * wrote to that figure and prune only when it passes the budget — a daemon does not
 * re-read every catalog after every append.
 */
import { formatBytes } from "../text/mod.ts";
import type { KeepReport, KeepUnit, PruneReport, Vault } from "./vault.ts";

/** Options for {@link Keeper}. */
export interface KeeperOptions {
  vault: Vault;
  /** Which sources are kept (the source table's keep rule: files and databases). */
  keeps: (source: string) => boolean;
  /**
   * What of a listed unit is kept (db_export.ts keptUnitOf: a database session becomes
   * the export of its rows); null: nothing. @default the unit as it is
   */
  unitOf?: (u: KeepUnit) => KeepUnit | null;
  /** The disk budget (INTENDANT_VAULT_MAX_BYTES); null: none. */
  maxBytes?: number | null;
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
  /** The last prune's report when the budget bit (null: it has not). */
  lastPrune: PruneReport | null = null;
  /** Object bytes as last measured plus what keeps wrote since (null: not measured). */
  #used: number | null = null;
  #saidOver = false;
  #recovered = false;

  constructor(o: KeeperOptions) {
    this.vault = o.vault;
    this.#o = o;
  }

  /** Offers what a sweep listed; returns at once (ignored once stopped). */
  offer(units: readonly KeepUnit[], gone: readonly string[] = []): void {
    if (this.#stopped) return;
    for (const u of units) {
      if (!this.#o.keeps(u.source)) continue;
      const k = this.#o.unitOf ? this.#o.unitOf(u) : u;
      if (k) this.#units.set(k.key, k);
    }
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
      if (!this.#recovered) {
        this.#recovered = true;
        await this.vault.recover().catch((err) =>
          this.#o.logger?.(`vault: cleanup failed: ${err instanceof Error ? err.message : err}`)
        );
      }
      while (this.#units.size + this.#gone.size > 0) {
        const units = [...this.#units.values()];
        const gone = [...this.#gone];
        this.#units = new Map();
        this.#gone = new Set();
        try {
          const r = await this.vault.keep(units, { stop: () => this.#stopped });
          await this.vault.markGone(gone);
          this.last = r;
          await this.#budget(r.bytesWritten);
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

  async #budget(written: number): Promise<void> {
    const max = this.#o.maxBytes ?? null;
    if (max === null) return;
    if (this.#used !== null && this.#used + written <= max) {
      this.#used += written;
      return;
    }
    const p = await this.vault.prune(max);
    this.#used = p.after;
    if (p.versions > 0) {
      this.lastPrune = p;
      this.#o.logger?.(
        `vault: over its budget of ${formatBytes(max)}: pruned ${p.versions} old version(s)` +
          ` (${p.gone_files} of files their agent deleted), ${formatBytes(p.before)} → ${
            formatBytes(p.after)
          }`,
      );
    }
    if (p.over && !this.#saidOver) {
      this.#saidOver = true;
      this.#o.logger?.(
        p.refused
          ? `vault: over its budget of ${formatBytes(max)} and not pruned: ${p.refused}`
          : `vault: ${formatBytes(p.after)} kept, over its budget of ${
            formatBytes(max)
          } with only current copies left; new sessions are still kept (raise INTENDANT_VAULT_MAX_BYTES)`,
      );
    }
    if (!p.over) this.#saidOver = false;
  }
}
