/**
 * Where one sweep's extract calls run: on the worker pool or in the indexer's thread.
 * The outcome never depends on the choice (both run unit_job.ts), only the cost does:
 *  - a unit goes to the pool when its extractor can be rebuilt in a worker (extractor_set
 *    registered it), it is read from the start (no prior shard: a new session, a
 *    re-derivation, a rebuild after a parser change) with at least `minUnitBytes` of
 *    source, and the sweep's pooled source bytes so far reach `startBytes`. So a no-op
 *    sweep, an incremental append and a sweep with a few new small sessions never start
 *    a worker (a start costs ≈ 50–100 ms of CPU and a heap), while a backfill spreads over
 *    every core after its first few MiB;
 *  - everything else runs here, ONE call at a time, in the order it was started (as
 *    without a pool: extractors keep per-process caches and were written for one caller).
 * A pool that turns out unable to run (PoolUnavailableError) hands its jobs back here.
 * Source files a worker opened are added to this process's counters (io_stats.ts), so
 * "a no-op sweep opens no source file" stays observable with a pool.
 */
import type { Extractor } from "../extract/mod.ts";
import { poolSpecOf } from "../extractor_set.ts";
import { noteSourceOpens } from "../io_stats.ts";
import { type ExtractPool, PoolUnavailableError } from "./extract_pool.ts";
import { type EncodeSpec, runUnitJob, type UnitJob, type UnitResult } from "./unit_job.ts";

/** A unit smaller than this (bytes to read) is extracted in-thread. */
export const POOL_MIN_UNIT_BYTES = 64 * 1024;
/** A sweep starts workers once this many bytes of pooled work have been met. */
export const POOL_START_BYTES = 4 * 1024 * 1024;

/** Options for {@link UnitRouter}. */
export interface UnitRouterOptions {
  pool: ExtractPool | null;
  /** How workers encode their segments; null: they hand records over. */
  encode: EncodeSpec | null;
  /** @default POOL_MIN_UNIT_BYTES */
  minUnitBytes?: number;
  /** @default POOL_START_BYTES */
  startBytes?: number;
}

/** Where a sweep's units were extracted (SweepReport.extraction). */
export interface ExtractionReport {
  /** Pool size (1: no workers). */
  workers: number;
  /** Units extracted on workers / in the indexer's thread. */
  pooled: number;
  inThread: number;
  /** Worker crashes seen by this sweep, and units retried after one. */
  crashes: number;
  retried: number;
  /** Why the pool could not be used, when it could not. */
  unavailable: string | null;
}

/** One sweep's router (see the header). */
export class UnitRouter {
  readonly #o: Required<UnitRouterOptions>;
  #chain: Promise<unknown> = Promise.resolve();
  #pooledBytes = 0;
  readonly #report: ExtractionReport;
  readonly #stats0: { crashes: number; retried: number };

  constructor(o: UnitRouterOptions) {
    this.#o = {
      ...o,
      minUnitBytes: o.minUnitBytes ?? POOL_MIN_UNIT_BYTES,
      startBytes: o.startBytes ?? POOL_START_BYTES,
    };
    const s = o.pool?.stats();
    this.#stats0 = { crashes: s?.crashes ?? 0, retried: s?.retried ?? 0 };
    this.#report = {
      workers: o.pool?.size ?? 1,
      pooled: 0,
      inThread: 0,
      crashes: 0,
      retried: 0,
      unavailable: o.pool?.disabled ?? null,
    };
  }

  /**
   * Starts `ex`'s extract call for `job`. `readBytes` is the source size to read when the
   * unit is read from the start, null otherwise.
   */
  run(ex: Extractor, job: UnitJob, readBytes: number | null): Promise<UnitResult> {
    const { pool } = this.#o;
    const spec = pool && !pool.disabled && job.prior === null ? poolSpecOf(ex) : null;
    if (spec && readBytes !== null && readBytes >= this.#o.minUnitBytes) {
      this.#pooledBytes += readBytes;
      if (this.#pooledBytes >= this.#o.startBytes) {
        this.#report.pooled++;
        return pool!.run(ex, spec, job, this.#o.encode).then(
          ({ result, opens }) => {
            noteSourceOpens(opens);
            return result;
          },
          (err) => {
            noteSourceOpens((err as { opens?: number }).opens ?? 0);
            if (!(err instanceof PoolUnavailableError)) throw err;
            this.#report.pooled--;
            return this.#inThread(ex, job);
          },
        );
      }
    }
    return this.#inThread(ex, job);
  }

  /** The sweep's figures (call when every job has settled). */
  report(): ExtractionReport {
    const s = this.#o.pool?.stats();
    return {
      ...this.#report,
      crashes: (s?.crashes ?? 0) - this.#stats0.crashes,
      retried: (s?.retried ?? 0) - this.#stats0.retried,
      unavailable: this.#o.pool?.disabled ?? this.#report.unavailable,
    };
  }

  #inThread(ex: Extractor, job: UnitJob): Promise<UnitResult> {
    this.#report.inThread++;
    const p = this.#chain.then(() => runUnitJob(ex, job, null));
    // The chain only orders the calls; each caller sees its own call's failure.
    this.#chain = p.catch(() => undefined);
    return p;
  }
}
