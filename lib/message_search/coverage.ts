/**
 * The coverage block: what the index holds, per source, and how honest it is. `building`
 * until the first sweep completes (never claims readiness it does not have); per-source
 * session and record counts, oldest/newest indexed ts_ms, source_gone counts and skipped
 * input by reason; and the legacy matrix, verbatim: what sessions written before the
 * message lane can ever yield.
 */
import { type Source, SOURCES } from "./record.ts";
import type { Manifest } from "./store/types.ts";
import type { SweepReport } from "./indexer.ts";

export interface SourceCoverage {
  sessions: number;
  records: number;
  oldest_ts_ms: number | null;
  newest_ts_ms: number | null;
  source_gone: number;
  /** Skipped input by reason: cumulative over published shards plus the last sweep's discovery. */
  skipped: Record<string, number>;
  errors: string[];
}

export interface Coverage {
  state: "building" | "ready";
  window_days: number | null;
  revision: number;
  last_sweep_at_ms: number | null;
  sources: Record<Source, SourceCoverage>;
  legacy: { ask_human_answers: "none"; follow_ups: "best_effort"; note: string };
}

export const LEGACY_MATRIX: Coverage["legacy"] = {
  ask_human_answers: "none",
  follow_ups: "best_effort",
  note:
    'Sessions written before the message lane (pre-2026-07): askHuman answers were never persisted; follow-ups are reconstructed from "Round N follow-up:" info lines.',
};

/** What {@link indexerCoverage} reads of an indexer. */
export interface IndexerState {
  readonly ready: boolean;
  readonly lastSweepAtMs: number | null;
  readonly lastReport: SweepReport | null;
  unpublishedSkips(): Partial<Record<Source, Record<string, number>>>;
}

/** Coverage of `manifest` as `indexer` last left it: the one wiring every edge uses. */
export function indexerCoverage(
  manifest: Manifest,
  o: { indexer: IndexerState; windowDays: number | null; lastReport?: SweepReport | null },
): Coverage {
  return buildCoverage(manifest, {
    ready: o.indexer.ready,
    windowDays: o.windowDays,
    lastSweepAtMs: o.indexer.lastSweepAtMs,
    lastReport: o.lastReport ?? o.indexer.lastReport,
    unpublished: o.indexer.unpublishedSkips(),
  });
}

/** Builds coverage from a manifest and the indexer's state. */
export function buildCoverage(
  manifest: Manifest,
  o: {
    ready: boolean;
    windowDays: number | null;
    lastSweepAtMs: number | null;
    lastReport: SweepReport | null;
    /** Skips of sessions that published nothing (Indexer.unpublishedSkips()). */
    unpublished?: Partial<Record<Source, Record<string, number>>>;
  },
): Coverage {
  const sources = Object.fromEntries(SOURCES.map((s) => [s, empty()])) as Record<
    Source,
    SourceCoverage
  >;
  for (const e of Object.values(manifest.sessions)) {
    const c = sources[e.source];
    // A shard published empty (a session that blew a bound) still reports why.
    for (const [k, n] of Object.entries(e.skipped)) c.skipped[k] = (c.skipped[k] ?? 0) + n;
    if (e.records === 0) continue;
    c.sessions++;
    c.records += e.records;
    c.oldest_ts_ms = c.oldest_ts_ms === null
      ? e.oldest_ts_ms
      : Math.min(c.oldest_ts_ms, e.oldest_ts_ms);
    c.newest_ts_ms = c.newest_ts_ms === null
      ? e.newest_ts_ms
      : Math.max(c.newest_ts_ms, e.newest_ts_ms);
    if (e.source_gone) c.source_gone++;
  }
  for (const [src, s] of Object.entries(o.lastReport?.sources ?? {})) {
    const c = sources[src as Source];
    if (!c) continue;
    c.errors = s.errors.slice(0, 20);
    for (const [k, n] of Object.entries(s.skipped)) {
      // Discovery skips are not in any shard; read skips of published shards already are.
      if (k.startsWith("discovery:")) c.skipped[k] = (c.skipped[k] ?? 0) + n;
    }
  }
  for (const [src, skipped] of Object.entries(o.unpublished ?? {})) {
    const c = sources[src as Source];
    if (!c) continue;
    for (const [k, n] of Object.entries(skipped)) c.skipped[k] = (c.skipped[k] ?? 0) + n;
  }
  return {
    state: o.ready ? "ready" : "building",
    window_days: o.windowDays,
    revision: manifest.revision,
    last_sweep_at_ms: o.lastSweepAtMs,
    sources,
    legacy: LEGACY_MATRIX,
  };
}

function empty(): SourceCoverage {
  return {
    sessions: 0,
    records: 0,
    oldest_ts_ms: null,
    newest_ts_ms: null,
    source_gone: 0,
    skipped: {},
    errors: [],
  };
}
