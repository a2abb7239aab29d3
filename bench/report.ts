/**
 * Renders bench/results.json as one Markdown table: each figure, its same-run baseline,
 * the ratio between them, the target (issue 16's where it set one) and whether it is met.
 * Pure (no I/O).
 * Which measurement judges a target: RSS, append → searchable and the query latencies are
 * the real daemon's (`intendant serve --locked` over HTTP, phase_daemon.ts); a query target
 * is judged on the engine's own took_ms as the daemon reported it, with the HTTP wall time
 * shown beside it (the wall adds the loopback round trip; since issue 28 no search sweeps
 * inline: the daemon's file watch keeps the index fresh). Throughput and
 * bytes written are the store-level phases' (phases.ts: exact byte counts through the
 * store's Fs).
 */
import { QUERIES } from "./phase_query.ts";

// deno-lint-ignore no-explicit-any
type R = any;

const MB = 1024 * 1024;
const ARENA_CAP = 192 * MB;
/** Store bytes ÷ corpus bytes at the start of issue 16 (bench/RESULTS.md: 321.5 of 1,436.8 MiB). */
export const STORE_RATIO_BEFORE = 0.224;
/** Issue 16's targets. */
const T = {
  backfillRatio: 1.0,
  backfillMsgs: 100_000,
  coldMs: 150,
  oneShotMs: 500,
  warmP95Ms: 5,
  warmStopwordP95Ms: 20,
  warmMaxMs: 25,
  idleRss: 80 * MB,
  peakOverCap: 64 * MB,
  backfillPeak: 512 * MB,
  appendBytes: 4096,
  noopRatio: 2,
};

const n = (x: number, d = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: d }) : "–";
const ms = (x: number) => `${n(x, x < 10 ? 2 : x < 100 ? 1 : 0)} ms`;
const mib = (x: number) => `${n(x / MB, 1)} MiB`;
const ratio = (a: number, b: number) => (b > 0 ? `${n(a / b, 2)}×` : "–");
const ok = (b: boolean) => (b ? "yes" : "**no**");
const timings = (t: R) => `p50 ${ms(t.p50)} · p95 ${ms(t.p95)} · max ${ms(t.max)}`;

/** The results table. */
export function renderTable(r: R): string {
  const rows: string[][] = [];
  const c = r.corpus;
  const b = r.baseline;
  const bf = r.backfill;
  const df = r.daemonBackfill;
  const s = r.serve;
  const d = r.daemon;
  const baseMsgs = (c.messages / b.parseMs) * 1000;
  const baseMBs = c.bytes / MB / (b.parseMs / 1000);
  const bfMsgs = (bf.records / bf.ms) * 1000;
  const bfMBs = c.bytes / MB / (bf.ms / 1000);
  rows.push([
    "cold backfill",
    `${n(bfMsgs)} msg/s · ${n(bfMBs)} MB/s · ${ms(bf.ms)} · ${n(bf.records)} records; ` +
    `daemon's first sweep ${ms(df.firstSweepMs)}`,
    `read + JSON.parse every line${b.parseMethod ? ` (${b.parseMethod}, the faster way)` : ""}: ` +
    `${n(baseMsgs)} msg/s · ${n(baseMBs)} MB/s · ${ms(b.parseMs)}` +
    (b.otherMethodMs ? ` (other way ${ms(b.otherMethodMs)})` : ""),
    ratio(bfMsgs, baseMsgs),
    `≥ ${T.backfillRatio}× and ≥ 100k msg/s`,
    ok(bfMsgs >= T.backfillMsgs && bfMsgs / baseMsgs >= T.backfillRatio),
  ]);
  if (bf.bySource) {
    const per = Object.entries(bf.bySource as Record<string, R>);
    const bad = per.filter(([, x]) =>
      !x.swept || x.records !== x.expectedRecords || x.sessions !== x.expectedSessions
    );
    rows.push([
      `records per source after the backfill (${per.length} sources)`,
      per.map(([src, x]) =>
        `${src} ${x.swept ? `${n(x.records)} in ${n(x.sessions)}` : "not swept"}`
      ).join(" · "),
      `written: ${
        per.map(([src, x]) => `${src} ${n(x.expectedRecords)} in ${n(x.expectedSessions)}`)
          .join(" · ")
      }`,
      `${per.length - bad.length}/${per.length} equal`,
      "every source swept, records and sessions equal to what was written",
      ok(bad.length === 0),
    ]);
  }
  if (r.sources) {
    // Each source alone against its own bare parse: comparable across corpus mixes.
    const per = Object.entries(r.sources as Record<string, R>);
    const ratios = per.map(([src, x]) => [src, x.baseMs / x.sweepMs] as const);
    rows.push([
      "backfill per source, each alone (records/s of a one-source sweep ÷ its files' bare parse)",
      ratios.map(([src, q]) => `${src} ${q.toFixed(2)}×`).join(" · "),
      per.map(([src, x]) => `${src} ${n(Math.round(x.baseMs))} ms`).join(" · "),
      `min ${Math.min(...ratios.map(([, q]) => q)).toFixed(2)}×`,
      "–",
      "–",
    ]);
  }
  if (r.stages) {
    // The work a backfill has to do, in one thread: on 2 cores it cannot take less than
    // half of it, which bounds the backfill's ratio before any pool or publish cost.
    const st = r.stages;
    const work = st.extractMs + st.encodeMs;
    const p = st.encodeParts;
    rows.push([
      "backfill work in one thread (extract + encode)",
      `${ms(work)}: extract ${ms(st.extractMs)} · encode ${ms(st.encodeMs)} (terms ${
        ms(p.terms)
      } · bloom ${ms(p.bloom)} · summary ${ms(p.summary)} · fold ${ms(p.fold)})`,
      `bare parse ${ms(b.parseMs)}`,
      `${n(work / b.parseMs, 2)}× the bare work; best on 2 cores ${ratio(2 * b.parseMs, work)}`,
      "–",
      "–",
    ]);
  }
  if (r.vault) {
    // Keeping every transcript (issue 29): its bytes against the originals, and the
    // backfill with the Keeper against the same backfill without it.
    const v = r.vault;
    rows.push([
      "vault: bytes kept ÷ originals (cold keep of every file source, one thread)",
      `${mib(v.bytesKept)} of ${mib(v.bytesOriginal)}: ${n(v.bytesKept / v.bytesOriginal, 3)}× (${
        n(v.bytesKept / v.corpusBytes, 3)
      }× the whole corpus); ${n(v.sessions)} sessions in ${ms(v.keepMs)} (${
        n(v.bytesOriginal / 1048576 / (v.keepMs / 1000), 0)
      } MiB/s)`,
      `corpus ${mib(v.corpusBytes)}`,
      "≤ 0.15×",
      "–",
      "–",
    ]);
    rows.push([
      "backfill with the vault keeping (sweep + keep done)",
      `${ms(v.withBackfill.totalMs)} (sweep ${ms(v.withBackfill.sweepMs)})`,
      `backfill without it ${ms(bf.ms)}`,
      `${n(v.withBackfill.totalMs / bf.ms, 2)}× (target ≤ 1.2×)`,
      "–",
      "–",
    ]);
  }
  if (r.deep) {
    // Deep Search (issue 29) paged to the end like the CLI, against rg over the same homes.
    const d = r.deep;
    const mbs = (x: { ms: number; bytes: number }) => n(x.bytes / 1048576 / (x.ms / 1000), 0);
    rows.push([
      "deep search, a needle nowhere (full scan, 1 s pages)",
      `${ms(d.nohit.ms)} for ${mib(d.nohit.bytes)} (${mbs(d.nohit)} MiB/s, ${d.nohit.pages} pages)`,
      d.rg ? `rg -F -i ${ms(d.rg.nohitMs)}` : "rg not installed",
      d.rg ? `${n(d.rg.nohitMs / d.nohit.ms, 3)}× rg's speed` : "–",
      "–",
      "–",
    ]);
    rows.push([
      "deep search: first page of a common word (what the dashboard shows first)",
      `${ms(d.firstPage.ms)} (${d.firstPage.hits} hits)`,
      "–",
      "–",
      "–",
      "–",
    ]);
  }
  const onDisk = df.storeBytesOnDisk;
  rows.push([
    "store bytes on disk after the backfill",
    `${mib(onDisk)} (daemon's store); backfill wrote ${mib(bf.storeBytes)} (${
      mib(bf.ioWriteBytes)
    } write_bytes), manifest ${mib(bf.manifestBytes)}`,
    `corpus ${mib(c.bytes)}; issue start ${STORE_RATIO_BEFORE}×`,
    ratio(onDisk, c.bytes),
    `≤ ${STORE_RATIO_BEFORE}× the corpus`,
    ok(onDisk / c.bytes <= STORE_RATIO_BEFORE),
  ]);
  const ns = s.noopSweep;
  rows.push([
    "no-op sweep (p50 of 7, after the startup check)",
    `${ms(ns.ms.p50)} (max ${ms(ns.ms.max)}) · ${n(ns.bytesWritten)} B written (store Fs ${
      n(ns.storeFsBytes)
    } B, writer.lock ${ns.lockRewritten ? `rewritten, ${n(ns.lockBytes)} B` : "untouched"}) · ${
      n(ns.sourceOpensPerSweep, 1)
    } source opens`,
    `lstat every file: ${ms(b.statMs.p50)} async (${ms(b.statSyncMs.p50)} lstatSync: ${
      ratio(ns.ms.p50, b.statSyncMs.p50)
    })`,
    ratio(ns.ms.p50, b.statMs.p50),
    `≤ ${T.noopRatio}× and 0 B`,
    ok(ns.ms.p50 <= T.noopRatio * b.statMs.p50 && ns.bytesWritten === 0),
  ]);
  const ix = d.oneShot.index;
  rows.push([
    "no-op `intendant index` (a new process)",
    `${ms(ix.ms)} · ${n(ix.bytes)} B in ${ix.changedCount} changed store files${
      ix.changedCount ? ` (${ix.changedFiles.join(", ")})` : ""
    }`,
    `process floor (intendant --version): ${ms(d.oneShot.floorMs.p50)}`,
    "–",
    "0 B",
    ok(ix.bytes === 0 && ix.changedCount === 0),
  ]);
  const a = d.append;
  rows.push([
    `append → searchable through the search route (daemon, HTTP; file watch, no sweep on the query path; ${
      n(a.session.messages)
    }-message session)`,
    timings(a.latencyMs),
    "–",
    "–",
    "≤ 1 s",
    ok(a.latencyMs.max <= 1000),
  ]);
  const sa = s.append;
  const pa = sa.perAppend;
  rows.push([
    `bytes written per appended message (${sa.amortizedAppends} appends, one sweep each; snapshot compaction amortized over its period)`,
    `${n(sa.cycleAmortizedBytesPerAppend)} B store = journal ${n(pa.journal)} + segments ${
      n(pa.generations)
    } + snapshot ${n(pa.snapshotAmortized)} (${mib(pa.snapshotBytes)} per ${
      n(Math.round(pa.journalRoom / Math.max(1, pa.journal)))
    } appends); in-window total ${n(sa.amortizedStoreBytesPerAppend)} B`,
    `the appended line: ${n(sa.lineBytes)} B`,
    ratio(sa.cycleAmortizedBytesPerAppend, sa.lineBytes),
    "≤ 4 KiB",
    ok(sa.cycleAmortizedBytesPerAppend <= T.appendBytes),
  ]);
  for (const [name] of QUERIES) {
    const w = d.warm[name];
    const p95 = name === "stopword" ? T.warmStopwordP95Ms : T.warmP95Ms;
    const rg = r.rg?.[name];
    rows.push([
      `warm query (daemon): ${name} (${w.groups} groups, ${n(w.hits)} hits, ${w.state})`,
      `engine ${timings(w.tookMs)}; HTTP wall ${timings(w.wallMs)}`,
      rg === undefined ? "rg: –" : `rg over raw homes: ${ms(rg)}`,
      rg === undefined ? "–" : ratio(w.tookMs.p95, rg),
      `p95 ≤ ${p95} ms, max ≤ ${T.warmMaxMs} ms`,
      ok(w.tookMs.p95 <= p95 && w.tookMs.max <= T.warmMaxMs),
    ]);
  }
  for (const [name] of QUERIES) {
    const q = d.cold[name];
    const same = q.keys.join("\n") === d.warm[name].keys.join("\n");
    rows.push([
      `cold first query (fresh daemon): ${name}`,
      `engine ${ms(q.tookMs)} (HTTP wall ${ms(q.ms)}) · ${q.state}, ${q.groups} groups, ${
        same ? "same first page as warm" : "**not** the warm first page"
      }`,
      r.rg?.[name] === undefined ? "rg: –" : `rg: ${ms(r.rg[name])}`,
      r.rg?.[name] === undefined ? "–" : ratio(q.tookMs, r.rg[name]),
      `ready, warm's page, ≤ ${T.coldMs} ms`,
      ok(q.state === "ready" && same && q.tookMs <= T.coldMs),
    ]);
  }
  const os = d.oneShot.search;
  const osNames = QUERIES.map(([name]) => name);
  const osMax = Math.max(...osNames.map((k) => os[k].ms));
  const osGood = osNames.filter((k) => os[k].state === "ready" && os[k].sameAsWarm).length;
  rows.push([
    "one-shot `intendant search Q --json` (new process, no daemon)",
    `max ${ms(osMax)} over ${osNames.length} needles (${
      osNames.map((k) => `${k} ${n(os[k].ms)}`).join(" · ")
    }); complete and warm's first page: ${osGood}/${osNames.length}`,
    `intendant --version: ${ms(d.oneShot.floorMs.p50)}`,
    ratio(osMax, d.oneShot.floorMs.p50),
    `complete, ≤ ${T.oneShotMs} ms`,
    ok(osMax <= T.oneShotMs && osGood === osNames.length),
  ]);
  const eq = s.queries;
  const worstWarm = Math.max(...osNames.map((k) => eq.warm[k].p95));
  rows.push([
    "engine in process (store-level phase): warm p95 worst needle · cold states · shards loaded per warm query",
    `${ms(worstWarm)} · ${osNames.map((k) => eq.cold[k].state).join(", ")} · ${
      n(eq.shardsLoadedPerWarmQuery, 2)
    }`,
    `arena ${mib(eq.arena.bytes)} of ${mib(eq.arena.capBytes)}, ${eq.arena.shards} shards`,
    "–",
    "0 shards loaded",
    ok(eq.shardsLoadedPerWarmQuery === 0),
  ]);
  // Relevance (issue 27) beside the newest order of the same run and the same arena.
  const rv = eq.relevance;
  if (rv) {
    const names = Object.keys(rv.warm);
    const worstRel = Math.max(...names.filter((k) => k !== "stopword").map((k) => rv.warm[k].p95));
    const stopRel = rv.warm.stopword?.p95 ?? 0;
    const coldRel = Math.max(...names.map((k) => rv.cold[k].ms));
    rows.push([
      "relevance (sort=relevance): warm p95 worst needle · stopword · cold first page worst",
      `${ms(worstRel)} · ${ms(stopRel)} · ${ms(coldRel)} (${
        names.map((k) => `${k} ${n(rv.warm[k].p95)}`).join(" · ")
      })`,
      `newest, same run: warm p95 worst ${ms(worstWarm)}`,
      ratio(worstRel, worstWarm),
      "≤ 20 ms (stopword ≤ 50), cold ≤ 300 ms",
      ok(worstRel <= 20 && stopRel <= 50 && coldRel <= 300),
    ]);
  }
  if (r.steady) rows.push(...steadyRows(r.steady));
  rows.push([
    "daemon RSS idle (after its first sweep)",
    `${mib(d.idleRss)} (launcher process beside it: ${mib(d.launcherRss)})`,
    `daemon on an empty state root: ${mib(d.floor.idleRss)}; store-level phase: ${mib(s.idleRss)}`,
    ratio(d.idleRss, T.idleRss),
    "≤ 80 MiB",
    ok(d.idleRss <= T.idleRss),
  ]);
  const cap = ARENA_CAP + T.peakOverCap;
  rows.push([
    "daemon RSS peak over the bench, backfill excluded",
    `${mib(d.peakRss)} (after the warm queries: ${mib(d.afterQueriesRss)})${
      d.append?.peakAfterReparse
        ? `; re-deriving the ${
          n(d.append.session.messages)
        }-message session after its file was truncated back: ${mib(d.append.peakAfterReparse)}`
        : ""
    }`,
    `arena cap + 64 MiB = ${mib(cap)}`,
    ratio(d.peakRss, cap),
    "≤ arena cap + 64 MiB",
    ok(d.peakRss <= cap),
  ]);
  rows.push([
    "daemon RSS peak during the backfill",
    mib(df.peakRss),
    `store-level backfill phase: ${mib(bf.peakRss)}`,
    ratio(df.peakRss, T.backfillPeak),
    "≤ 512 MiB",
    ok(df.peakRss <= T.backfillPeak),
  ]);
  rows.push([
    "UI bundle (gzip)",
    r.uiGzip === null ? "–" : `${n(r.uiGzip)} B`,
    "budget 60 KiB (build.ts)",
    r.uiGzip === null ? "–" : ratio(r.uiGzip, 60 * 1024),
    "≤ 60 KiB",
    r.uiGzip === null ? "–" : ok(r.uiGzip <= 60 * 1024),
  ]);
  const head =
    `corpus: ${c.preset} seed ${c.seed} — ${n(c.sessions)} sessions, ${n(c.files)} files, ` +
    `${n(c.messages)} messages, ${mib(c.bytes)}; machine: ${r.machine.nproc} × ${r.machine.cpu}, ` +
    `${r.machine.ramGiB} GiB, Deno ${r.machine.deno}; load average at start ${
      r.machine.load ?? "–"
    }`;
  const perSource = c.bySource
    ? "per source: " +
      Object.entries(c.bySource as Record<string, R>).map(([src, t]) =>
        `${src} ${n(t.sessions)} sessions, ${n(t.messages)} messages, ${mib(t.bytes)}`
      ).join(" · ")
    : "";
  const table = [
    "| figure | ours | same-run baseline | ratio | target | met |",
    "|---|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
  return [head, ...(perSource ? [perSource] : []), "", ...table].join("\n");
}

const pct = (x: number) => `${n(x * 100, 2)} %`;

/** Issue 28's targets for the steady state. */
const S = {
  sparse: { p50: 10, p95: 25, max: 60 },
  writingP95: 50,
  appendP95: 1000,
  idleCpu: 0.005,
  idleCpuTeam: 0.01,
};

/** The steady-state rows (phase_steady.ts), with and without a team database. */
export function steadyRows(st: R): string[][] {
  const rows: string[][] = [];
  const floor = st.floor;
  for (const run of [st.local, st.team]) {
    if (!run || run.skipped) {
      if (run?.skipped) {
        rows.push(["steady state with --team", `skipped: ${run.skipped}`, "–", "–", "–", "–"]);
      }
      continue;
    }
    const tag = run.team ? " (--team)" : "";
    const cpuTarget = run.team ? S.idleCpuTeam : S.idleCpu;
    rows.push([
      `daemon CPU at rest${tag} (60 s, /proc; settled ${n(run.settledMs / 1000, 1)} s after ready)`,
      `${pct(run.idleCpu)} of a core (after the write phase: ${pct(run.idleCpuAfter)}); RSS ${
        mib(run.idleRss)
      }`,
      `empty-state daemon: ${pct(floor.idleCpu)}, ${mib(floor.idleRss)}`,
      "–",
      `≤ ${pct(cpuTarget)}`,
      ok(run.idleCpu <= cpuTarget),
    ]);
    const sp = run.sparse;
    rows.push([
      `sparse searches${tag} (one every 0.7 s for 30 s: ${sp.searches})`,
      `HTTP wall ${timings(sp.wallMs)}`,
      `engine took_ms, same requests: ${timings(sp.tookMs)}`,
      ratio(sp.wallMs.p95, sp.tookMs.p95),
      `≤ ${S.sparse.p50} / ${S.sparse.p95} / ${S.sparse.max} ms`,
      ok(
        sp.wallMs.p50 <= S.sparse.p50 && sp.wallMs.p95 <= S.sparse.p95 &&
          sp.wallMs.max <= S.sparse.max,
      ),
    ]);
    const w = run.writing;
    rows.push([
      `searches while an agent appends every 1.5 s${tag} (${w.searches} searches, ${w.appends} appends; daemon CPU ${
        pct(w.cpu)
      })`,
      `HTTP wall ${timings(w.wallMs)}`,
      `engine took_ms: ${timings(w.tookMs)}`,
      ratio(w.wallMs.p95, w.tookMs.p95),
      `p95 ≤ ${S.writingP95} ms`,
      ok(w.wallMs.p95 <= S.writingP95),
    ]);
    rows.push([
      `append → searchable while searching sparsely${tag}`,
      timings(w.appendToSearchableMs),
      "–",
      "–",
      "p95 ≤ 1 s (aim 300 ms)",
      ok(w.appendToSearchableMs.p95 <= S.appendP95),
    ]);
  }
  return rows;
}
