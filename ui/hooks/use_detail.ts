/**
 * One session's detail: the first page (centered on the hit when a locator is given),
 * earlier/later pages around it, and, for a live native session (every status that may
 * still change: running, waiting — see lib/session_status.ts), the live tail: an
 * EventSource on /stream from the last line shown; each new line, and each status event
 * (a waiting or finishing session moves its status without writing a line), schedules
 * a refetch of the entries past the loaded end (the server renders rows — twins, sidecar
 * text, supersession — so the client never re-implements that). Every fetch also brings
 * the session (status badge) and the pending askHuman question. A new rollback cut
 * re-reads the loaded window, since it supersedes messages already on screen. The stream
 * closes when a refetch reports an ended status (that refetch already holds the final
 * rows: the server sends a status only after the lines written before it) or the view
 * unmounts. The open turn's row (its assistant message or `tool_calls` entry) keeps
 * gaining tool calls while the runner works, so the tail refetch starts at that row and
 * replaces it. Opened from a hit (`q`), the first answer also lists every hit of the
 * session (`hits`); loadAround(index) moves the loaded window onto an entry elsewhere.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import {
  type ActivityStatus,
  ApiError,
  type DetailEntry,
  fetchDetail,
  type LocateResult,
  type PendingQuestion,
  type SessionSummary,
  streamSession,
} from "../api_client.ts";
import { isAbort } from "../lib/latest.ts";
import { isLiveStatus } from "../lib/session_status.ts";

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
  /** The askHuman question a live native session waits on. */
  pending: PendingQuestion | null;
  /** With `q`: every matching entry's index (the first answer's; see lib/catalog). */
  hits?: number[];
  hits_complete?: boolean;
  /** External sessions: whether their tool calls could be read (null: not said). */
  activity: ActivityStatus | null;
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
  /** Makes entry `index` part of the loaded window (a page around it when it is not). */
  loadAround(index: number): Promise<void>;
  patchSession(change: Partial<SessionSummary>): void;
}

/** Loads `key`, anchored on `locate` when given; `q` asks for the session's hit list. */
export function useDetail(
  key: string,
  locate: string | null,
  q: string | null = null,
): DetailModel {
  const [data, setData] = useState<DetailData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"earlier" | "later" | null>(null);
  const [live, setLive] = useState<"off" | "open" | "reconnecting">("off");
  const ref = useRef(data);
  ref.current = data;

  useEffect(() => {
    const ctrl = new AbortController();
    const first = (loc: string | null, fallback: LocateResult | null) =>
      fetchDetail(key, { limit: DETAIL_PAGE, locate: loc, q }, ctrl.signal).then((d) =>
        setData({
          ...d,
          locate: d.locate ?? fallback,
          pending: d.pending_question ?? null,
          activity: d.activity ?? null,
        })
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

  const following = data?.session.source === "intendant" && isLiveStatus(data.session.status);
  useEffect(() => {
    if (!following) return;
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
    const schedule = () => {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(refresh, TAIL_DEBOUNCE_MS);
    };
    const close = streamSession(key, Math.max(0, ...lines), {
      onLine: schedule,
      onStatus: schedule,
      onState: setLive,
    });
    return () => {
      close();
      if (timer !== null) clearTimeout(timer);
      setLive("off");
    };
  }, [key, following]);

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
          pending: r.pending_question ?? null,
          activity: r.activity ?? cur.activity,
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
    loadAround: async (index) => {
      const d = ref.current;
      if (!d || (index >= d.offset && index < d.offset + d.entries.length)) return;
      const start = Math.min(index - Math.floor(DETAIL_PAGE / 2), d.total - DETAIL_PAGE);
      const r = await fetchDetail(key, { offset: Math.max(0, start), limit: DETAIL_PAGE });
      setData((cur) =>
        cur && {
          ...cur,
          session: r.session,
          total: r.total,
          offset: r.offset,
          entries: r.entries,
          pending: r.pending_question ?? null,
          activity: r.activity ?? cur.activity,
        }
      );
    },
    patchSession: (change) =>
      setData((cur) => cur && { ...cur, session: { ...cur.session, ...change } }),
  };
}

/** Entries a live refetch re-reads before the loaded end, at most. */
const TAIL_REREAD = 200;

/** Index of the open turn's row (the last assistant message or tool_calls entry), if loaded. */
function openTurnRow(entries: readonly DetailEntry[]): number | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === "tool_calls" || (e.kind === "message" && e.role === "assistant")) return e.index;
  }
  return null;
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
  // At the tail, re-read from the open turn's row: it may have gained tool calls.
  const from = Math.max(openTurnRow(d.entries) ?? end, end - TAIL_REREAD, d.offset);
  // Not at the tail: only learn the new total (the "load later" button grows).
  const r = await fetchDetail(
    key,
    atTail
      ? { offset: from, limit: Math.min(1000, end - from + DETAIL_PAGE) }
      : { offset: d.total, limit: 1 },
  );
  const cut = atTail && r.entries.some((e) => e.kind === "cut" && e.index >= end);
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
      : atTail && cur.offset <= from
      ? [...cur.entries.filter((e) => e.index < from), ...r.entries]
      : atTail
      ? [...cur.entries, ...r.entries.filter((e) => e.index >= cur.offset + cur.entries.length)]
      : cur.entries;
    return {
      ...cur,
      session: r.session,
      total: r.total,
      entries,
      pending: r.pending_question ?? null,
      activity: r.activity ?? cur.activity,
    };
  });
}
