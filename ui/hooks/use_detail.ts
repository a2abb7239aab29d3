/**
 * One session's detail: the first page (centered on the hit when a locator is given),
 * earlier/later pages around it, and, for a running native session, the live tail: an
 * EventSource on /stream from the last line shown; each new line schedules a refetch
 * of the entries past the loaded end (the server renders rows — twins, sidecar text,
 * supersession — so the client never re-implements that). A new rollback cut re-reads
 * the loaded window, since it supersedes messages already on screen. The stream closes
 * when the session stops running or the view unmounts.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import {
  ApiError,
  type DetailEntry,
  fetchDetail,
  type LocateResult,
  type SessionSummary,
  streamSession,
} from "../api_client.ts";
import { isAbort } from "../lib/latest.ts";

/** Entries per detail page. */
export const DETAIL_PAGE = 100;
const EXPORT_PAGE = 1000;
const TAIL_DEBOUNCE_MS = 150;

/** The loaded window. */
export interface DetailData {
  session: SessionSummary;
  entries: DetailEntry[];
  /** Full-list index of entries[0]. */
  offset: number;
  total: number;
  locate: LocateResult | null;
}

/** The detail model. */
export interface DetailModel {
  data: DetailData | null;
  error: string | null;
  busy: "earlier" | "later" | null;
  live: "off" | "open" | "reconnecting";
  loadEarlier(): void;
  loadLater(): void;
  /** Every entry of the session (fetching what is not loaded). */
  loadAll(): Promise<DetailEntry[]>;
  patchSession(change: Partial<SessionSummary>): void;
}

/** Loads `key`, anchored on `locate` when given. */
export function useDetail(key: string, locate: string | null): DetailModel {
  const [data, setData] = useState<DetailData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"earlier" | "later" | null>(null);
  const [live, setLive] = useState<"off" | "open" | "reconnecting">("off");
  const ref = useRef(data);
  ref.current = data;

  useEffect(() => {
    const ctrl = new AbortController();
    const first = (loc: string | null, fallback: LocateResult | null) =>
      fetchDetail(key, { limit: DETAIL_PAGE, locate: loc }, ctrl.signal).then((d) =>
        setData({ ...d, locate: d.locate ?? fallback })
      );
    first(locate, null).catch((err) => {
      if (isAbort(err)) return;
      // A link with a malformed locator still opens the session, unanchored.
      if (err instanceof ApiError && err.code === "bad_locate") {
        return first(null, { state: "unavailable", reason: err.message });
      }
      throw err;
    }).catch((err) => !isAbort(err) && setError((err as Error).message));
    return () => ctrl.abort();
  }, [key, locate]);

  const running = data?.session.source === "intendant" && data.session.status === "running";
  useEffect(() => {
    if (!running) return;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let inflight = false;
    let again = false;
    const refresh = async () => {
      if (inflight) return void (again = true);
      inflight = true;
      try {
        await refreshTail(key, ref.current, setData);
      } catch (err) {
        if (!isAbort(err)) setError((err as Error).message);
      }
      inflight = false;
      if (again) {
        again = false;
        void refresh();
      }
    };
    const lines = ref.current?.entries.map((e) => e.line ?? 0) ?? [];
    const close = streamSession(key, Math.max(0, ...lines), {
      onLine: () => {
        if (timer !== null) clearTimeout(timer);
        timer = setTimeout(refresh, TAIL_DEBOUNCE_MS);
      },
      onState: setLive,
    });
    return () => {
      close();
      if (timer !== null) clearTimeout(timer);
      setLive("off");
    };
  }, [key, running]);

  const page = async (which: "earlier" | "later") => {
    const d = ref.current;
    if (!d || busy) return;
    const end = d.offset + d.entries.length;
    const offset = which === "earlier" ? Math.max(0, d.offset - DETAIL_PAGE) : end;
    const limit = which === "earlier" ? d.offset - offset : DETAIL_PAGE;
    if (limit <= 0) return;
    setBusy(which);
    try {
      const r = await fetchDetail(key, { offset, limit });
      setData((cur) =>
        cur && {
          ...cur,
          session: r.session,
          total: r.total,
          offset: which === "earlier" ? r.offset : cur.offset,
          entries: which === "earlier"
            ? [...r.entries, ...cur.entries]
            : [...cur.entries, ...r.entries],
        }
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };

  return {
    data,
    error,
    busy,
    live,
    loadEarlier: () => void page("earlier"),
    loadLater: () => void page("later"),
    loadAll: async () => {
      const d = ref.current;
      if (!d) return [];
      if (d.offset === 0 && d.entries.length >= d.total) return d.entries;
      const all: DetailEntry[] = [];
      for (let offset = 0; offset < (ref.current?.total ?? 0); offset += EXPORT_PAGE) {
        all.push(...(await fetchDetail(key, { offset, limit: EXPORT_PAGE })).entries);
      }
      return all;
    },
    patchSession: (change) =>
      setData((cur) => cur && { ...cur, session: { ...cur.session, ...change } }),
  };
}

/** Fetches what the live stream announced and merges it into the loaded window. */
async function refreshTail(
  key: string,
  d: DetailData | null,
  set: (f: (cur: DetailData | null) => DetailData | null) => void,
): Promise<void> {
  if (!d) return;
  const end = d.offset + d.entries.length;
  const atTail = end >= d.total;
  // Not at the tail: only learn the new total (the "load later" button grows).
  const r = await fetchDetail(
    key,
    atTail ? { offset: end, limit: DETAIL_PAGE } : { offset: d.total, limit: 1 },
  );
  const cut = atTail && r.entries.some((e) => e.kind === "cut");
  const window = cut
    ? await fetchDetail(key, {
      offset: d.offset,
      limit: Math.min(1000, end - d.offset + r.entries.length),
    })
    : null;
  set((cur) => {
    if (!cur) return cur;
    const entries = window
      ? window.entries
      : atTail
      ? [...cur.entries, ...r.entries.filter((e) => e.index >= cur.offset + cur.entries.length)]
      : cur.entries;
    return { ...cur, session: r.session, total: r.total, entries };
  });
}
