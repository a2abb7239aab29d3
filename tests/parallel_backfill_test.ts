/**
 * Parallel backfill (issue 16 §4) over a real corpus in all five formats (the bench
 * generator, ¼ of the small preset: 15 sessions, ≈ 8 MiB) through the real store, the
 * real extractors and real module workers:
 *  - determinism: 1, 2 and 3 workers build the same store (manifest entries, generation
 *    names and bytes);
 *  - isolation: a unit whose extract call throws in a worker is counted exactly as it is
 *    in-thread, and every other unit publishes;
 *  - crashes: a worker that crashes mid-unit (an uncaught error; a worker that simply
 *    ends) is replaced and the unit retried once; a unit that crashes twice is counted;
 *  - back-pressure: while a slow unit heads the window, at most the window's width of
 *    units is started (control: a wide window lets them all start).
 * Routing knobs put every unit read from the start on the pool (in production only
 * units ≥ 64 KiB, once 4 MiB of such work is met, go there).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  buildExtractors,
  type Extractor,
  GENERATIONS_DIR,
  Indexer,
  type ManifestEntry,
  openStore,
  PARSER_VERSION,
  poolSpecOf,
  type SourceRoots,
  type SweepReport,
} from "../lib/message_search/mod.ts";
import { type Corpus, ensureCorpus, PRESETS, scaled } from "../bench/corpus/mod.ts";
import { rootsOf } from "../bench/harness.ts";
import { type FaultPlan, faultyExtractors } from "./helpers/pool_faults.ts";
import { parseWorkers, resolveConfig } from "../lib/config.ts";

const corpusDir = await Deno.makeTempDir({ prefix: "intendant-pool-corpus-" });
const corpus: Corpus = await ensureCorpus({
  dir: corpusDir,
  preset: scaled(PRESETS.small!, 0.25),
  seed: 5,
});
const roots: SourceRoots = rootsOf(corpus);
// One clock for every run: cursors and entries carry it, so stores compare byte for byte.
const NOW = corpus.nowMs + 3_600_000;
const ALL_ON_POOL = { minUnitBytes: 0, startBytes: 0 };

interface Run {
  report: SweepReport;
  facts: StoreFacts;
}

interface StoreFacts {
  entries: Record<string, unknown>;
  /** Generation file name → sha256 of its bytes. */
  files: Record<string, string>;
}

async function backfill(o: {
  workers: number;
  extractors?: (r: SourceRoots) => Extractor[];
  pool?: ConstructorParameters<typeof Indexer>[0]["pool"];
}): Promise<Run> {
  const storeRoot = await Deno.makeTempDir({ prefix: "intendant-pool-store-" });
  try {
    const store = await openStore({
      root: storeRoot,
      parserVersion: PARSER_VERSION,
      windowDays: 14,
      now: () => NOW,
    });
    const build = o.extractors ?? buildExtractors;
    const indexer = new Indexer({
      store,
      extractors: () => Promise.resolve(build(roots)),
      windowDays: 14,
      now: () => NOW,
      workers: o.workers,
      pool: { ...ALL_ON_POOL, ...o.pool },
    });
    const report = await indexer.sweep();
    await indexer.stop();
    const m = await store.readManifest();
    const entries: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(m.sessions)) entries[k] = comparable(e);
    const files: Record<string, string> = {};
    for await (const f of Deno.readDir(join(storeRoot, GENERATIONS_DIR))) {
      const bytes = await Deno.readFile(join(storeRoot, GENERATIONS_DIR, f.name));
      files[f.name] = createHash("sha256").update(bytes).digest("hex");
    }
    return { report, facts: { entries, files } };
  } finally {
    await Deno.remove(storeRoot, { recursive: true });
  }
}

/**
 * An entry's fields as plain data, minus the two wall-clock facts no run can share: when
 * it was published and when each cursor was captured (extractors read the real clock).
 */
function comparable(e: ManifestEntry): Record<string, unknown> {
  const cursors = Object.fromEntries(
    Object.entries(e.cursors).map(([path, c]) => [path, { ...c, captured_at_ms: 0 }]),
  );
  return JSON.parse(JSON.stringify({
    source: e.source,
    session_id: e.session_id,
    generations: e.generations,
    records: e.records,
    newest_ts_ms: e.newest_ts_ms,
    oldest_ts_ms: e.oldest_ts_ms,
    source_watermark: e.source_watermark,
    source_fingerprint: e.source_fingerprint,
    cursors,
    state: e.state,
    source_gone: e.source_gone,
    meta: e.meta,
    skipped: e.skipped,
  }));
}

function errorsOf(r: SweepReport): string[] {
  return Object.values(r.sources).flatMap((s) => s.errors);
}

function recordsOf(r: SweepReport): number {
  return Object.values(r.sources).reduce((n, s) => n + s.recordsAdded, 0);
}

/**
 * Keys of units read from the start by a sweep of `roots` (what goes to the pool): the
 * sources whose plugin opts out of the pool (`pooled: false`, the SQLite ones, which the
 * bench corpus now holds) have no pool spec and always run in the indexer's thread.
 */
async function unitKeys(): Promise<{ pooled: string[]; inThread: string[] }> {
  const out = { pooled: [] as string[], inThread: [] as string[] };
  for (const ex of buildExtractors(roots)) {
    const units = (await ex.discover()).units.map((u) => u.key);
    out[poolSpecOf(ex) === null ? "inThread" : "pooled"].push(...units);
  }
  return out;
}

const reference = await backfill({ workers: 1 });
const { pooled: keys, inThread: inThreadKeys } = await unitKeys();
const published = Object.keys(reference.facts.entries);

Deno.test({
  name: "1, 2 and 3 extraction workers build the same store, byte for byte",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.equal(reference.report.extraction.pooled, 0);
    assert.deepEqual(errorsOf(reference.report), []);
    assert.ok(recordsOf(reference.report) > 2_000, "the corpus publishes its messages");
    assert.ok(published.length >= 10, "most sessions publish");
    for (const workers of [2, 3]) {
      const run = await backfill({ workers });
      assert.equal(run.report.extraction.workers, workers);
      assert.equal(run.report.extraction.unavailable, null);
      assert.equal(run.report.extraction.pooled, keys.length, "every unit went to the pool");
      assert.equal(run.report.extraction.inThread, inThreadKeys.length);
      assert.deepEqual(errorsOf(run.report), []);
      assert.equal(recordsOf(run.report), recordsOf(reference.report));
      assert.deepEqual(run.facts.entries, reference.facts.entries);
      assert.deepEqual(run.facts.files, reference.facts.files);
    }
  },
});

Deno.test({
  name: "a unit whose extract call throws in a worker is counted as in-thread; the rest publish",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const bad = published[published.length - 1]!;
    const plan: FaultPlan = { throws: [bad] };
    const pooled = await backfill({ workers: 2, extractors: (r) => faultyExtractors(r, plan) });
    const inThread = await backfill({ workers: 1, extractors: (r) => faultyExtractors(r, plan) });
    assert.deepEqual(errorsOf(pooled.report), [`${bad}: planted failure in "${bad}"`]);
    assert.deepEqual(errorsOf(pooled.report), errorsOf(inThread.report));
    assert.ok(pooled.report.extraction.pooled > 0);
    assert.equal(pooled.report.extraction.crashes, 0, "a throwing unit does not cost its worker");
    const { [bad]: _dropped, ...rest } = reference.facts.entries;
    assert.deepEqual(pooled.facts.entries, rest);
    assert.deepEqual(pooled.facts.entries, inThread.facts.entries);
  },
});

Deno.test({
  name: "a worker that crashes mid-unit is replaced and the unit retried once",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const markerDir = await Deno.makeTempDir({ prefix: "intendant-pool-markers-" });
    try {
      await t.step("an uncaught error on the first attempt: retried, published", async () => {
        const victim = published[0]!;
        const plan: FaultPlan = { crashOnce: [victim], markerDir };
        const run = await backfill({ workers: 2, extractors: (r) => faultyExtractors(r, plan) });
        assert.deepEqual(errorsOf(run.report), []);
        assert.equal(run.report.extraction.crashes, 1);
        assert.equal(run.report.extraction.retried, 1);
        assert.deepEqual(run.facts.entries, reference.facts.entries);
        assert.deepEqual(run.facts.files, reference.facts.files);
      });
      await t.step(
        "a worker that ends mid-unit without an error: found by its silence",
        async () => {
          const victim = published[1]!;
          const plan: FaultPlan = { exitOnce: [victim], markerDir };
          const run = await backfill({
            workers: 2,
            extractors: (r) => faultyExtractors(r, plan),
            // 4 s: short enough to keep the step quick, long enough that a healthy worker
            // busy with a unit on 2 cores shared with the parallel suite still answers
            // (400 ms declared a live worker dead under load: crashes 2 instead of 1).
            pool: { livenessMs: 4_000, pingEveryMs: 250 },
          });
          assert.deepEqual(errorsOf(run.report), []);
          assert.equal(run.report.extraction.crashes, 1);
          assert.equal(run.report.extraction.retried, 1);
          assert.deepEqual(run.facts.entries, reference.facts.entries);
        },
      );
      await t.step(
        "a unit that crashes its worker twice is counted; the rest publish",
        async () => {
          const victim = published[2]!;
          const plan: FaultPlan = { crashAlways: [victim] };
          const run = await backfill({ workers: 2, extractors: (r) => faultyExtractors(r, plan) });
          assert.deepEqual(errorsOf(run.report), [
            `${victim}: Extraction worker crashed on this unit twice (last: planted crash)`,
          ]);
          assert.equal(run.report.extraction.crashes, 2);
          assert.equal(run.report.extraction.retried, 1);
          const { [victim]: _dropped, ...rest } = reference.facts.entries;
          assert.deepEqual(run.facts.entries, rest);
        },
      );
    } finally {
      await Deno.remove(markerDir, { recursive: true });
    }
  },
});

/** Units started (by the fault log) before the slow head finished. */
async function startedBeforeHeadEnds(windowUnits: number): Promise<number> {
  const log = await Deno.makeTempFile({ prefix: "intendant-pool-log-" });
  try {
    const head = keys[0]!;
    const plan: FaultPlan = { slow: [{ key: head, ms: 1_500 }], log };
    const run = await backfill({
      workers: 2,
      extractors: (r) => faultyExtractors(r, plan),
      pool: { windowUnits },
    });
    assert.deepEqual(errorsOf(run.report), []);
    assert.deepEqual(run.facts.entries, reference.facts.entries);
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    const headEnd = lines.indexOf(`end ${head}`);
    assert.ok(headEnd > 0, "the head unit ended");
    return lines.slice(0, headEnd).filter((l) => l.startsWith("start ")).length;
  } finally {
    await Deno.remove(log);
  }
}

Deno.test({
  name: "a slow unit at the head holds at most the window's width of units in flight",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.ok(keys.length >= 12, `enough units behind the head (${keys.length})`);
    const bounded = await startedBeforeHeadEnds(4);
    assert.ok(bounded <= 4, `started while the head ran: ${bounded} (window 4)`);
    // Control: a window wider than the corpus lets every unit start behind the head.
    const unbounded = await startedBeforeHeadEnds(1_000);
    assert.ok(unbounded > 4, `control: ${unbounded} started with an unbounded window`);
  },
});

Deno.test("INTENDANT_INDEX_WORKERS sets the pool size; nonsense is refused with its value", () => {
  assert.equal(resolveConfig({ HOME: "/h" }, { cwd: "/" }).messageSearch.workers, null);
  assert.equal(
    resolveConfig({ HOME: "/h", INTENDANT_INDEX_WORKERS: "3" }, { cwd: "/" }).messageSearch
      .workers,
    3,
  );
  for (const bad of ["0", "-1", "1.5", "two", "65"]) {
    assert.throws(() => parseWorkers(bad), new RegExp(`INTENDANT_INDEX_WORKERS "${bad}"`));
  }
  assert.throws(() => new Indexer({ store: null!, extractors: [], windowDays: 14, workers: 0 }));
});

globalThis.addEventListener("unload", () => {
  Deno.removeSync(corpusDir, { recursive: true });
});
