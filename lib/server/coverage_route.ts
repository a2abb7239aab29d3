/**
 * Coverage as the API serves it: built from the current manifest and the indexer's
 * state, cached per (manifest revision, last sweep) so a burst of searches does not
 * rebuild it each time. The search route appends it to every page, AFTER the engine's
 * response budget was applied, so its size is bounded here (error messages clipped) and
 * reserved out of the page budget: page + coverage stays under the 256 KiB response cap
 * (figure D10 in tests/RELIABILITY.md). `/api/coverage` alone adds two live parts that are not cached
 * and never ride on a search page: the sweep in progress while the index is building
 * (files and messages per source, sweep_progress.ts), and where each source is looked for
 * (so an empty index can say where it looked and which variable points it elsewhere),
 * and how fresh the index is (the freshness scheduler's watch state and its notes).
 */
import {
  type Coverage,
  type Freshness,
  indexerCoverage,
  type SourceLocation,
} from "../message_search/mod.ts";
import type { RouteDeps } from "./routes.ts";
import type { SweepProgressView } from "./sweep_progress.ts";

/** What `/api/coverage` answers: the coverage block plus its live parts. */
export type CoverageView = Coverage & {
  /** The first sweep's progress while `state` is building; null once ready or unknown. */
  sweep_progress: SweepProgressView | null;
  /** Where each source is looked for; empty when the server was not told. */
  locations: SourceLocation[];
  /** How fresh the index is (the same block every search page carries). */
  freshness: Freshness;
};

/** The search response cap (figure D10, tests/RELIABILITY.md): page plus coverage block. */
export const SEARCH_RESPONSE_CAP_BYTES = 256 * 1024;
/**
 * Bytes kept for the coverage block. Counts, timestamps and skip reasons (fixed
 * vocabularies of the extractors) take ~2 KiB; sweep errors carry free text, so they are
 * clipped to ERROR_MAX_CHARS each and dropped (last first) while the block is over this.
 */
export const COVERAGE_RESERVE_BYTES = 16 * 1024;
/** The engine's response budget for the server: the cap minus the coverage reserve. */
export const SEARCH_PAGE_BUDGET_BYTES = SEARCH_RESPONSE_CAP_BYTES - COVERAGE_RESERVE_BYTES;
/** Longest error message kept per coverage entry. */
const ERROR_MAX_CHARS = 200;

let cache: { key: string; value: Coverage } | null = null;

/**
 * Current coverage, at most COVERAGE_RESERVE_BYTES of JSON when its errors allow (its
 * degraded block names at most COVERAGE_DEGRADED_MAX shards: ~3 KiB). Damage a search
 * just reported is in the key, so the page that found it carries it in `degraded`.
 */
export async function coverageFor(d: RouteDeps): Promise<Coverage> {
  const m = await d.store.readManifest();
  const pending = d.indexer.pendingDamage().map((x) => `${x.key}/${x.generation}`).join(",");
  const key = `${d.store.root}\0${m.revision}\0${d.indexer.lastSweepAtMs}\0${d.indexer.ready}` +
    `\0${pending}`;
  if (cache?.key === key) return cache.value;
  const value = indexerCoverage(m, { indexer: d.indexer, windowDays: d.windowDays });
  boundErrors(value);
  cache = { key, value };
  return value;
}

function boundErrors(c: Coverage): void {
  const sources = Object.values(c.sources);
  for (const s of sources) {
    s.errors = s.errors.map((
      e,
    ) => (e.length > ERROR_MAX_CHARS ? `${e.slice(0, ERROR_MAX_CHARS)}…` : e));
  }
  const size = () => new TextEncoder().encode(JSON.stringify(c)).length;
  while (size() > COVERAGE_RESERVE_BYTES) {
    const most = sources.reduce((a, b) => (b.errors.length > a.errors.length ? b : a));
    if (most.errors.length === 0) break;
    most.errors.pop();
  }
}

/** The `/api/coverage` answer. */
export async function coverageView(d: RouteDeps): Promise<CoverageView> {
  const c = await coverageFor(d);
  return {
    ...c,
    sweep_progress: c.state === "building" ? d.sweepProgress?.() ?? null : null,
    locations: (await d.locations?.()) ?? [],
    freshness: freshnessOf(d),
  };
}

/** How fresh the answer is: the scheduler's view, else the last sweep's start. */
export function freshnessOf(d: RouteDeps): Freshness {
  if (d.freshness) return d.freshness.status();
  const at = d.indexer.lastReport?.startedAtMs ?? null;
  return {
    mode: "polling",
    as_of_ms: at,
    age_ms: at === null ? null : Math.max(0, Date.now() - at),
    pending: 0,
    note: null,
    watched: 0,
    waiting: 0,
  };
}
