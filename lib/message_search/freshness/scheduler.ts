/**
 * When a daemon's index sweeps, and how fresh its answers are (issue 28). Owns the
 * watcher, the timers and the queue of sweeps; the indexer decides what a sweep reads.
 *
 * - A change the watcher reports is swept DEBOUNCE_MS after the first one (later
 *   changes join it), scoped to the sources and paths that changed: an append is
 *   searchable without anyone asking, typically within a tenth of a second plus the sweep.
 * - A full sweep runs every SAFETY_NET_MS anyway (a missed event, a clock jump), and
 *   re-resolves the roots (a lease registered or released), as does an event on a target
 *   with no sources (the lease and staging directories).
 * - When a watch fails, overflows or hits the inotify limit, polling takes over at once:
 *   a full sweep now, then one every max(POLL_MIN_MS, POLL_SWEEP_FACTOR × the last full
 *   sweep) — a tenth of a core at most — with a note coverage shows. Failed watches are
 *   retried at the safety-net period; polling stops when every watch is back.
 * - Sweeps run one at a time, in order (one queue). A scoped sweep that met a sweep
 *   already in flight (a repair, a refresh) waits for it, then runs its own.
 * - No search waits for any of this: status() says how fresh the published index is.
 *   `as_of_ms` is the time up to which every source is reflected: now, while every watch
 *   holds and no change waits; else the first change not yet swept; while polling, the
 *   start of the last full sweep. refresh() is the explicit "sweep first" for a caller who
 *   asks (`refresh=1`, `--refresh`).
 */
import type { Source } from "../record.ts";
import type { SweepReport, SweepScope } from "../indexer.ts";
import type { WatchTarget } from "../extractor_set.ts";
import type { WatchFs } from "./watch_fs.ts";
import { RootWatcher } from "./watcher.ts";

/** Wait after the first change before sweeping (the bound: ≤ 100 ms). */
export const DEBOUNCE_MS = 50;
/** The full sweep that runs whatever the watcher says. */
export const SAFETY_NET_MS = 5 * 60_000;
/** Fallback polling never sweeps more often than this... */
export const POLL_MIN_MS = 5_000;
/** ...nor spends more than 1/POLL_SWEEP_FACTOR of the time sweeping. */
export const POLL_SWEEP_FACTOR = 10;
/** How often roots that do not exist, and cannot be watched through an ancestor, are looked for. */
export const RECHECK_MS = 30_000;
/** More changed paths than this waiting at once are swept as one full sweep. */
export const PENDING_PATHS_MAX = 10_000;

/** What the scheduler needs from the indexer. */
export interface Sweeper {
  sweep(scope?: SweepScope | null): Promise<SweepReport>;
  idle(): Promise<void>;
}

/** Options for {@link FreshnessScheduler}. */
export interface FreshnessOptions {
  indexer: Sweeper;
  /** The roots to watch, re-resolved after every full sweep. */
  targets: () => Promise<WatchTarget[]>;
  /** The file system's watches; null: watching is off and polling keeps the index fresh. */
  fs: WatchFs | null;
  /** The indexer's clock (report times are compared with it). */
  now?: () => number;
  debounceMs?: number;
  safetyNetMs?: number;
  pollMinMs?: number;
  recheckMs?: number;
  /** After every sweep this scheduler ran (the team publisher wakes on it). */
  onSwept?: (r: SweepReport) => void;
  logger?: (line: string) => void;
}

/** How fresh the published index is (search responses and coverage carry it). */
export interface Freshness {
  /** watching: file events drive sweeps; polling: a timer does (watching failed or is off). */
  mode: "watching" | "polling";
  /** Every source is reflected up to this time; null: nothing swept yet. */
  as_of_ms: number | null;
  age_ms: number | null;
  /** Changes seen and not yet searchable. */
  pending: number;
  /** Why the index may lag (a failed watch and how to fix it), or null. */
  note: string | null;
  /** Roots watched directly, and roots that do not exist yet. */
  watched: number;
  waiting: number;
}

/** Changes a sweep took (and when), to put back if that sweep did not cover them. */
interface Taken {
  paths: Set<string>;
  sources: Set<Source>;
  full: boolean;
  since: number | null;
  at: number;
}

export class FreshnessScheduler {
  readonly #o: Required<Omit<FreshnessOptions, "onSwept" | "logger" | "fs">> & FreshnessOptions;
  #watcher: RootWatcher | null = null;
  #paths = new Set<string>();
  #sources = new Set<Source>();
  #full = false;
  /** When the oldest change not yet taken by a sweep arrived. */
  #pendingSince: number | null = null;
  /** The oldest change the running sweep covers. */
  #sweepingSince: number | null = null;
  #lastFullStart: number | null = null;
  #lastFullMs = 0;
  /** The start of the first full sweep made while every watch held (as_of may be "now" after it). */
  #coveredFrom: number | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #debounce: ReturnType<typeof setTimeout> | null = null;
  #safety: ReturnType<typeof setTimeout> | null = null;
  #poll: ReturnType<typeof setTimeout> | null = null;
  #recheck: ReturnType<typeof setInterval> | null = null;
  #polling = false;
  #stopped = false;
  /** A full sweep queued and not yet started (refresh() callers share it). */
  #queuedFull: Promise<SweepReport> | null = null;

  constructor(o: FreshnessOptions) {
    this.#o = {
      ...o,
      now: o.now ?? Date.now,
      debounceMs: o.debounceMs ?? DEBOUNCE_MS,
      safetyNetMs: o.safetyNetMs ?? SAFETY_NET_MS,
      pollMinMs: o.pollMinMs ?? POLL_MIN_MS,
      recheckMs: o.recheckMs ?? RECHECK_MS,
    };
  }

  /** Arms the watches and the safety net. Sweeps nothing by itself (refresh() does). */
  async start(): Promise<void> {
    if (this.#o.fs) {
      this.#watcher = new RootWatcher({
        fs: this.#o.fs,
        onChange: (paths, sources) => this.#changed(paths, sources),
        onRescan: () => {
          this.#o.logger?.("message index: the file watch overflowed; sweeping everything");
          this.#changed([], [], true);
        },
        onHealth: () => this.#healthChanged(),
      });
      await this.#watcher.update(await this.#o.targets());
      this.#recheck = setInterval(() => void this.#watcher?.recheck(), this.#o.recheckMs);
    }
    this.#healthChanged(true);
    this.#armSafetyNet();
  }

  /**
   * Sweeps everything now (after the sweep in flight); what `refresh=1` waits for.
   * Callers that ask while a full sweep is queued and not started share it: a burst of
   * refreshes costs one sweep after the running one, never a queue of them.
   */
  refresh(): Promise<SweepReport> {
    if (this.#queuedFull) return this.#queuedFull;
    const p = this.#enqueue(() => {
      this.#queuedFull = null;
      return this.#fullSweep();
    });
    this.#queuedFull = p;
    p.catch(() => {}).finally(() => {
      if (this.#queuedFull === p) this.#queuedFull = null;
    });
    return p;
  }

  /** How fresh the published index is now. */
  status(): Freshness {
    const now = this.#o.now();
    const h = this.#watcher?.health() ?? null;
    const watching = !this.#polling && h !== null;
    let asOf: number | null;
    if (watching && this.#coveredFrom !== null) {
      const since = [this.#pendingSince, this.#sweepingSince].filter((x) => x !== null);
      asOf = since.length > 0 ? Math.min(...since as number[]) : now;
    } else asOf = this.#lastFullStart;
    return {
      mode: watching ? "watching" : "polling",
      as_of_ms: asOf,
      age_ms: asOf === null ? null : Math.max(0, now - asOf),
      pending: this.#paths.size + (this.#full ? 1 : 0),
      note: this.#note(h),
      watched: h?.watching ?? 0,
      waiting: h?.waiting ?? 0,
    };
  }

  /** Stops the timers and the watches; waits for the sweep this scheduler runs. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of [this.#debounce, this.#safety, this.#poll]) if (t !== null) clearTimeout(t);
    if (this.#recheck !== null) clearInterval(this.#recheck);
    this.#watcher?.close();
    await this.#queue.catch(() => {});
  }

  #note(h: ReturnType<RootWatcher["health"]> | null): string | null {
    if (!this.#o.fs) {
      return `file watching is off; every root is swept every ${this.#pollSeconds()} s`;
    }
    if (!h || h.failed.length === 0) return null;
    const total = h.watching + h.waiting + h.failed.length;
    return `watching failed for ${h.failed.length} of ${total} roots (${h.failed[0]!.note}); ` +
      `every root is swept every ${this.#pollSeconds()} s until the watch works again`;
  }

  #pollMs(): number {
    return Math.max(this.#o.pollMinMs, POLL_SWEEP_FACTOR * this.#lastFullMs);
  }

  #pollSeconds(): number {
    return Math.round(this.#pollMs() / 100) / 10;
  }

  #changed(paths: readonly string[], sources: readonly Source[], rescan = false): void {
    if (this.#stopped) return;
    this.#pendingSince ??= this.#o.now();
    if (rescan || sources.length === 0) this.#full = true;
    for (const s of sources) this.#sources.add(s);
    for (const p of paths) this.#paths.add(p);
    if (this.#paths.size > PENDING_PATHS_MAX) this.#full = true;
    this.#kick();
  }

  /** Schedules the sweep of what is pending, once, DEBOUNCE_MS from now. */
  #kick(): void {
    if (this.#debounce === null && !this.#stopped) {
      this.#debounce = setTimeout(() => {
        this.#debounce = null;
        void this.#enqueue(() => this.#scopedSweep()).catch((err) =>
          this.#o.logger?.(`message index sweep failed: ${(err as Error).message}`)
        );
      }, this.#o.debounceMs);
    }
  }

  /** `initial`: at start, where the daemon's own first sweep is about to run. */
  #healthChanged(initial = false): void {
    if (this.#stopped) return;
    const h = this.#watcher?.health();
    const degraded = !this.#o.fs || (h !== undefined && h.failed.length > 0);
    if (degraded === this.#polling) return;
    this.#polling = degraded;
    if (degraded) {
      this.#coveredFrom = null;
      if (this.#o.fs) this.#o.logger?.(`message index: ${this.#note(h ?? null)}`);
      // Takes over at once: what the lost watch would have seen is swept now.
      this.#schedulePoll(initial ? this.#pollMs() : 0);
    } else {
      if (this.#poll !== null) clearTimeout(this.#poll);
      this.#poll = null;
      this.#o.logger?.("message index: file watching works again");
    }
  }

  #schedulePoll(ms: number): void {
    if (this.#poll !== null) clearTimeout(this.#poll);
    this.#poll = setTimeout(async () => {
      this.#poll = null;
      await this.refresh().catch((err) =>
        this.#o.logger?.(`message index sweep failed: ${(err as Error).message}`)
      );
      if (this.#polling && !this.#stopped && this.#poll === null) {
        this.#schedulePoll(this.#pollMs());
      }
    }, ms);
  }

  #armSafetyNet(): void {
    this.#safety = setTimeout(async () => {
      this.#safety = null;
      await this.#watcher?.retryFailed();
      await this.refresh().catch((err) =>
        this.#o.logger?.(`message index sweep failed: ${(err as Error).message}`)
      );
      if (!this.#stopped) this.#armSafetyNet();
    }, this.#o.safetyNetMs);
  }

  #enqueue<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => {
      if (this.#stopped) throw new Error("the index is shutting down");
      return f();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Takes what is pending; put back with #restore when the sweep did not cover it. */
  #take(): Taken {
    const t = {
      paths: this.#paths,
      sources: this.#sources,
      full: this.#full,
      since: this.#pendingSince,
      at: this.#o.now(),
    };
    this.#paths = new Set();
    this.#sources = new Set();
    this.#full = false;
    this.#pendingSince = null;
    this.#sweepingSince = t.since;
    return t;
  }

  #restore(t: Taken): void {
    for (const p of t.paths) this.#paths.add(p);
    for (const s of t.sources) this.#sources.add(s);
    this.#full ||= t.full;
    if (t.since !== null) {
      this.#pendingSince = Math.min(this.#pendingSince ?? t.since, t.since);
    }
    if (this.#full || this.#paths.size > 0) this.#kick();
  }

  async #scopedSweep(): Promise<SweepReport | null> {
    if (this.#full) return this.#fullSweep();
    if (this.#paths.size === 0) return null;
    await this.#o.indexer.idle();
    const t = this.#take();
    try {
      const r = await this.#o.indexer.sweep({ sources: t.sources, paths: t.paths });
      // Shared with a sweep that started before these changes were taken: run ours next.
      if (r.startedAtMs < t.at) this.#restore(t);
      this.#o.onSwept?.(r);
      return r;
    } catch (err) {
      this.#restore(t);
      throw err;
    } finally {
      this.#sweepingSince = null;
    }
  }

  async #fullSweep(): Promise<SweepReport> {
    await this.#o.indexer.idle();
    const healthy = !this.#polling && this.#watcher !== null;
    const t = this.#take();
    let r: SweepReport;
    try {
      r = await this.#o.indexer.sweep(null);
    } catch (err) {
      this.#restore(t);
      throw err;
    } finally {
      this.#sweepingSince = null;
    }
    if (r.startedAtMs < t.at || r.scope !== null) this.#restore(t);
    else {
      this.#lastFullStart = r.startedAtMs;
      this.#lastFullMs = r.durationMs;
      if (healthy && !this.#polling) this.#coveredFrom ??= r.startedAtMs;
    }
    this.#o.onSwept?.(r);
    // The roots may have changed (a lease): watch what the next sweep will read.
    if (this.#watcher && !this.#stopped) {
      await this.#watcher.update(await this.#o.targets()).catch((err) =>
        this.#o.logger?.(`message index: cannot update the file watch: ${(err as Error).message}`)
      );
    }
    return r;
  }
}
