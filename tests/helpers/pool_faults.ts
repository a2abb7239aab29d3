/**
 * The real extractor set with planted faults, for the extraction pool's tests. The plan
 * travels in this module's URL (`?plan=<json>`), so a worker that imports the factory
 * URL rebuilds exactly the same faulty set from the same roots (extractor_set.ts
 * PoolSpec.factory). A unit is matched by its key. Faults:
 *  - throws:      extract rejects with "planted failure" (in a worker or in-thread);
 *  - crashOnce:   in a worker, an uncaught error escapes the first attempt (a marker file
 *                 under `markerDir` remembers it); the retry extracts normally;
 *  - crashAlways: in a worker, every attempt crashes that way;
 *  - exitOnce:    in a worker, the first attempt ends the worker mid-unit without any
 *                 error event (`self.close()`), like a worker that simply vanished;
 *  - slow:        extract waits `ms` first;
 *  - log:         a file every extract call appends "start <key>" and "end <key>" to.
 * In-thread (not in a worker) the crash faults throw an ordinary error instead: crashing
 * the test process would prove nothing.
 */
import { join } from "node:path";
import {
  buildExtractors as buildReal,
  type Extractor,
  registerPoolable,
  type SourceRoots,
} from "../../lib/message_search/mod.ts";

/** What to plant (see the header). */
export interface FaultPlan {
  throws?: string[];
  crashOnce?: string[];
  crashAlways?: string[];
  exitOnce?: string[];
  markerDir?: string;
  slow?: { key: string; ms: number }[];
  log?: string;
}

function inWorker(): boolean {
  const g = globalThis as { WorkerGlobalScope?: new () => unknown };
  return g.WorkerGlobalScope !== undefined && globalThis instanceof g.WorkerGlobalScope;
}

/** The plan this module instance was imported with (none for the bare URL). */
function ownPlan(): FaultPlan {
  const raw = new URL(import.meta.url).searchParams.get("plan");
  return raw ? JSON.parse(raw) : {};
}

/** The factory URL for `plan`: what a worker imports. */
export function faultFactoryUrl(plan: FaultPlan): string {
  const u = new URL(import.meta.url);
  u.search = `?plan=${encodeURIComponent(JSON.stringify(plan))}`;
  return u.href;
}

function firstTime(plan: FaultPlan, key: string): boolean {
  const marker = join(plan.markerDir!, encodeURIComponent(key));
  try {
    Deno.writeTextFileSync(marker, "1", { createNew: true });
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  }
}

function crash(): Promise<never> {
  if (!inWorker()) return Promise.reject(new Error("planted crash (in-thread)"));
  // Escapes every handler of the job: the worker's global error handler sees it.
  setTimeout(() => {
    throw new Error("planted crash");
  }, 0);
  return new Promise<never>(() => {});
}

function wrap(ex: Extractor, plan: FaultPlan): Extractor {
  const has = (list: string[] | undefined, key: string) => list?.includes(key) ?? false;
  const log = (line: string) => {
    if (plan.log) Deno.writeTextFileSync(plan.log, line + "\n", { append: true });
  };
  return {
    source: ex.source,
    discover: () => ex.discover(),
    async extract(unit, prior, ctx) {
      const key = unit.key;
      log(`start ${key}`);
      const slow = plan.slow?.find((s) => s.key === key);
      if (slow) await new Promise((r) => setTimeout(r, slow.ms));
      if (has(plan.throws, key)) throw new Error(`planted failure in "${key}"`);
      if (has(plan.crashAlways, key)) return crash();
      if (has(plan.crashOnce, key) && firstTime(plan, key)) return crash();
      if (has(plan.exitOnce, key) && firstTime(plan, key)) {
        if (!inWorker()) throw new Error("planted exit (in-thread)");
        (globalThis as unknown as { close(): void }).close();
        return new Promise<never>(() => {});
      }
      const out = await ex.extract(unit, prior, ctx);
      log(`end ${key}`);
      return out;
    },
  };
}

/** Builds this module instance's faulty set (what a worker calls with the plan in the URL). */
export function buildExtractors(roots: SourceRoots): Extractor[] {
  return faultyExtractors(roots, ownPlan());
}

/** The real extractors for `roots` with `plan` planted, rebuildable in a worker. */
export function faultyExtractors(roots: SourceRoots, plan: FaultPlan): Extractor[] {
  const wrapped = buildReal(roots).map((ex) => wrap(ex, plan));
  return registerPoolable(wrapped, {
    roots: structuredClone(roots),
    factory: faultFactoryUrl(plan),
  });
}
