/**
 * The sessions catalog, paged: the first page renders as soon as it arrives, and
 * `loadMore` appends the next (offset paging; the list view calls it from an
 * IntersectionObserver, so thousands of sessions load incrementally). `q` filters on the
 * server over the WHOLE catalog (every word must occur in a name, title, project, id or
 * source), debounced while typing; a filter change restarts from offset 0, and a late page
 * for an old filter is dropped (LatestGate). `patch` applies local edits (a rename)
 * without a refetch; `reload` starts over (after a delete or an undo).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { fetchSessions, type SessionSummary, type Source } from "../api_client.ts";
import { createLatestGate, isAbort } from "../lib/latest.ts";

/** Sessions per catalog page. */
export const SESSION_PAGE = 50;
/** Quiet time after a keystroke before the filter is asked for. */
export const FILTER_DEBOUNCE_MS = 150;

/** The catalog model. */
export interface SessionsModel {
  sessions: SessionSummary[];
  total: number | null;
  loading: boolean;
  error: string | null;
  hasMore: boolean;
  /** The filter the shown sessions answer (trimmed q, "" for the plain list). */
  shownQ: string;
  loadMore(): void;
  reload(): void;
  patch(key: string, change: Partial<SessionSummary>): void;
}

/** What to list. */
export interface SessionsQuery {
  source: readonly Source[];
  /** Server-side filter; "" or absent lists everything. */
  q?: string;
  /** Size of the first page. @default SESSION_PAGE */
  firstPage?: number;
  /** Nothing is fetched while false. @default true */
  enabled?: boolean;
}

/** Loads the catalog for a source filter and an optional text filter. */
export function useSessions(o: SessionsQuery): SessionsModel {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [next, setNext] = useState<number | null>(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [shownQ, setShownQ] = useState("");
  const gate = useRef(createLatestGate());
  const filter = o.source.join(",");
  const q = (o.q ?? "").trim();
  const enabled = o.enabled ?? true;
  const first = o.firstPage ?? SESSION_PAGE;

  const load = useCallback((offset: number) => {
    const t = gate.current.begin();
    setLoading(true);
    fetchSessions({
      limit: offset === 0 ? first : SESSION_PAGE,
      offset,
      source: o.source,
      q: q || undefined,
    }, t.signal).then((page) => {
      if (!t.current()) return;
      setSessions((have) => {
        const base = offset === 0 ? [] : have;
        const seen = new Set(base.map((s) => s.key));
        return [...base, ...page.sessions.filter((s) => !seen.has(s.key))];
      });
      setTotal(page.total);
      setNext(page.next_offset);
      setShownQ(q);
      setError(null);
      setLoading(false);
    }, (err) => {
      if (isAbort(err) || !t.current()) return;
      setError((err as Error).message);
      setLoading(false);
    });
    // The filter strings are the dependencies; `o.source` is filter's array form.
  }, [filter, q, first]);

  useEffect(() => {
    if (!enabled) {
      gate.current.cancel();
      return;
    }
    setLoading(true);
    // The plain list loads at once; a typed filter waits for a pause in the typing.
    const timer = setTimeout(() => load(0), q ? FILTER_DEBOUNCE_MS : 0);
    return () => {
      clearTimeout(timer);
      gate.current.cancel();
    };
  }, [load, enabled]);

  return {
    sessions,
    total,
    loading,
    error,
    hasMore: next !== null,
    shownQ,
    loadMore: () => {
      if (!loading && next !== null) load(next);
    },
    reload: () => load(0),
    patch: (key, change) =>
      setSessions((have) => have.map((s) => (s.key === key ? { ...s, ...change } : s))),
  };
}
