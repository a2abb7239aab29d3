/**
 * The dashboard's Deep Search run: pages GET /api/sessions/search (each page bounded to
 * DEEP_PAGE_MS, so progress moves about once a second), appending hits as they arrive and
 * summing what each page scanned (lib/catalog deep_tally.ts, the CLI's sum), until the scan
 * is complete, DEEP_UI_HIT_CAP hits are shown ("capped": Continue goes on from the cursor),
 * or the user stops it ("stopped": Continue too). A new query abandons the old run (its
 * request is aborted and its late answers ignored). Errors keep what was found and offer
 * Continue from the last cursor.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type DeepHit, type DeepScanned, deepSearchPage } from "../api_client.ts";
import { addDeepScanned, emptyDeepScanned } from "../../lib/catalog/deep_tally.ts";

/** One page's time budget. */
export const DEEP_PAGE_MS = 1000;
/** Hits shown before the run pauses (a deep scan of a common word finds thousands). */
export const DEEP_UI_HIT_CAP = 200;
const PAGE_LIMIT = 100;

/** Where a run is. */
export type DeepStatus = "running" | "done" | "capped" | "stopped" | "error";

/** What the lane shows. */
export interface DeepState {
  q: string;
  status: DeepStatus;
  hits: DeepHit[];
  scanned: DeepScanned;
  progress: { sessions_done: number; sessions_total: number };
  error: string | null;
}

/** The run and its controls. */
export interface DeepModel {
  state: DeepState | null;
  stop(): void;
  /** Goes on from where a capped, stopped or failed run ended. */
  resume(): void;
}

function fresh(q: string): DeepState {
  return {
    q,
    status: "running",
    hits: [],
    scanned: emptyDeepScanned(),
    progress: { sessions_done: 0, sessions_total: 0 },
    error: null,
  };
}

interface Run {
  ctl: AbortController;
  cursor: string | null;
  found: number;
  shownCap: number;
}

/** Runs Deep Search for `q` (null: none). */
export function useDeepSearch(q: string | null): DeepModel {
  const [state, setState] = useState<DeepState | null>(null);
  /** The live run: its cursor and hit count live here, not in state (updaters run later). */
  const run = useRef<Run | null>(null);

  const pump = async (target: string, r: Run) => {
    try {
      for (;;) {
        const page = await deepSearchPage(
          { q: target, cursor: r.cursor, limit: PAGE_LIMIT, maxMs: DEEP_PAGE_MS },
          r.ctl.signal,
        );
        if (run.current !== r) return; // a newer run owns the lane
        r.cursor = page.cursor;
        r.found += page.hits.length;
        const status: DeepStatus = page.cursor === null
          ? "done"
          : r.found >= r.shownCap
          ? "capped"
          : "running";
        setState((s) => {
          if (!s) return s;
          const scanned = structuredClone(s.scanned);
          addDeepScanned(scanned, page.scanned);
          return {
            ...s,
            hits: [...s.hits, ...page.hits],
            scanned,
            progress: page.progress,
            status,
          };
        });
        if (status !== "running") return;
      }
    } catch (err) {
      if (run.current !== r || r.ctl.signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      setState((s) => s && { ...s, status: "error", error: message });
    }
  };

  useEffect(() => {
    run.current?.ctl.abort();
    run.current = null;
    if (!q) {
      setState(null);
      return;
    }
    const r: Run = {
      ctl: new AbortController(),
      cursor: null,
      found: 0,
      shownCap: DEEP_UI_HIT_CAP,
    };
    run.current = r;
    setState(fresh(q));
    void pump(q, r);
    return () => r.ctl.abort();
  }, [q]);

  return {
    state,
    stop() {
      const r = run.current;
      if (!r || state?.status !== "running") return;
      r.ctl.abort();
      setState((s) => s && { ...s, status: "stopped" });
    },
    resume() {
      const old = run.current;
      if (!q || !old || !state || state.status === "running" || state.status === "done") return;
      const r: Run = {
        ctl: new AbortController(),
        cursor: old.cursor,
        found: old.found,
        shownCap: old.found + DEEP_UI_HIT_CAP,
      };
      run.current = r;
      setState((s) => s && { ...s, status: "running", error: null });
      void pump(q, r);
    },
  };
}
