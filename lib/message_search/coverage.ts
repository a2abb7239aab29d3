/**
 * The coverage block: what the index holds, per source, and how honest it is. `building`
 * until the first sweep completes (never claims readiness it does not have); per-source
 * session and record counts, oldest/newest indexed ts_ms, source_gone counts and skipped
 * input by reason; the degraded shards (F8: quarantined in the manifest, or reported
 * damaged and not yet quarantined), which no search can read until a sweep re-derives them
 * — or never, when their sources are gone (lost); and the legacy matrix, verbatim: what
 * sessions written before the message lane can ever yield. Quarantined shards hold no
 * records, so they count in no source's sessions/records.
 */
import { WIRED_SOURCES } from "./extract/mod.ts";
import type { Source } from "./record.ts";
import type { Manifest, ShardDamage } from "./store/types.ts";
import type { SweepReport } from "./indexer.ts";
import type { DegradedReason } from "./query/types.ts";

/** Degraded shards named in the coverage block (the counts are always exact). */
export const COVERAGE_DEGRADED_MAX = 20;

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

/** One degraded shard (reasons as in query/types.ts DegradedReason). */
export interface DegradedShard {
  session_key: string;
  source: Source;
  reason: DegradedReason;
  /** When it was quarantined; null while only reported (not yet quarantined). */
  since_ms: number | null;
}

/** Shards no search can read now. */
export interface DegradedCoverage {
  count: number;
  /** Of count: damaged or quarantined with sources present (the next sweep re-derives them). */
  rebuilding: number;
  /** Of count: quarantined with sources gone (their messages are lost to the index). */
  lost: number;
  /** The first COVERAGE_DEGRADED_MAX, rebuilding before lost, then by key. */
  sessions: DegradedShard[];
}

export interface Coverage {
  state: "building" | "ready";
  window_days: number | null;
  revision: number;
  last_sweep_at_ms: number | null;
  /** The wired sources (extract/mod.ts), plus any other source the store holds shards of. */
  sources: Partial<Record<Source, SourceCoverage>>;
  degraded: DegradedCoverage;
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
  /** Damage reported by readers and not yet quarantined. */
  pendingDamage(): ShardDamage[];
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
    pendingDamage: o.indexer.pendingDamage(),
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
    /** Damage reported and not yet quarantined (Indexer.pendingDamage()). */
    pendingDamage?: readonly ShardDamage[];
  },
): Coverage {
  // Every source with an extractor is listed (zero counts say "none found"); a source
  // without one appears only if the store holds shards of it (an index built by a build
  // that had its extractor).
  const sources = Object.fromEntries(WIRED_SOURCES.map((s) => [s, empty()])) as Partial<
    Record<Source, SourceCoverage>
  >;
  for (const e of Object.values(manifest.sessions)) {
    const c = sources[e.source] ??= empty();
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
    degraded: degradedOf(manifest, o.pendingDamage ?? []),
    legacy: LEGACY_MATRIX,
  };
}

/** The degraded block: quarantined entries plus reported damage not yet quarantined. */
export function degradedOf(manifest: Manifest, pending: readonly ShardDamage[]): DegradedCoverage {
  const all: DegradedShard[] = [];
  for (const [key, e] of Object.entries(manifest.sessions)) {
    if (e.quarantined_at_ms === undefined) continue;
    const reason = e.source_gone ? "source_gone" : "rebuilding";
    all.push({ session_key: key, source: e.source, reason, since_ms: e.quarantined_at_ms });
  }
  for (const d of pending) {
    const e = Object.hasOwn(manifest.sessions, d.key) ? manifest.sessions[d.key] : undefined;
    // Reported against an older revision and healed (or deleted) since: nothing to show.
    if (!e || e.quarantined_at_ms !== undefined || !e.generations.includes(d.generation)) {
      continue;
    }
    const reason = e.source_gone ? "source_gone" : "damaged";
    all.push({ session_key: d.key, source: e.source, reason, since_ms: null });
  }
  const lost = all.filter((d) => d.reason === "source_gone").length;
  all.sort((a, b) =>
    Number(a.reason === "source_gone") - Number(b.reason === "source_gone") ||
    (a.session_key < b.session_key ? -1 : a.session_key > b.session_key ? 1 : 0)
  );
  return {
    count: all.length,
    rebuilding: all.length - lost,
    lost,
    sessions: all.slice(0, COVERAGE_DEGRADED_MAX),
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
