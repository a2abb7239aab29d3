/**
 * One benchmark phase per child process (fresh heap, so peak RSS belongs to the phase):
 *   deno run -A --v8-flags=--expose-gc,<DAEMON_V8_FLAGS> bench/phases.ts <phase> <corpus> <store>
 * prints one JSON line with the phase's figures. Phases:
 *  - baseline: read every transcript file and JSON.parse every line; stat every file;
 *  - backfill: a fresh store and one cold sweep through the production wiring;
 *  - serve:    a daemon's life on the backfilled store: idle RSS, no-op sweeps, cold and
 *              warm queries over the fixed set, then appends to the largest session
 *              timed through the query edge (refreshIfStale(1000) + search).
 */
import { join } from "node:path";
import { sourceIoStats } from "../lib/message_search/mod.ts";
import type { Corpus } from "./corpus/mod.ts";
import { gc, ioWriteBytes, memory, stats, wire } from "./harness.ts";
import { runAppends } from "./phase_append.ts";
import { runQueries } from "./phase_query.ts";

const [phase, dir, storeRoot] = Deno.args;
const corpus = JSON.parse(await Deno.readTextFile(join(dir!, "corpus.json"))) as Corpus;
const files = corpus.sessions.flatMap((s) => s.files);

async function baseline() {
  const dec = new TextDecoder();
  const parse = async () => {
    const t = performance.now();
    let lines = 0;
    for (const f of files) {
      const text = dec.decode(await Deno.readFile(f));
      let at = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", at)) {
        if (nl > at) JSON.parse(text.slice(at, nl));
        at = nl + 1;
        lines++;
      }
    }
    return { ms: performance.now() - t, lines };
  };
  await parse(); // page cache warm-up: the backfill reads warm files too
  const p = await parse();
  const statRuns: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    for (const f of files) await Deno.lstat(f);
    statRuns.push(performance.now() - t);
  }
  const syncRuns: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    for (const f of files) Deno.lstatSync(f);
    syncRuns.push(performance.now() - t);
  }
  return { parseMs: p.ms, lines: p.lines, statMs: stats(statRuns), statSyncMs: stats(syncRuns) };
}

async function backfill() {
  await Deno.remove(storeRoot!, { recursive: true }).catch(() => {});
  const w = await wire(corpus, storeRoot!);
  const io0 = ioWriteBytes();
  const t = performance.now();
  const r = await w.indexer.sweep();
  const ms = performance.now() - t;
  let records = 0;
  const errors: string[] = [];
  for (const s of Object.values(r.sources)) {
    records += s.recordsAdded;
    errors.push(...s.errors);
  }
  const m = await w.store.readManifest();
  const manifestBytes = (await Deno.stat(join(storeRoot!, "manifest.json"))).size;
  return {
    ms,
    records,
    sessions: Object.keys(m.sessions).length,
    errors: errors.slice(0, 5),
    storeBytes: w.fs.written,
    ioWriteBytes: ioWriteBytes() - io0,
    manifestBytes,
    peakRss: memory().peak,
  };
}

async function serve() {
  const w = await wire(corpus, storeRoot!);
  // The daemon's first sweep after start: warms discovery caches; must write nothing.
  const w0 = w.fs.written;
  let t = performance.now();
  await w.indexer.sweep();
  const firstSweepMs = performance.now() - t;
  const firstSweepBytes = w.fs.written - w0;
  const noop: number[] = [];
  const opens0 = sourceIoStats().opens;
  const written0 = w.fs.written;
  const io0 = ioWriteBytes();
  for (let i = 0; i < 7; i++) {
    t = performance.now();
    await w.indexer.sweep();
    noop.push(performance.now() - t);
  }
  const noopSweep = {
    ms: stats(noop),
    bytesWritten: w.fs.written - written0,
    ioWriteBytes: ioWriteBytes() - io0,
    sourceOpensPerSweep: (sourceIoStats().opens - opens0) / noop.length,
    firstSweepMs,
    firstSweepBytes,
  };
  gc();
  const idleRss = memory().rss;
  const queries = await runQueries(corpus, w);
  gc();
  const afterQueriesRss = memory().rss;
  const append = await runAppends(corpus, w);
  return { noopSweep, idleRss, afterQueriesRss, queries, append, peakRss: memory().peak };
}

const out = phase === "baseline"
  ? await baseline()
  : phase === "backfill"
  ? await backfill()
  : phase === "serve"
  ? await serve()
  : null;
if (out === null) throw new RangeError(`Unknown phase "${phase}"`);
console.log(JSON.stringify(out));
