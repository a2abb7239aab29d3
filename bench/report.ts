/**
 * Renders bench/results.json as one Markdown table: each figure, its same-run baseline,
 * the ratio between them, the target and whether it is met. Pure (no I/O).
 */
import { QUERY_REFRESH_MS } from "../lib/message_search/mod.ts";
import { QUERIES } from "./phase_query.ts";

// deno-lint-ignore no-explicit-any
type R = any;

const MB = 1024 * 1024;
const ARENA_CAP = 192 * MB;

const n = (x: number, d = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: d }) : "–";
const ms = (x: number) => `${n(x, x < 10 ? 2 : x < 100 ? 1 : 0)} ms`;
const mib = (x: number) => `${n(x / MB, 1)} MiB`;
const ratio = (a: number, b: number) => (b > 0 ? `${n(a / b, 2)}×` : "–");
const ok = (b: boolean) => (b ? "yes" : "**no**");

/** The results table. */
export function renderTable(r: R): string {
  const rows: string[][] = [];
  const c = r.corpus;
  const b = r.baseline;
  const bf = r.backfill;
  const s = r.serve;
  const baseMsgs = (c.messages / b.parseMs) * 1000;
  const baseMBs = c.bytes / MB / (b.parseMs / 1000);
  const bfMsgs = (bf.records / bf.ms) * 1000;
  const bfMBs = c.bytes / MB / (bf.ms / 1000);
  rows.push([
    "cold backfill",
    `${n(bfMsgs)} msg/s · ${n(bfMBs)} MB/s · ${ms(bf.ms)} · ${n(bf.records)} records`,
    `read + JSON.parse every line: ${n(baseMsgs)} msg/s · ${n(baseMBs)} MB/s · ${ms(b.parseMs)}`,
    ratio(bfMsgs, baseMsgs),
    "≥ 100k msg/s and ≥ 0.5×",
    ok(bfMsgs >= 100_000 && bfMsgs / baseMsgs >= 0.5),
  ]);
  rows.push([
    "backfill writes",
    `${mib(bf.storeBytes)} store (${mib(bf.ioWriteBytes)} write_bytes), manifest ${
      mib(bf.manifestBytes)
    }`,
    `corpus ${mib(c.bytes)}`,
    ratio(bf.storeBytes, c.bytes),
    "–",
    "–",
  ]);
  const ns = s.noopSweep;
  rows.push([
    "no-op sweep (p50 of 7)",
    `${ms(ns.ms.p50)} (max ${ms(ns.ms.max)}) · ${n(ns.bytesWritten)} B written · ${
      n(ns.sourceOpensPerSweep, 1)
    } source opens`,
    `lstat every file: ${ms(b.statMs.p50)} async (${ms(b.statSyncMs.p50)} lstatSync: ${
      ratio(ns.ms.p50, b.statSyncMs.p50)
    })`,
    ratio(ns.ms.p50, b.statMs.p50),
    "≤ 2× and 0 B",
    ok(ns.ms.p50 <= 2 * b.statMs.p50 && ns.bytesWritten === 0),
  ]);
  const a = s.append;
  rows.push([
    `append → searchable, through refreshIfStale(${QUERY_REFRESH_MS}) (${
      n(a.session.messages)
    }-message session)`,
    `p50 ${ms(a.latencyMs.p50)} · p95 ${ms(a.latencyMs.p95)} · max ${ms(a.latencyMs.max)}`,
    `refresh sweep that published it: p50 ${ms(a.refreshSweepMs.p50)} · max ${
      ms(a.refreshSweepMs.max)
    }`,
    "–",
    "≤ 1 s",
    ok(a.latencyMs.max <= 1000),
  ]);
  const pa = a.perAppend;
  rows.push([
    `bytes written per appended message (${a.amortizedAppends} appends, one sweep each; snapshot compaction amortized over its period)`,
    `${n(a.cycleAmortizedBytesPerAppend)} B store = journal ${n(pa.journal)} + segments ${
      n(pa.generations)
    } + snapshot ${n(pa.snapshotAmortized)} (${mib(pa.snapshotBytes)} per ${
      n(Math.round(pa.journalRoom / Math.max(1, pa.journal)))
    } appends); in-window total ${n(a.amortizedStoreBytesPerAppend)} B; timed appends: ${
      n(a.storeBytesPerAppend)
    } B store, ${n(a.ioWriteBytesPerAppend)} B write_bytes (page-granular fsyncs)`,
    `the appended line: ${n(a.appendedBytes / a.appends)} B`,
    ratio(a.cycleAmortizedBytesPerAppend, a.appendedBytes / a.appends),
    "≤ 4 KiB",
    ok(a.cycleAmortizedBytesPerAppend <= 4096),
  ]);
  for (const [name] of QUERIES) {
    const w = s.queries.warm[name];
    const target = name === "stopword" ? 20 : 5;
    const rg = r.rg?.[name];
    rows.push([
      `warm query: ${name} (${w.groups} groups, ${n(w.hits)} hits, ${w.state})`,
      `p50 ${ms(w.p50)} · p95 ${ms(w.p95)} · max ${ms(w.max)}`,
      rg === undefined ? "rg: –" : `rg over raw homes: ${ms(rg)}`,
      rg === undefined ? "–" : ratio(w.p95, rg),
      `p95 ≤ ${target} ms`,
      ok(w.p95 <= target),
    ]);
  }
  for (const [name] of QUERIES) {
    const q = s.queries.cold[name];
    rows.push([
      `cold first query: ${name}`,
      `${ms(q.ms)} (${q.state}, ${q.groups} groups)`,
      r.rg?.[name] === undefined ? "rg: –" : `rg: ${ms(r.rg[name])}`,
      r.rg?.[name] === undefined ? "–" : ratio(q.ms, r.rg[name]),
      "≤ 150 ms (partial allowed)",
      ok(q.ms <= 150),
    ]);
  }
  rows.push([
    "shards loaded per warm query",
    n(s.queries.shardsLoadedPerWarmQuery, 2),
    `arena ${mib(s.queries.arena.bytes)} of ${
      mib(s.queries.arena.capBytes)
    }, ${s.queries.arena.shards} shards`,
    "–",
    "0",
    ok(s.queries.shardsLoadedPerWarmQuery === 0),
  ]);
  rows.push([
    "RSS idle (store + indexer + engine, after a sweep)",
    mib(s.idleRss),
    "–",
    "–",
    "≤ 80 MB",
    ok(s.idleRss <= 80 * MB),
  ]);
  const cap = ARENA_CAP + 64 * MB;
  rows.push([
    "RSS peak",
    `serve ${mib(s.peakRss)} · backfill ${mib(bf.peakRss)}`,
    `arena cap + 64 MiB = ${mib(cap)}`,
    ratio(Math.max(s.peakRss, bf.peakRss), cap),
    "≤ arena cap + 64 MB",
    ok(Math.max(s.peakRss, bf.peakRss) <= cap),
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
    `${r.machine.ramGiB} GiB, Deno ${r.machine.deno}`;
  const table = [
    "| figure | ours | same-run baseline | ratio | target | met |",
    "|---|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
  return [head, "", ...table].join("\n");
}
