/**
 * The recent-sessions catalog, paged: the first page renders as soon as it arrives, and
 * `loadMore` appends the next (offset paging; the list view calls it from an
 * IntersectionObserver, so thousands of sessions load incrementally). A source filter
 * change restarts from offset 0; a late page for an old filter is dropped (LatestGate).
 * `patch` applies local edits (a rename) without a refetch.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { fetchSessions, type SessionSummary, type Source } from "../api_client.ts";
import { createLatestGate, isAbort } from "../lib/latest.ts";

/** Sessions per catalog page. */
export const SESSION_PAGE = 50;

/** The catalog model. */
export interface SessionsModel {
  sessions: SessionSummary[];
  total: number | null;
  loading: boolean;
  error: string | null;
  hasMore: boolean;
  loadMore(): void;
  patch(key: string, change: Partial<SessionSummary>): void;
}

/** Loads the catalog for a source filter. */
export function useSessions(source: readonly Source[]): SessionsModel {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [next, setNext] = useState<number | null>(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const gate = useRef(createLatestGate());
  const filter = source.join(",");

  const load = useCallback((offset: number) => {
    const t = gate.current.begin();
    setLoading(true);
    fetchSessions({ limit: SESSION_PAGE, offset, source }, t.signal).then((page) => {
      if (!t.current()) return;
      setSessions((have) => {
        const base = offset === 0 ? [] : have;
        const seen = new Set(base.map((s) => s.key));
        return [...base, ...page.sessions.filter((s) => !seen.has(s.key))];
      });
      setTotal(page.total);
      setNext(page.next_offset);
      setError(null);
      setLoading(false);
    }, (err) => {
      if (isAbort(err) || !t.current()) return;
      setError((err as Error).message);
      setLoading(false);
    });
    // The filter string is the dependency; `source` is its array form.
  }, [filter]);

  useEffect(() => {
    load(0);
    return () => gate.current.cancel();
  }, [load]);

  return {
    sessions,
    total,
    loading,
    error,
    hasMore: next !== null,
    loadMore: () => {
      if (!loading && next !== null) load(next);
    },
    patch: (key, change) =>
      setSessions((have) => have.map((s) => (s.key === key ? { ...s, ...change } : s))),
  };
}
