/**
 * The coverage block, polled: every COVERAGE_POLL_MS while the index says `building`
 * (so the counts climb live), then every COVERAGE_REFRESH_MS once ready. Never blocks
 * anything: the list and search render without it. A failed poll keeps the last value
 * and tries again at the slow cadence.
 */
import { useEffect, useState } from "preact/hooks";
import { type CoverageView, fetchCoverage } from "../api_client.ts";
import { isAbort } from "../lib/latest.ts";

export const COVERAGE_POLL_MS = 1000;
export const COVERAGE_REFRESH_MS = 30_000;

/** Coverage (null until the first answer) and the last error. */
export function useCoverage(): { coverage: CoverageView | null; error: string | null } {
  const [coverage, setCoverage] = useState<CoverageView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const tick = async () => {
      let delay = COVERAGE_REFRESH_MS;
      try {
        const c = await fetchCoverage(ctrl.signal);
        setCoverage(c);
        setError(null);
        if (c.state === "building") delay = COVERAGE_POLL_MS;
      } catch (err) {
        if (isAbort(err)) return;
        setError((err as Error).message);
      }
      if (!ctrl.signal.aborted) timer = setTimeout(tick, delay);
    };
    void tick();
    return () => {
      ctrl.abort();
      if (timer !== null) clearTimeout(timer);
    };
  }, []);
  return { coverage, error };
}
