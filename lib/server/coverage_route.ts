/**
 * Coverage as the API serves it: built from the current manifest and the indexer's
 * state, cached per (manifest revision, last sweep) so a burst of searches does not
 * rebuild it each time.
 */
import { buildCoverage, type Coverage } from "../message_search/mod.ts";
import type { RouteDeps } from "./routes.ts";

let cache: { key: string; value: Coverage } | null = null;

/** Current coverage. */
export async function coverageFor(d: RouteDeps): Promise<Coverage> {
  const m = await d.store.readManifest();
  const key = `${d.store.root}\0${m.revision}\0${d.indexer.lastSweepAtMs}\0${d.indexer.ready}`;
  if (cache?.key === key) return cache.value;
  const value = buildCoverage(m, {
    ready: d.indexer.ready,
    windowDays: d.windowDays,
    lastSweepAtMs: d.indexer.lastSweepAtMs,
    lastReport: d.indexer.lastReport,
    unpublished: d.indexer.unpublishedSkips(),
  });
  cache = { key, value };
  return value;
}
