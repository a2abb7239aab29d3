/**
 * A remote (team) session's prose, paged: the first REMOTE_PAGE records on open, then
 * "load more" appends the next page. Pages come from the team database through
 * GET /api/team/session; a page answering a session other than the one now shown
 * (the route changed meanwhile) is dropped by the abort on unmount/change.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { fetchRemoteSession, type RemoteRecord, type RemoteSession } from "../api_client.ts";
import { isAbort } from "../lib/latest.ts";

/** Records per page of the remote view. */
export const REMOTE_PAGE = 100;

/** What the remote view shows. */
export interface RemoteModel {
  meta: RemoteSession["meta"] | null;
  records: RemoteRecord[];
  total: number;
  loading: boolean;
  error: string | null;
  loadMore(): void;
}

/** Pages `machine`'s session `key`. */
export function useRemoteSession(machine: string, key: string): RemoteModel {
  const [meta, setMeta] = useState<RemoteSession["meta"] | null>(null);
  const [records, setRecords] = useState<RemoteRecord[]>([]);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const ctrl = useRef<AbortController | null>(null);

  const load = (offset: number) => {
    ctrl.current?.abort();
    const c = ctrl.current = new AbortController();
    setLoading(true);
    fetchRemoteSession({ machine, key, offset, limit: REMOTE_PAGE }, c.signal).then((page) => {
      setMeta(page.meta);
      setTotal(page.total);
      setRecords((have) => offset === 0 ? page.records : [...have, ...page.records]);
      setError(null);
      setLoading(false);
    }, (err) => {
      if (isAbort(err)) return;
      setError((err as Error).message);
      setLoading(false);
    });
  };
  useEffect(() => {
    setMeta(null);
    setRecords([]);
    load(0);
    return () => ctrl.current?.abort();
  }, [machine, key]);
  return {
    meta,
    records,
    total,
    loading,
    error,
    loadMore: () => {
      if (!loading && records.length < total) load(records.length);
    },
  };
}
