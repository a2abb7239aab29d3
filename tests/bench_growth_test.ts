/**
 * Growth check (issue 9), CI-sized: the small benchmark preset at two scales (1× and 4×).
 * Per-item costs — a no-op sweep per source file, a full-scan query per session — must not
 * grow by more than GROWTH_MAX between the scales (an accidental O(n²) shows as ~4×), and
 * the structural counters must hold at both: a no-op sweep opens no source file and writes
 * no store byte; a warm query loads no shard. No absolute time thresholds: only ratios of
 * the same machine's timings, each the minimum of several runs (robust to a GC pause).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sourceIoStats } from "../lib/message_search/mod.ts";
import { ensureCorpus, NEEDLES, PRESETS, scaled } from "../bench/corpus/mod.ts";
import { wire } from "../bench/harness.ts";
import { withTempDir } from "./helpers/temp.ts";

/** Largest allowed growth of a per-item cost from the small scale to the 4× one. */
const GROWTH_MAX = 2.5;
const RUNS = 9;

async function minOf(runs: number, f: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

interface Scale {
  files: number;
  sessions: number;
  sweepMsPerFile: number;
  queryMsPerSession: number;
  opensPerNoopSweep: number;
  bytesPerNoopSweep: number;
  loadsPerWarmQuery: number;
}

async function measure(dir: string, factor: number): Promise<Scale> {
  const corpus = await ensureCorpus({
    dir: join(dir, `corpus-${factor}`),
    preset: scaled(PRESETS.small!, factor),
    seed: 3,
  });
  const w = await wire(corpus, join(dir, `store-${factor}`));
  await w.indexer.sweep(); // backfill
  await w.indexer.sweep(); // the first no-op sweep warms discovery caches
  const opens0 = sourceIoStats().opens;
  const written0 = w.fs.written;
  const sweepMs = await minOf(RUNS, () => w.indexer.sweep());
  const opens = sourceIoStats().opens - opens0;
  const engine = w.engine();
  const full = [NEEDLES.none, NEEDLES.rare];
  // Warm: repeat until nothing is cut short by a budget.
  for (const q of full) {
    for (let i = 0; i < 20 && (await engine.search({ q })).state === "partial"; i++);
  }
  const misses0 = engine.stats().misses;
  const queryMs = await minOf(RUNS, async () => {
    for (const q of full) await engine.search({ q });
  });
  const sessions = Object.keys((await w.store.readManifest()).sessions).length;
  return {
    files: corpus.files,
    sessions,
    sweepMsPerFile: sweepMs / corpus.files,
    queryMsPerSession: queryMs / sessions,
    opensPerNoopSweep: opens / RUNS,
    bytesPerNoopSweep: (w.fs.written - written0) / RUNS,
    loadsPerWarmQuery: (engine.stats().misses - misses0) / (RUNS * full.length),
  };
}

Deno.test("sweep and query cost per item stays flat from 1× to 4× the small corpus", () =>
  withTempDir(async (dir) => {
    const a = await measure(dir, 0.25);
    const b = await measure(dir, 1);
    const sweepGrowth = b.sweepMsPerFile / a.sweepMsPerFile;
    const queryGrowth = b.queryMsPerSession / a.queryMsPerSession;
    console.log(
      `files ${a.files} → ${b.files}, sessions ${a.sessions} → ${b.sessions}; ` +
        `no-op sweep per file ×${sweepGrowth.toFixed(2)}, full-scan query per session ` +
        `×${queryGrowth.toFixed(2)} (limit ×${GROWTH_MAX})`,
    );
    assert.ok(b.files >= 3 * a.files, "the two scales must differ enough to show growth");
    for (const s of [a, b]) {
      assert.equal(s.opensPerNoopSweep, 0, "a no-op sweep must open no source file");
      assert.equal(s.bytesPerNoopSweep, 0, "a no-op sweep must write nothing");
      assert.equal(s.loadsPerWarmQuery, 0, "a warm query must load no shard");
    }
    assert.ok(sweepGrowth <= GROWTH_MAX, `no-op sweep cost per file grew ×${sweepGrowth}`);
    assert.ok(queryGrowth <= GROWTH_MAX, `query cost per session grew ×${queryGrowth}`);
  }));
