/**
 * Messages between the extraction pool (main thread) and a worker. Plain data only (the
 * structured clone carries them); a result's encoded segment bytes are TRANSFERRED, never
 * copied. A worker runs one job at a time; it answers every ping at once (the pool's
 * liveness check: a worker that ends without an error event is found by its silence).
 */
import type { Source } from "../record.ts";
import type { PoolSpec } from "../extractor_set.ts";
import type { EncodeSpec, UnitJob, UnitResult } from "./unit_job.ts";

/** Main → worker. */
export type ToWorker =
  | {
    type: "job";
    id: number;
    spec: PoolSpec;
    source: Source;
    job: UnitJob;
    encode: EncodeSpec | null;
  }
  | { type: "ping" };

/** Worker → main. `opens` = source files the worker opened for the job (io_stats.ts). */
export type FromWorker =
  | { type: "done"; id: number; result: UnitResult; opens: number }
  /** The extract call threw: the unit failed, the worker is fine. */
  | { type: "failed"; id: number; message: string; opens: number }
  /** An error escaped every handler inside the worker: it is replaced. */
  | { type: "crash"; message: string }
  | { type: "pong" }
  /** Posted once the worker's module has loaded: a crash before it means workers cannot start. */
  | { type: "ready" };
