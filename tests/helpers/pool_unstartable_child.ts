/**
 * Child of lib/message_search/pool/unit_router_test.ts: an extraction pool whose worker
 * module does not exist, driven through the UnitRouter on one native session; prints one
 * JSON line with what the parent asserts. Why a child: Deno reports a worker whose module
 * cannot load on stderr ("error: Uncaught (in worker …) Module not found …", and under
 * `deno test`'s type check a TS2307 and "Type checking failed" too) even though the pool
 * handles the error (onerror preventDefault), so in process the passing suite printed that
 * scary, expected report. Here the parent captures it and asserts it is exactly that.
 *   deno run -A tests/helpers/pool_unstartable_child.ts
 */
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { buildExtractors } from "../../lib/message_search/extractor_set.ts";
import { ExtractPool, PoolUnavailableError } from "../../lib/message_search/pool/extract_pool.ts";
import { runUnitJob, type UnitResult } from "../../lib/message_search/pool/unit_job.ts";
import { UnitRouter } from "../../lib/message_search/pool/unit_router.ts";
import { writeNativeSession } from "./native_corpus.ts";

/** The module the pool is pointed at: it does not exist. */
export const MISSING_WORKER = new URL(
  "../../lib/message_search/pool/no_such_worker.ts",
  import.meta.url,
).href;

/** What the child reports. */
export interface UnstartableReport {
  /** The router's result equals an in-thread run's (capture times aside). */
  sameAsInThread: boolean;
  disabled: string | null;
  pooled: number;
  inThread: number;
  unavailable: string | null;
  /** The error name of a direct pool.run once the pool is off. */
  rejectedWith: string | null;
}

/** A result without its cursors' capture times (the extractors read the real clock). */
function timeless(r: UnitResult): unknown {
  if (r.kind === "unchanged" || r.kind === "gone") return r;
  const cursors = Object.fromEntries(
    Object.entries(r.cursors).map(([p, c]) => [p, { ...c, captured_at_ms: 0 }]),
  );
  return { ...r, cursors };
}

if (import.meta.main) {
  const root = await Deno.makeTempDir({ prefix: "intendant-router-" });
  try {
    const logsDir = join(root, "logs");
    await Deno.mkdir(logsDir);
    await writeNativeSession(logsDir, { turns: 6 });
    const ex = buildExtractors({ logsDir, homes: [] })[0]!;
    const unit = (await ex.discover()).units[0]!;
    const job = { unit, prior: null, ctx: { now: Date.now() } };
    const pool = new ExtractPool({ size: 2, source: { kind: "module", url: MISSING_WORKER } });
    const router = new UnitRouter({ pool, encode: null, minUnitBytes: 0, startBytes: 0 });
    const got = await router.run(ex, job, 1_000);
    const want = await runUnitJob(ex, job, null);
    let rejectedWith: string | null = null;
    try {
      await pool.run(ex, { roots: { logsDir: "/x", homes: [] }, factory: null }, job, null);
    } catch (err) {
      if (!(err instanceof PoolUnavailableError)) throw err;
      rejectedWith = err.name;
    }
    pool.idle();
    const r = router.report();
    const report: UnstartableReport = {
      sameAsInThread: isDeepStrictEqual(timeless(got), timeless(want)),
      disabled: pool.disabled,
      pooled: r.pooled,
      inThread: r.inThread,
      unavailable: r.unavailable,
      rejectedWith,
    };
    console.log(JSON.stringify(report));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
