/**
 * The extraction worker's entry (a dedicated module worker; see extract_pool.ts for how
 * it is started from a source checkout and from the single file). It rebuilds the
 * extractors from the plain roots each job names (cached while they stay the same), runs
 * the unit's extract call through the same function the main thread uses
 * (unit_job.ts), encodes the segment, and posts the outcome back with the segment bytes
 * transferred. One job at a time: the pool never sends a second before the first is
 * answered, so the per-process caches an extractor keeps are used as in one thread.
 *
 * It reads only what the extractors read, with the permissions it inherited from the
 * process (Deno's default for workers): under `serve --locked` that is the state root and
 * the agent homes. An extract call that throws fails its unit (posted back as "failed");
 * an error that escapes every handler is posted as "crash", and the pool replaces the
 * worker.
 */
import { buildExtractors, type PoolSpec } from "../extractor_set.ts";
import type { Extractor } from "../extract/mod.ts";
import { sourceIoStats } from "../io_stats.ts";
import type { Source } from "../record.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";
import { runUnitJob } from "./unit_job.ts";

interface WorkerScope {
  postMessage(msg: FromWorker, options?: { transfer?: Transferable[] }): void;
  addEventListener(type: string, fn: (e: Event) => void): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
}
const scope = globalThis as unknown as WorkerScope;

let built: { key: string; bySource: Map<Source, Extractor> } | null = null;

async function extractorFor(spec: PoolSpec, source: Source): Promise<Extractor> {
  const key = JSON.stringify(spec);
  if (built?.key !== key) {
    // A factory module (tests) builds its own extractors; production uses the real set.
    const build: (roots: PoolSpec["roots"]) => Extractor[] = spec.factory
      ? (await import(spec.factory)).buildExtractors
      : buildExtractors;
    built = { key, bySource: new Map(build(spec.roots).map((ex) => [ex.source, ex])) };
  }
  const ex = built.bySource.get(source);
  if (!ex) throw new TypeError(`No extractor for source "${source}" in the worker`);
  return ex;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function runJob(m: Extract<ToWorker, { type: "job" }>): Promise<void> {
  const opens0 = sourceIoStats().opens;
  try {
    const ex = await extractorFor(m.spec, m.source);
    const result = await runUnitJob(ex, m.job, m.encode);
    const opens = sourceIoStats().opens - opens0;
    const transfer = "encoded" in result && result.encoded ? [result.encoded.bytes.buffer] : [];
    scope.postMessage({ type: "done", id: m.id, result, opens }, { transfer });
  } catch (err) {
    const opens = sourceIoStats().opens - opens0;
    scope.postMessage({ type: "failed", id: m.id, message: messageOf(err), opens });
  }
}

scope.onmessage = (e) => {
  const m = e.data;
  if (m.type === "ping") scope.postMessage({ type: "pong" });
  else void runJob(m);
};

// Errors that escape the job's own try (a rejection nobody awaited, a throw in a timer):
// the worker's state can no longer be trusted. Reported once as a crash, and handled here
// so the runtime does not print its own report of it.
scope.addEventListener("error", (e) => {
  e.preventDefault();
  scope.postMessage({ type: "crash", message: messageOf((e as ErrorEvent).error ?? e) });
});
scope.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  scope.postMessage({ type: "crash", message: messageOf((e as PromiseRejectionEvent).reason) });
});

scope.postMessage({ type: "ready" });
