/**
 * The extraction worker pool: runs unit jobs (unit_job.ts) on up to `size` dedicated
 * module workers, spawned lazily when work is queued and terminated by `idle()` (the
 * indexer calls it when a sweep ends, so an idle daemon holds no worker heaps). Results
 * resolve in completion order; the caller restores order.
 *
 * Where the worker module comes from (`workerSource`):
 *  - the single file (`deno task build`): build.ts bundles worker_main.ts on its own and
 *    embeds the bundle in place of EMBEDDED_WORKER_JS; it starts from a blob: URL, which
 *    needs no read permission, so it runs under `serve --locked` like the rest of the file
 *    (a worker started from a file: URL needs read access to every module it imports —
 *    verified with Deno 2.9.6 — which the locked profile does not grant);
 *  - a source checkout with read permission (`deno task index`, tests, bench): the
 *    worker_main.ts module itself;
 *  - otherwise (no Worker, a locked process run from a checkout, a bundle built without
 *    the embedding step): no pool; the indexer extracts in its own thread, with the same
 *    results.
 *
 * Failure isolation: an extract call that throws fails its unit only. A worker that
 * crashes (an error escaping it, a failed start, or silence: no answer to pings for
 * `livenessMs`, which is how a worker that simply ended is found) is terminated and
 * replaced; its unit is retried once on another worker, then fails. A worker that
 * crashes before it ever became ready means workers cannot run here: the pool turns
 * itself off and every job it still holds rejects with PoolUnavailableError, which the
 * indexer answers by extracting in its own thread.
 */
import type { Extractor } from "../extract/mod.ts";
import type { PoolSpec } from "../extractor_set.ts";
import type { Source } from "../record.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";
import type { EncodeSpec, UnitJob, UnitResult } from "./unit_job.ts";

// Replaced by build.ts with the bundled worker module (a JS string literal); the literal
// must appear exactly once in the single file.
const EMBEDDED_WORKER_JS: string = "__INTENDANT_EXTRACT_WORKER_JS__";

/** The pool cannot run jobs here; the caller extracts in its own thread. */
export class PoolUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PoolUnavailableError";
  }
}

/** How workers are started here: the embedded bundle, the source module, or not at all. */
export type WorkerSource =
  | { kind: "embedded"; js: string }
  | { kind: "module"; url: string }
  | null;

/** Where this process can start extraction workers from (see the header). */
export function workerSource(): WorkerSource {
  if (typeof Worker === "undefined") return null;
  if (!EMBEDDED_WORKER_JS.startsWith("__INTENDANT_EXTRACT_")) {
    return { kind: "embedded", js: EMBEDDED_WORKER_JS };
  }
  const url = new URL("./worker_main.ts", import.meta.url);
  // Inside a bundle without the embedded worker, this module is not at its source path.
  if (url.protocol !== "file:" || !import.meta.url.endsWith("/pool/extract_pool.ts")) return null;
  // The worker imports the whole extractor graph (and npm packages from Deno's cache):
  // only unrestricted read access covers every module of it.
  return Deno.permissions.querySync({ name: "read" }).state === "granted"
    ? { kind: "module", url: url.href }
    : null;
}

/** The default pool size: one worker per core, at least 1 (1 = no workers). */
export function defaultPoolSize(): number {
  const n = typeof navigator === "undefined" ? 1 : navigator.hardwareConcurrency;
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Options for {@link ExtractPool}. */
export interface ExtractPoolOptions {
  /** Most workers at once (≥ 1). */
  size: number;
  source: Exclude<WorkerSource, null>;
  /** A busy worker silent this long is declared dead. @default 60_000 */
  livenessMs?: number;
  /** How often a busy worker is pinged. @default 2_000 */
  pingEveryMs?: number;
  /**
   * How long a worker may take to start (load its module) before it is declared unable
   * to run; never less than livenessMs. A start is not a unit's work: from a source
   * checkout under `deno test` the worker's module graph is type-checked first, seconds of
   * CPU on a loaded machine. @default 60_000
   */
  startMs?: number;
}

/** Counters since the pool was made. */
export interface PoolStats {
  spawned: number;
  crashes: number;
  retried: number;
  completed: number;
}

type JobMessage = Extract<ToWorker, { type: "job" }>;

interface Task {
  msg: Omit<JobMessage, "id">;
  crashes: number;
  resolve: (r: { result: UnitResult; opens: number }) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  taskId: number;
  ready: boolean;
  heardAt: number;
}

/** A pool of extraction workers (see the header). */
export class ExtractPool {
  readonly size: number;
  readonly #o: Required<Omit<ExtractPoolOptions, "size" | "source">>;
  readonly #source: Exclude<WorkerSource, null>;
  #url: string | null = null;
  #queue: Task[] = [];
  #slots = new Set<Slot>();
  #nextId = 1;
  #timer: ReturnType<typeof setInterval> | null = null;
  #disabled: string | null = null;
  readonly #stats: PoolStats = { spawned: 0, crashes: 0, retried: 0, completed: 0 };

  constructor(o: ExtractPoolOptions) {
    if (!Number.isInteger(o.size) || o.size < 1) {
      throw new RangeError(`Pool size must be a positive integer, got ${o.size}`);
    }
    this.size = o.size;
    this.#source = o.source;
    const livenessMs = o.livenessMs ?? 60_000;
    this.#o = {
      livenessMs,
      pingEveryMs: o.pingEveryMs ?? 2_000,
      startMs: Math.max(livenessMs, o.startMs ?? 60_000),
    };
  }

  /** Why the pool turned itself off, or null while it can run jobs. */
  get disabled(): string | null {
    return this.#disabled;
  }

  stats(): PoolStats {
    return { ...this.#stats };
  }

  /** Workers alive now. */
  get workers(): number {
    return this.#slots.size;
  }

  /**
   * Runs one extract call of `ex` (rebuilt in the worker from `spec`). Resolves with the
   * result and the source files the worker opened; rejects with the extract call's error,
   * with a crash error after the retry, or with PoolUnavailableError.
   */
  run(
    ex: Extractor,
    spec: PoolSpec,
    job: UnitJob,
    encode: EncodeSpec | null,
  ): Promise<{ result: UnitResult; opens: number }> {
    if (this.#disabled) return Promise.reject(new PoolUnavailableError(this.#disabled));
    const source: Source = ex.source;
    return new Promise((resolve, reject) => {
      this.#queue.push({
        msg: { type: "job", spec, source, job, encode },
        crashes: 0,
        resolve,
        reject,
      });
      this.#pump();
    });
  }

  /** Terminates every worker (queued and running jobs reject). Workers respawn on demand. */
  idle(): void {
    for (const slot of [...this.#slots]) this.#drop(slot);
    for (const t of this.#queue.splice(0)) t.reject(new PoolUnavailableError("Pool stopped"));
    this.#stopTimer();
    if (this.#url) URL.revokeObjectURL(this.#url);
    this.#url = null;
  }

  #pump(): void {
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) break;
      if (slot.task === null) this.#assign(slot, this.#queue.shift()!);
    }
    while (this.#queue.length > 0 && this.#slots.size < this.size && !this.#disabled) {
      const slot = this.#spawn();
      if (!slot) break;
      this.#assign(slot, this.#queue.shift()!);
    }
  }

  #workerUrl(): string {
    if (this.#source.kind === "module") return this.#source.url;
    this.#url ??= URL.createObjectURL(
      new Blob([this.#source.js], { type: "application/javascript" }),
    );
    return this.#url;
  }

  #spawn(): Slot | null {
    let worker: Worker;
    try {
      worker = new Worker(this.#workerUrl(), { type: "module", name: "intendant-extract" });
    } catch (err) {
      this.#disable(`Cannot start an extraction worker: ${(err as Error).message}`);
      return null;
    }
    this.#stats.spawned++;
    const slot: Slot = { worker, task: null, taskId: 0, ready: false, heardAt: Date.now() };
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.#onMessage(slot, e.data);
    worker.onerror = (e) => {
      // Handled: an error in a worker must never take the process down.
      e.preventDefault();
      this.#crash(slot, e.message || "worker error");
    };
    worker.onmessageerror = () => this.#crash(slot, "a message from the worker was unreadable");
    this.#slots.add(slot);
    this.#startTimer();
    return slot;
  }

  #assign(slot: Slot, task: Task): void {
    slot.task = task;
    slot.taskId = this.#nextId++;
    slot.heardAt = Date.now();
    slot.worker.postMessage({ ...task.msg, id: slot.taskId } satisfies ToWorker);
  }

  #onMessage(slot: Slot, m: FromWorker): void {
    if (!this.#slots.has(slot)) return;
    slot.heardAt = Date.now();
    if (m.type === "ready") {
      slot.ready = true;
      return;
    }
    if (m.type === "pong") return;
    if (m.type === "crash") return this.#crash(slot, m.message);
    const task = slot.task;
    if (!task || m.id !== slot.taskId) return;
    slot.ready = true;
    slot.task = null;
    this.#stats.completed++;
    if (m.type === "done") task.resolve({ result: m.result, opens: m.opens });
    else task.reject(Object.assign(new Error(m.message), { opens: m.opens }));
    this.#pump();
  }

  #crash(slot: Slot, reason: string): void {
    if (!this.#slots.has(slot)) return;
    this.#stats.crashes++;
    const task = slot.task;
    slot.task = null;
    const neverReady = !slot.ready;
    this.#drop(slot);
    if (neverReady) {
      // It failed before it could take any job: workers cannot run here.
      this.#disable(`Extraction worker failed to start: ${reason}`);
      task?.reject(new PoolUnavailableError(this.#disabled!));
      return;
    }
    if (task) {
      task.crashes++;
      if (task.crashes >= 2) {
        task.reject(
          new Error(`Extraction worker crashed on this unit twice (last: ${reason})`),
        );
      } else {
        this.#stats.retried++;
        // Retried first, on a fresh worker (a replacement is spawned by the pump).
        this.#queue.unshift(task);
      }
    }
    this.#pump();
  }

  #drop(slot: Slot): void {
    this.#slots.delete(slot);
    slot.worker.onmessage = null;
    slot.worker.onerror = null;
    slot.worker.terminate();
    slot.task?.reject(new PoolUnavailableError("Pool stopped"));
    slot.task = null;
    if (this.#slots.size === 0) this.#stopTimer();
  }

  #disable(reason: string): void {
    this.#disabled ??= reason;
    for (const slot of [...this.#slots]) this.#drop(slot);
    for (const t of this.#queue.splice(0)) t.reject(new PoolUnavailableError(reason));
  }

  #startTimer(): void {
    if (this.#timer !== null) return;
    const timer = setInterval(() => this.#checkLiveness(), this.#o.pingEveryMs);
    // Liveness checks never keep the process alive on their own.
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopTimer(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #checkLiveness(): void {
    const now = Date.now();
    for (const slot of [...this.#slots]) {
      if (slot.task === null && slot.ready) continue;
      const limit = slot.ready ? this.#o.livenessMs : this.#o.startMs;
      if (now - slot.heardAt > limit) {
        this.#crash(slot, `no answer for ${limit} ms`);
      } else slot.worker.postMessage({ type: "ping" } satisfies ToWorker);
    }
  }
}
