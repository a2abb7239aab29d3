/**
 * One benchmark phase per child process (fresh heap, so peak RSS belongs to the phase):
 *   deno run -A --v8-flags=--expose-gc,<DAEMON_V8_FLAGS> bench/phases.ts <phase> <corpus> <store>
 * prints one JSON line with the phase's figures. Phases:
 *  - baseline: read every transcript file and JSON.parse every line (the faster of two
 *              ways, bareParse), and every JSON column of every row of the SQLite
 *              sources' databases; stat every file;
 *  - backfill: a fresh store and one cold sweep through the production wiring;
 *  - serve:    the store-level figures on the backfilled store: the startup check and
 *              no-op sweeps (time, and bytes written: the counting Fs plus writer.lock,
 *              which the store writes outside its Fs), the engine's own cold and warm
 *              query figures, and the bytes written per appended message (the daemon's
 *              RSS, its HTTP latencies and append → searchable are measured on a real
 *              `intendant serve --locked`, phase_daemon.ts);
 *  - rss:      for the growth test: a cold query of each needle kind on a fresh engine
 *              (its state), then a query loop, and the RSS after it;
 *  - stages:   where the backfill's CPU goes, in one thread (phase_stages.ts);
 *  - vault:    what keeping every transcript costs, alone and during a backfill
 *  - deep:     Deep Search paged to the end against rg over the same homes
 *              (phase_vault.ts);
 *  - sources:  each source alone: its files' (or databases') bare read+JSON.parse, then a
 *              cold sweep of a fresh store wired with that source only, so a source's
 *              extraction cost is a ratio against its own bytes (the corpus mix changes
 *              between presets; this does not).
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { sourceIoStats } from "../lib/message_search/mod.ts";
import type { Corpus } from "./corpus/mod.ts";
import { gc, ioWriteBytes, memory, rootsOf, rootsOfOne, stats, wire } from "./harness.ts";
import { stages } from "./phase_stages.ts";
import { vaultPhase } from "./phase_vault.ts";
import { deepPhase } from "./phase_deep.ts";
import { runAppends } from "./phase_append.ts";
import { QUERIES, runQueries } from "./phase_query.ts";

const [phase, dir, storeRoot] = Deno.args;
const corpus = JSON.parse(await Deno.readTextFile(join(dir!, "corpus.json"))) as Corpus;
/** Transcript files (JSONL); the shared databases are listed apart. */
const files = corpus.sessions.flatMap((s) => s.files);
const databases = corpus.databases ?? [];
/** Every source file a no-op sweep stats: transcripts and databases. */
const statFiles = [...files, ...databases.map((d) => d.path)];

/**
 * The JSON columns a reader of each database parses, one query per table (OpenCode keeps
 * message and part JSON in `data`; Goose the content and metadata of each message).
 */
const DB_JSON: Record<string, string[]> = {
  opencode: ["SELECT data FROM message", "SELECT data FROM part"],
  goose: ["SELECT content_json, metadata_json FROM messages"],
};

/** Reads every row of a database's JSON columns and parses them; returns the rows read. */
function parseDatabase(source: string, path: string): number {
  // Read-only, as any reader of a live store; the corpus's databases are closed (no WAL).
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    let rows = 0;
    for (const sql of DB_JSON[source] ?? []) {
      for (const row of db.prepare(sql).iterate()) {
        for (const v of Object.values(row as Record<string, unknown>)) {
          if (typeof v === "string") JSON.parse(v);
        }
        rows++;
      }
    }
    return rows;
  } finally {
    db.close();
  }
}

/**
 * The bare work of a backfill over `own` files and `dbs` databases, the fastest honest
 * way: read each file and JSON.parse every line, done two ways — the whole file decoded
 * once and sliced at each "\n", or each line decoded from the bytes on its own — each
 * after a page-cache warm-up, and the faster of the two kept (which one wins depends on
 * the corpus: a file with non-Latin-1 text decodes to a two-byte string that every
 * slice and parse then walks; on the bench corpus's 85 MB Claude session per-line
 * decoding parsed in 225 ms against 511). `method` names the winner.
 */
async function bareParse(own: string[], dbs: { source: string; path: string }[]) {
  const dec = new TextDecoder();
  const whole = async () => {
    const t = performance.now();
    let lines = 0;
    for (const f of own) {
      const text = dec.decode(await Deno.readFile(f));
      let at = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", at)) {
        if (nl > at) JSON.parse(text.slice(at, nl));
        at = nl + 1;
        lines++;
      }
    }
    for (const d of dbs) lines += parseDatabase(d.source, d.path);
    return { ms: performance.now() - t, lines };
  };
  const perLine = async () => {
    const t = performance.now();
    let lines = 0;
    for (const f of own) {
      const bytes = await Deno.readFile(f);
      let at = 0;
      for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, at)) {
        if (nl > at) JSON.parse(dec.decode(bytes.subarray(at, nl)));
        at = nl + 1;
        lines++;
      }
    }
    for (const d of dbs) lines += parseDatabase(d.source, d.path);
    return { ms: performance.now() - t, lines };
  };
  await whole(); // page cache warm-up: the backfill reads warm files too
  const a = await whole();
  await perLine();
  const b = await perLine();
  return a.ms <= b.ms
    ? { ...a, method: "whole-file decode", otherMs: b.ms }
    : { ...b, method: "per-line decode", otherMs: a.ms };
}

async function baseline() {
  const p = await bareParse(files, databases);
  const statRuns: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    for (const f of statFiles) await Deno.lstat(f);
    statRuns.push(performance.now() - t);
  }
  const syncRuns: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    for (const f of statFiles) Deno.lstatSync(f);
    syncRuns.push(performance.now() - t);
  }
  return {
    parseMs: p.ms,
    lines: p.lines,
    parseMethod: p.method,
    otherMethodMs: p.otherMs,
    statMs: stats(statRuns),
    statSyncMs: stats(syncRuns),
  };
}

/** The `sources` phase (see the header). */
async function eachSourceAlone() {
  const out: Record<string, { records: number; sweepMs: number; baseMs: number; lines: number }> =
    {};
  const empty = await Deno.makeTempDir({ prefix: "bench-empty-logs-" });
  const bySource = new Map<string, string[]>();
  for (const s of corpus.sessions) {
    bySource.set(s.source, [...(bySource.get(s.source) ?? []), ...s.files]);
  }
  for (const d of databases) bySource.set(d.source, bySource.get(d.source) ?? []);
  for (const [source, own] of bySource) {
    const dbs = databases.filter((d) => d.source === source);
    const base = await bareParse(own, dbs);
    const root = `${storeRoot!}-${source}`;
    await Deno.remove(root, { recursive: true }).catch(() => {});
    const w = await wire(corpus, root, Date.now, rootsOfOne(corpus, source, empty));
    const t = performance.now();
    const r = await w.indexer.sweep();
    const sweepMs = performance.now() - t;
    await w.indexer.stop();
    let records = 0;
    for (const x of Object.values(r.sources)) records += x.recordsAdded;
    await Deno.remove(root, { recursive: true }).catch(() => {});
    out[source] = { records, sweepMs, baseMs: base.ms, lines: base.lines };
    gc();
  }
  await Deno.remove(empty, { recursive: true });
  return out;
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
  const storeBytes = w.fs.written;
  // What the daemon does next, in the background (issue 27): the lexicon over every
  // generation; timed apart so the backfill figure stays comparable with older revisions.
  const lt = performance.now();
  const lex = await w.store.refreshLexicon();
  const lexicon = { ...lex, ms: performance.now() - lt, peakRss: memory().peak };
  const m = await w.store.readManifest();
  const manifestBytes = (await Deno.stat(join(storeRoot!, "manifest.json"))).size;
  return {
    lexicon,
    ms,
    records,
    sessions: Object.keys(m.sessions).length,
    bySource: perSource(r.sources, Object.keys(m.sessions)),
    errors: errors.slice(0, 5),
    storeBytes,
    ioWriteBytes: ioWriteBytes() - io0,
    manifestBytes,
    peakRss: memory().peak,
  };
}

/**
 * Per source of the corpus or of the sweep: what the corpus wrote (sessions, prose
 * messages) beside what the backfill indexed (sessions in the manifest, records added),
 * and whether the source was swept at all (a source without a plugin is not). A source
 * whose counts differ is a bug in its writer or its extractor (or it is not wired).
 */
function perSource(
  swept: Record<string, { recordsAdded: number; skipped: Record<string, number> }>,
  keys: string[],
) {
  const sessionsOf: Record<string, number> = {};
  for (const k of keys) {
    const src = k.slice(0, k.indexOf(":"));
    sessionsOf[src] = (sessionsOf[src] ?? 0) + 1;
  }
  const sources = new Set([...Object.keys(corpus.bySource), ...Object.keys(swept)]);
  const out: Record<string, {
    swept: boolean;
    sessions: number;
    expectedSessions: number;
    records: number;
    expectedRecords: number;
    skipped: Record<string, number>;
  }> = {};
  for (const src of sources) {
    const want = corpus.bySource[src as keyof typeof corpus.bySource];
    out[src] = {
      swept: src in swept,
      sessions: sessionsOf[src] ?? 0,
      expectedSessions: want?.sessions ?? 0,
      records: swept[src]?.recordsAdded ?? 0,
      expectedRecords: want?.messages ?? 0,
      skipped: swept[src]?.skipped ?? {},
    };
  }
  return out;
}

/** The store's writer lock (store/writer_lock.ts LOCK_FILE, not exported by the door). */
const LOCK_FILE = "writer.lock";

/** writer.lock's size, mtime and ctime: any write to it changes them. */
async function lockFacts(root: string): Promise<string> {
  const st = await Deno.lstat(join(root, LOCK_FILE)).catch(() => null);
  return st ? `${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}` : "absent";
}

async function serve() {
  const w = await wire(corpus, storeRoot!);
  // What a daemon (or `intendant index`) does first: the startup check (GC and every
  // generation verified, under the writer lock), then its first sweep, which warms the
  // discovery caches. On a store that is up to date, none of it may write a byte.
  const w0 = w.fs.written;
  const lock0 = await lockFacts(storeRoot!);
  let t = performance.now();
  await w.indexer.startup();
  const startupMs = performance.now() - t;
  t = performance.now();
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
  // A rewrite of writer.lock changes its mtime/ctime even when the bytes are the same;
  // counted as the file's size (what was written).
  const lockRewritten = (await lockFacts(storeRoot!)) !== lock0;
  const lockBytes = lockRewritten ? (await Deno.lstat(join(storeRoot!, LOCK_FILE))).size : 0;
  const noopSweep = {
    ms: stats(noop),
    bytesWritten: w.fs.written - written0 + firstSweepBytes + lockBytes,
    storeFsBytes: w.fs.written - written0 + firstSweepBytes,
    lockRewritten,
    lockBytes,
    ioWriteBytes: ioWriteBytes() - io0,
    sourceOpensPerSweep: (sourceIoStats().opens - opens0) / noop.length,
    startupMs,
    firstSweepMs,
    firstSweepBytes,
  };
  gc();
  const idleRss = memory().rss;
  const queries = await runQueries(corpus, w);
  gc();
  const afterQueriesRss = memory().rss;
  const append = await runAppends(corpus, w, { latency: false });
  return { noopSweep, idleRss, afterQueriesRss, queries, append, peakRss: memory().peak };
}

/** Fresh engines a cold query of the rss phase may take to answer `ready`. */
const COLD_ATTEMPTS = 5;
/** Rounds of the query set in the rss phase (after the cold queries). */
const RSS_LOOP_ROUNDS = 10;

async function rss() {
  const w = await wire(corpus, storeRoot!);
  await w.indexer.sweep(); // the engine answers `building` until a sweep completed
  gc();
  const before = memory().rss;
  const cold: Record<string, { state: string; ms: number; attempts: number }> = {};
  for (const [name, q] of QUERIES) {
    // Up to COLD_ATTEMPTS fresh engines: the growth test runs beside the whole parallel
    // suite on 2 shared cores, where one cold query can lose its 150 ms wall-clock budget
    // to other processes; a store that cannot answer cold fails every attempt.
    for (let attempt = 1; attempt <= COLD_ATTEMPTS; attempt++) {
      const e = w.engine();
      const t = performance.now();
      const r = await e.search({ q });
      cold[name] = {
        state: r.state + (r.partial_reason ? `:${r.partial_reason}` : ""),
        ms: performance.now() - t,
        attempts: attempt,
      };
      if (r.state === "ready") break;
      // A moment for whatever else holds the cores to pass before the next fresh engine.
      await new Promise((res) => setTimeout(res, 250));
    }
  }
  const e = w.engine();
  for (let i = 0; i < RSS_LOOP_ROUNDS; i++) for (const [, q] of QUERIES) await e.search({ q });
  gc();
  return { before, after: memory().rss, peak: memory().peak, cold };
}

/**
 * The `scale` phase (issue 27, `deno task bench:scale`): over the backfilled store, the
 * fixed query set cold and warm with the lexicon and, as the same-run baseline, with an
 * engine that never reads it; every answer's exact count beside the baseline's complete
 * one (they must be equal: the lexicon only skips what cannot match); relevance cold and
 * warm; and the RSS the lexicon adds to an engine.
 */
async function scale() {
  const w = await wire(corpus, storeRoot!);
  await w.indexer.sweep(); // the engine answers `building` until a sweep completed
  gc();
  const before = memory().rss;
  const withLexicon = await runQueries(corpus, w, { rounds: 15 });
  gc();
  const afterRss = memory().rss;
  const bare = await runQueries(corpus, w, { engine: w.bareEngine, relevance: false, rounds: 15 });
  const counts: Record<
    string,
    {
      sessions: number | null;
      hits: number;
      baseline: number | null;
      baselineHits: number;
      ms: number;
      baselineMs: number;
    }
  > = {};
  for (const [name, q] of QUERIES) {
    const a = w.engine();
    let t = performance.now();
    const ra = await a.search({ q, complete: true, limit: 100 });
    const ms = performance.now() - t;
    const b = w.bareEngine();
    t = performance.now();
    const rb = await b.search({ q, complete: true, limit: 100 });
    const baselineMs = performance.now() - t;
    const hits = (r: typeof ra) => r.groups.reduce((n, g) => n + g.total_hits, 0);
    counts[name] = {
      sessions: ra.total_sessions ?? null,
      hits: hits(ra),
      baseline: rb.total_sessions ?? null,
      baselineHits: hits(rb),
      ms,
      baselineMs,
    };
    gc();
  }
  return {
    withLexicon,
    bare,
    counts,
    rss: { before, afterQueries: afterRss, peak: memory().peak },
  };
}

const out = phase === "baseline"
  ? await baseline()
  : phase === "backfill"
  ? await backfill()
  : phase === "serve"
  ? await serve()
  : phase === "rss"
  ? await rss()
  : phase === "sources"
  ? await eachSourceAlone()
  : phase === "scale"
  ? await scale()
  : phase === "stages"
  ? await stages(rootsOf(corpus))
  : phase === "vault"
  ? await vaultPhase(corpus, storeRoot!)
  : phase === "deep"
  ? await deepPhase(corpus, storeRoot!)
  : null;
if (out === null) throw new RangeError(`Unknown phase "${phase}"`);
console.log(JSON.stringify(out));
