/**
 * The dashboard's only door to the daemon: every fetch and EventSource lives here, and
 * the response shapes are the server's own types, imported type-only (erased by the
 * bundler, so no server code reaches the browser). Requests are same-origin: the
 * HttpOnly cookie set by the tokenized URL authenticates them, so the token never
 * passes through this code or any URL it builds; POSTs carry the browser's Origin,
 * which the server checks. Errors: a non-2xx answer throws ApiError with the status
 * and the server's `error` code (410 cursor_expired, 429 busy with Retry-After, …);
 * an aborted request rejects with the fetch AbortError (see lib/latest.ts isAbort).
 */
import type {
  DetailEntry,
  LocateResult,
  SessionDetail,
  SessionList,
  SessionSummary,
} from "../lib/catalog/mod.ts";
import type {
  Coverage,
  SearchGroup,
  SearchHit,
  SearchResponse,
  Source,
  SourceCoverage,
} from "../lib/message_search/mod.ts";

export type {
  Coverage,
  DetailEntry,
  LocateResult,
  SearchGroup,
  SearchHit,
  SessionDetail,
  SessionList,
  SessionSummary,
  Source,
  SourceCoverage,
};

/** A message-search page as the route answers it (the engine's page plus coverage). */
export type SearchPage = SearchResponse & { coverage?: Coverage };

/** A non-2xx answer. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, {
    ...init,
    credentials: "same-origin",
    headers: { accept: "application/json", ...init.headers },
  });
  const body = await res.json().catch(() => null) as Record<string, unknown> | null;
  if (!res.ok) {
    const retry = Number(res.headers.get("retry-after"));
    throw new ApiError(
      typeof body?.message === "string" ? body.message : `Request failed: HTTP ${res.status}`,
      res.status,
      typeof body?.error === "string" ? body.error : "http_error",
      Number.isFinite(retry) && retry > 0 ? retry * 1000 : null,
    );
  }
  return body as T;
}

function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}

const sessionPath = (key: string) => `/api/session/${encodeURIComponent(key)}`;

/** The operations this daemon offers (feature detection: older daemons lack some). */
export async function fetchOperations(signal?: AbortSignal): Promise<Set<string>> {
  const r = await request<{ routes: { operation: string }[] }>("/api/routes", { signal });
  return new Set(r.routes.map((x) => x.operation));
}

/** One page of the catalog, newest first. */
export function fetchSessions(
  p: { limit: number; offset: number; source?: readonly Source[] },
  signal?: AbortSignal,
): Promise<SessionList> {
  const source = p.source?.length ? p.source.join(",") : undefined;
  return request(`/api/sessions${query({ limit: p.limit, offset: p.offset, source })}`, { signal });
}

/** The coverage block. */
export function fetchCoverage(signal?: AbortSignal): Promise<Coverage> {
  return request("/api/coverage", { signal });
}

/** Message-search parameters (the route's, minus the ones the dashboard never sets). */
export interface SearchParams {
  q: string;
  limit: number;
  cursor?: string | null;
  includeSuperseded: boolean;
  source?: readonly Source[];
  role?: readonly ("user" | "assistant")[];
}

/** One page of message search. */
export function searchMessages(p: SearchParams, signal?: AbortSignal): Promise<SearchPage> {
  const params = query({
    q: p.q,
    limit: p.limit,
    cursor: p.cursor,
    include_superseded: p.includeSuperseded,
    source: p.source?.length ? p.source.join(",") : undefined,
    role: p.role?.length ? p.role.join(",") : undefined,
  });
  return request(`/api/sessions/message-search${params}`, { signal });
}

/** A page of a session's detail; `locate` centers it on a hit. */
export function fetchDetail(
  key: string,
  p: { offset?: number; limit: number; locate?: string | null },
  signal?: AbortSignal,
): Promise<SessionDetail> {
  return request(`${sessionPath(key)}${query(p)}`, { signal });
}

/** Renames a session (null or "" clears the name); answers the stored name. */
export function renameSession(
  key: string,
  name: string | null,
): Promise<{ key: string; name: string | null }> {
  return request(`${sessionPath(key)}/name`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: name === "" ? null : name }),
  });
}

/** Handlers for {@link streamSession}. */
export interface StreamHandlers {
  /** A new session.jsonl line (its 1-based number and raw JSON text). */
  onLine(line: number, text: string): void;
  /** Connection state, for the "live" indicator. */
  onState(state: "open" | "reconnecting"): void;
}

const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30_000;

/**
 * Follows a native session's live stream from line `fromLine` on. The browser resumes
 * a dropped connection itself (Last-Event-ID); when it gives up (an HTTP error closes
 * the source) we reopen from the last line seen, backing off to RECONNECT_MAX_MS.
 * Returns the function that closes it for good.
 */
export function streamSession(key: string, fromLine: number, h: StreamHandlers): () => void {
  let last = fromLine;
  let es: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let delay = RECONNECT_MIN_MS;
  let closed = false;
  const open = () => {
    es = new EventSource(`${sessionPath(key)}/stream${query({ from_line: last })}`);
    es.onopen = () => {
      delay = RECONNECT_MIN_MS;
      h.onState("open");
    };
    es.onmessage = (ev) => {
      const n = Number(ev.lastEventId);
      if (Number.isInteger(n) && n > last) last = n;
      h.onLine(n, String(ev.data));
    };
    es.onerror = () => {
      h.onState("reconnecting");
      if (es?.readyState !== EventSource.CLOSED || closed) return;
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    };
  };
  open();
  return () => {
    closed = true;
    if (timer !== null) clearTimeout(timer);
    es?.close();
  };
}
