import assert from "node:assert/strict";
import { join } from "node:path";
import { buildExtractors } from "../extractor_set.ts";
import { fileURLToPath } from "node:url";
import { ExtractPool } from "./extract_pool.ts";
import { runUnitJob, type UnitJob, type UnitResult } from "./unit_job.ts";
import { UnitRouter } from "./unit_router.ts";
import { writeNativeSession } from "../../../tests/helpers/native_corpus.ts";
import {
  MISSING_WORKER,
  type UnstartableReport,
} from "../../../tests/helpers/pool_unstartable_child.ts";

const UNSTARTABLE_CHILD = "../../../tests/helpers/pool_unstartable_child.ts";

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

Deno.test("a pool whose workers cannot start turns itself off; the router extracts in-thread", async () => {
  // In a child (tests/helpers/pool_unstartable_child.ts says why): Deno prints its report of
  // the worker that could not load even though the pool handles it; captured here.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(new URL(UNSTARTABLE_CHILD, import.meta.url))],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const r: UnstartableReport = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(r.sameAsInThread, true);
  assert.match(r.disabled ?? "", /failed to start/);
  assert.equal(r.pooled, 0);
  assert.equal(r.inThread, 1);
  assert.match(r.unavailable ?? "", /failed to start/);
  assert.equal(r.rejectedWith, "PoolUnavailableError");
  // Deno's own report of each worker that failed to load, and nothing else (no type check).
  const lines = stderr.split("\n").filter(Boolean);
  assert.ok(lines.length > 0, "Deno reports the worker that could not load");
  for (const line of lines) {
    assert.equal(
      line,
      `error: Uncaught (in worker "intendant-extract") Module not found "${MISSING_WORKER}".`,
    );
  }
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
