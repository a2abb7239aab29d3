import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore, type Store } from "../store/mod.ts";
import { Arena } from "./arena.ts";
import { normalizeRequest } from "./normalize_request.ts";
import { runScan } from "./run_scan.ts";
import { buildPlan } from "./scan_plan.ts";
import { rec } from "./_test_support.ts";

/** Publishes session `sid` with `n` records (all holding "needle"), newest at `ts`. */
async function publish(store: Store, sid: string, { n, ts }: { n: number; ts: number }) {
  const records = Array.from(
    { length: n },
    (_, i) => rec(i, `needle ${sid} ${i}`, { session_id: sid, ts_ms: ts - n + 1 + i }),
  );
  const r = await store.publish([{
    kind: "replace",
    key: `pi:${sid}`,
    source: "pi",
    session_id: sid,
    base: null,
    segment: { records, marks: [] },
    source_watermark: n,
    source_fingerprint: "fp",
    cursors: {},
    meta: { project: null, title: null, parent_session_id: null, files: [] },
  }]);
  assert.deepEqual(r.rejected, []);
}

Deno.test("a load predicted to overrun the time budget is skipped, then made by the retry", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intendant-scan-" });
  try {
    const real = await openStore({ root: join(dir, "v1"), parserVersion: 1, windowDays: null });
    await publish(real, "a", { n: 5, ts: 30_000 });
    await publish(real, "b", { n: 300, ts: 20_000 });
    await publish(real, "c", { n: 5, ts: 10_000 });
    // Every load takes 20 ms: 4 ms a record as learned from "a", so "b" predicts 1.2 s.
    const store: Store = Object.create(real);
    store.loadSegment = async (name) => {
      await new Promise((r) => setTimeout(r, 20));
      return real.loadSegment(name);
    };
    const plan = buildPlan(await real.readManifest());
    const arena = new Arena(1 << 30);
    const scan = () =>
      runScan({
        store,
        arena,
        plan,
        req: normalizeRequest({ q: "needle" }),
        pos: null,
        cutoff: null,
        startedAt: performance.now(),
        timeBudgetMs: 1_000,
        freshLoadBudgetBytes: 1 << 30,
        count: { ms: 1_000, freshBytes: 1 << 30, scaleWithPage: false },
        lexicon: null,
      });
    const first = await scan();
    assert.equal(first.stop, "timeout", "a skipped session makes the page partial");
    assert.deepEqual(first.groups.map((g) => g.session.key), ["pi:a", "pi:c"]);
    const retry = await scan();
    assert.equal(retry.stop, "done", "the deferred session is loaded whatever it predicts");
    assert.deepEqual(retry.groups.map((g) => g.session.key), ["pi:a", "pi:b", "pi:c"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
