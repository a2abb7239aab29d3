import assert from "node:assert/strict";
import { join } from "node:path";
import { buildExtractors } from "../extractor_set.ts";
import { ExtractPool, PoolUnavailableError } from "./extract_pool.ts";
import { runUnitJob, type UnitJob, type UnitResult } from "./unit_job.ts";
import { UnitRouter } from "./unit_router.ts";
import { writeNativeSession } from "../../../tests/helpers/native_corpus.ts";

/** A result without its cursors' capture times (the extractors read the real clock). */
function timeless(r: UnitResult): unknown {
  if (r.kind === "unchanged" || r.kind === "gone") return r;
  const cursors = Object.fromEntries(
    Object.entries(r.cursors).map(([p, c]) => [p, { ...c, captured_at_ms: 0 }]),
  );
  return { ...r, cursors };
}

async function withNativeUnit(
  fn: (o: { ex: ReturnType<typeof buildExtractors>[number]; job: UnitJob }) => Promise<void>,
) {
  const root = await Deno.makeTempDir({ prefix: "intendant-router-" });
  try {
    const logsDir = join(root, "logs");
    await Deno.mkdir(logsDir);
    await writeNativeSession(logsDir, { turns: 6 });
    const ex = buildExtractors({ logsDir, homes: [] })[0]!;
    const unit = (await ex.discover()).units[0]!;
    await fn({ ex, job: { unit, prior: null, ctx: { now: Date.now() } } });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test({
  name: "a pool whose workers cannot start turns itself off; the router extracts in-thread",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withNativeUnit(async ({ ex, job }) => {
      // A module that does not exist: the worker fails before it is ready.
      const missing = new URL("./no_such_worker.ts", import.meta.url).href;
      const pool = new ExtractPool({ size: 2, source: { kind: "module", url: missing } });
      const router = new UnitRouter({ pool, encode: null, minUnitBytes: 0, startBytes: 0 });
      const got = await router.run(ex, job, 1_000);
      const want = await runUnitJob(ex, job, null);
      assert.deepEqual(timeless(got), timeless(want));
      assert.match(pool.disabled ?? "", /failed to start/);
      const r = router.report();
      assert.equal(r.pooled, 0);
      assert.equal(r.inThread, 1);
      assert.match(r.unavailable ?? "", /failed to start/);
      await assert.rejects(
        pool.run(ex, { roots: { logsDir: "/x", homes: [] }, factory: null }, job, null),
        PoolUnavailableError,
      );
      pool.idle();
    }),
});

Deno.test({
  name:
    "the router keeps incremental and small units in-thread, and pools large ones past the start",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withNativeUnit(async ({ ex, job }) => {
      const pool = new ExtractPool({
        size: 1,
        source: { kind: "module", url: new URL("./worker_main.ts", import.meta.url).href },
      });
      try {
        const router = new UnitRouter({ pool, encode: null, minUnitBytes: 100, startBytes: 250 });
        const prior = { generations: [], cursors: {}, state: null, records: 0 };
        await router.run(ex, { ...job, prior }, 10_000); // incremental: in-thread
        await router.run(ex, job, 99); // small: in-thread
        await router.run(ex, job, 200); // 200 of 250 met: in-thread
        const pooled = await router.run(ex, job, 200); // 400 ≥ 250: pool
        assert.deepEqual(router.report().pooled, 1);
        assert.deepEqual(router.report().inThread, 3);
        assert.deepEqual(timeless(pooled), timeless(await runUnitJob(ex, job, null)));
      } finally {
        pool.idle();
      }
    }),
});
