/**
 * Growth check (issue 9), CI-sized: the small benchmark preset at two scales (1× and 4×).
 * Per-item costs — a no-op sweep per source file, a full-scan query per session — must not
 * grow by more than GROWTH_MAX between the scales (an accidental O(n²) shows as ~4×), and
 * the structural counters must hold at both: a no-op sweep opens no source file and writes
 * no byte — neither through the store's Fs nor to writer.lock, which the store writes
 * directly (issue 16: it used to be rewritten on every acquisition, so the startup check
 * of every `intendant index` wrote 43 B); a warm query loads no shard. No absolute time
 * thresholds: only ratios of the same machine's timings, each the minimum of several runs
 * (robust to a GC pause).
 * Memory (issue 16), per scale in a child process with the daemon's V8 flags (bench
 * phases.ts `rss`, so the figure is that process's own): a cold query of every needle kind
 * on a fresh engine returns `ready` (within 5 fresh engines, 250 ms apart: the suite runs in parallel on
 * 2 shared cores, where one cold query can lose its 150 ms wall-clock budget to other
 * processes; the attempts are printed), and the RSS after a query loop grows at most
 * RSS_GROWTH_MAX× from ¼× to 1× (the arena is capped; an uncapped resident set grows with
 * the corpus).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sourceIoStats } from "../lib/message_search/mod.ts";
import { ensureCorpus, NEEDLES, PRESETS, scaled } from "../bench/corpus/mod.ts";
import { wire } from "../bench/harness.ts";
import { DAEMON_V8_FLAGS } from "../lib/relaunch.ts";
import { withTempDir } from "./helpers/temp.ts";

/** Largest allowed growth of a per-item cost from the small scale to the 4× one. */
const GROWTH_MAX = 2.5;
const RUNS = 9;
/** Largest allowed growth of the RSS after a query loop from ¼× to 1× (issue 16). */
const RSS_GROWTH_MAX = 4;
const PHASES = new URL("../bench/phases.ts", import.meta.url).pathname;

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
  lockRewritten: boolean;
  rss: RssPhase;
}

/** bench/phases.ts `rss`: the RSS before and after a query loop, and the cold states. */
interface RssPhase {
  before: number;
  after: number;
  cold: Record<string, { state: string; ms: number; attempts: number }>;
}

async function rssPhase(corpusDir: string, storeRoot: string): Promise<RssPhase> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${["--expose-gc", ...DAEMON_V8_FLAGS].join(",")}`,
      PHASES,
      "rss",
      corpusDir,
      storeRoot,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}

/** writer.lock's size, mtime and ctime: any write to it changes one of them. */
async function lockFacts(storeRoot: string): Promise<string> {
  const st = await Deno.lstat(join(storeRoot, "writer.lock")).catch(() => null);
  return st ? `${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}` : "absent";
}

async function measure(dir: string, factor: number): Promise<Scale> {
  const corpus = await ensureCorpus({
    dir: join(dir, `corpus-${factor}`),
    preset: scaled(PRESETS.small!, factor),
    seed: 3,
  });
  const storeRoot = join(dir, `store-${factor}`);
  const w = await wire(corpus, storeRoot);
  await w.indexer.sweep(); // backfill
  const written0 = w.fs.written;
  const lock0 = await lockFacts(storeRoot);
  // What `intendant index` runs on an up-to-date store: the startup check (GC and
  // verification, under the writer lock), then sweeps. The first warms discovery caches.
  await w.indexer.startup();
  await w.indexer.sweep();
  const opens0 = sourceIoStats().opens;
  const sweepMs = await minOf(RUNS, () => w.indexer.sweep());
  const lockRewritten = (await lockFacts(storeRoot)) !== lock0;
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
  const rss = await rssPhase(join(dir, `corpus-${factor}`), storeRoot);
  return {
    files: corpus.files,
    sessions,
    sweepMsPerFile: sweepMs / corpus.files,
    queryMsPerSession: queryMs / sessions,
    opensPerNoopSweep: opens / RUNS,
    bytesPerNoopSweep: (w.fs.written - written0) / RUNS,
    loadsPerWarmQuery: (engine.stats().misses - misses0) / (RUNS * full.length),
    lockRewritten,
    rss,
  };
}

Deno.test("sweep and query cost per item stays flat from 1× to 4× the small corpus", () =>
  withTempDir(async (dir) => {
    const a = await measure(dir, 0.25);
    const b = await measure(dir, 1);
    const sweepGrowth = b.sweepMsPerFile / a.sweepMsPerFile;
    const queryGrowth = b.queryMsPerSession / a.queryMsPerSession;
    const rssGrowth = b.rss.after / a.rss.after;
    const mib = (x: number) => (x / 1024 / 1024).toFixed(1);
    console.log(
      `files ${a.files} → ${b.files}, sessions ${a.sessions} → ${b.sessions}; ` +
        `no-op sweep per file ×${sweepGrowth.toFixed(2)}, full-scan query per session ` +
        `×${queryGrowth.toFixed(2)} (limit ×${GROWTH_MAX}); RSS after the query loop ` +
        `${mib(a.rss.after)} → ${mib(b.rss.after)} MiB ×${rssGrowth.toFixed(2)} ` +
        `(limit ×${RSS_GROWTH_MAX}); cold states ${JSON.stringify(b.rss.cold)}`,
    );
    assert.ok(b.files >= 3 * a.files, "the two scales must differ enough to show growth");
    for (const s of [a, b]) {
      assert.equal(s.opensPerNoopSweep, 0, "a no-op sweep must open no source file");
      assert.equal(s.bytesPerNoopSweep, 0, "a no-op sweep must write nothing");
      assert.equal(s.lockRewritten, false, "a no-op sweep must not rewrite writer.lock");
      assert.equal(s.loadsPerWarmQuery, 0, "a warm query must load no shard");
      for (const [needle, c] of Object.entries(s.rss.cold)) {
        assert.equal(c.state, "ready", `a cold "${needle}" query answered "${c.state}"`);
      }
    }
    assert.ok(rssGrowth <= RSS_GROWTH_MAX, `RSS after the query loop grew ×${rssGrowth}`);
    assert.ok(sweepGrowth <= GROWTH_MAX, `no-op sweep cost per file grew ×${sweepGrowth}`);
    assert.ok(queryGrowth <= GROWTH_MAX, `query cost per session grew ×${queryGrowth}`);
  }));
