/**
 * The dashboard's only door to the daemon: every fetch and EventSource lives here, and
 * the response shapes are the server's own types, imported type-only (erased by the
 * bundler, so no server code reaches the browser). Requests are same-origin: the
 * HttpOnly cookie set by the tokenized URL authenticates them, so the token never
 * passes through this code or any URL it builds; POSTs carry the browser's Origin,
 * which the server checks. Errors: a non-2xx answer throws ApiError with the status
 * and the server's `error` code (410 cursor_expired, 429 busy with Retry-After, …);
 * an aborted request rejects with the fetch AbortError (see lib/latest.ts isAbort).
 * The catalog and detail reads retry a 429 themselves (lib/busy_retry.ts: after its
 * Retry-After, a few times) — every heavy route has a small cap and refuses at once
 * rather than queueing; message search retries in its lane (lib/search_lane.ts).
 * A 401 (no valid cookie: the token was rotated, or the page was opened without its link)
 * is also reported, here and only here, to the `onAuthLost` subscribers: the app then
 * replaces itself with the server's token help instead of showing one error per panel.
 */
import type {
  ActivityStatus,
  DetailEntry,
  LocateResult,
  PendingQuestion,
  SessionDetail,
  SessionList,
  SessionSummary,
  ToolCallEntry,
  ToolOutput,
} from "../lib/catalog/mod.ts";
import type {
  Coverage,
  DegradedSessions,
  GroupRelevance,
  QueryTerms,
  SearchGroup,
  SearchHit,
  SearchResponse,
  SearchSort,
  SearchSuggestion,
  SearchSuggestions,
  Source,
  SourceCoverage,
  SourceLocation,
} from "../lib/message_search/mod.ts";
import type { SessionStatus } from "../lib/session_log/mod.ts";
import type { CoverageView, SweepProgressView, TokenHelp } from "../lib/server/mod.ts";
import { withBusyRetry } from "./lib/busy_retry.ts";

export type {
  ActivityStatus,
  Coverage,
  CoverageView,
  DegradedSessions,
  DetailEntry,
  GroupRelevance,
  LocateResult,
  PendingQuestion,
  QueryTerms,
  SearchGroup,
  SearchHit,
  SearchSort,
  SearchSuggestion,
  SearchSuggestions,
  SessionDetail,
  SessionList,
  SessionStatus,
  SessionSummary,
  Source,
  SourceCoverage,
  SourceLocation,
  SweepProgressView,
  TokenHelp,
  ToolCallEntry,
  ToolOutput,
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

const authListeners = new Set<(help: TokenHelp) => void>();
let authLost: TokenHelp | null = null;

/**
 * Calls `fn` (once per subscription, at once if it already happened) when a request is
 * refused for want of a valid token. Returns the unsubscribe function.
 */
export function onAuthLost(fn: (help: TokenHelp) => void): () => void {
  authListeners.add(fn);
  if (authLost) fn(authLost);
  return () => void authListeners.delete(fn);
}

function reportAuthLost(body: Record<string, unknown> | null): void {
  if (authLost) return;
  // An older daemon answers a bare {error, message}: keep its words, add the command.
  const text = (k: string, fallback: string): string => {
    const v = body?.[k];
    return typeof v === "string" ? v : fallback;
  };
  const message = text("message", "The access token is not valid");
  authLost = {
    error: "unauthorized",
    reason: body?.reason === "missing" ? "missing" : "invalid",
    title: text("title", "This link is no longer valid"),
    lead: text("lead", message),
    message,
    command: text("command", "intendant url"),
    daemon_json: typeof body?.daemon_json === "string" ? body.daemon_json : null,
  };
  for (const fn of [...authListeners]) fn(authLost);
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, {
    ...init,
    credentials: "same-origin",
    headers: { accept: "application/json", ...init.headers },
  });
  const body = await res.json().catch(() => null) as Record<string, unknown> | null;
  if (res.status === 401) reportAuthLost(body);
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

/** A GET that retries busy (429) answers, for the routes whose caps a page load can hit. */
function requestRetrying<T>(path: string, signal?: AbortSignal): Promise<T> {
  return withBusyRetry(() => request<T>(path, { signal }), {
    signal,
    busyOf: (err) =>
      err instanceof ApiError && err.status === 429
        ? { busy: true, retryAfterMs: err.retryAfterMs }
        : { busy: false, retryAfterMs: null },
  });
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

/** One page of the catalog, newest first; `q` filters it server-side (every word must occur). */
export function fetchSessions(
  p: { limit: number; offset: number; source?: readonly Source[]; q?: string },
  signal?: AbortSignal,
): Promise<SessionList> {
  const source = p.source?.length ? p.source.join(",") : undefined;
  const params = query({ limit: p.limit, offset: p.offset, source, q: p.q });
  return requestRetrying(`/api/sessions${params}`, signal);
}

/** The coverage block, with the first sweep's progress and where each source is looked for. */
export function fetchCoverage(signal?: AbortSignal): Promise<CoverageView> {
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
  /**
   * "team": the team database (only set when the daemon has a team); "archive": sessions
   * older than the message window.
   */
  scope?: "team" | "archive";
  /** Team scope: only these machines (empty: all). */
  machines?: readonly string[];
  /** The page order; absent (or newest) sends no `sort`, the request newest always was. */
  sort?: SearchSort;
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
    scope: p.scope,
    machine: p.scope === "team" && p.machines?.length ? p.machines.join(",") : undefined,
    sort: p.sort === "relevance" ? p.sort : undefined,
  });
  return request(`/api/sessions/message-search${params}`, { signal });
}

// ---- Deep Search (issue 29): tool output and reasoning too, every source's files.
import type { DeepHit, DeepScanned, DeepSearchResult } from "../lib/catalog/types.ts";
export type { DeepHit, DeepScanned, DeepSearchResult };

/** One Deep Search page, bounded by `maxMs` so a pager shows progress. */
export function deepSearchPage(
  p: { q: string; cursor: string | null; limit: number; maxMs: number },
  signal?: AbortSignal,
): Promise<DeepSearchResult> {
  const params = query({ q: p.q, cursor: p.cursor, limit: p.limit, max_ms: p.maxMs });
  return request(`/api/sessions/search${params}`, { signal });
}

/** A page of a session's detail; `locate` centers it on a hit. */
export function fetchDetail(
  key: string,
  p: { offset?: number; limit: number; locate?: string | null; q?: string | null },
  signal?: AbortSignal,
): Promise<SessionDetail> {
  return requestRetrying(`${sessionPath(key)}${query(p)}`, signal);
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

/** Answers a live session's pending askHuman; `questionId` refuses (409) if it changed. */
export function answerQuestion(
  key: string,
  p: { text: string; questionId?: string },
): Promise<{ key: string; question_id: string }> {
  return postJson(`${sessionPath(key)}/answer`, { text: p.text, question_id: p.questionId });
}

/** Queues a steer for a live session's next turn. */
export function steerSession(
  key: string,
  text: string,
): Promise<{ key: string; steer_id: string; queued: true }> {
  return postJson(`${sessionPath(key)}/steer`, { text });
}

/** Rolls a session's conversation back to `toSeq`: queued while live, else applied. */
export function rollbackSession(
  key: string,
  toSeq: number,
): Promise<{ key: string; to_seq: number; applied: boolean }> {
  return postJson(`${sessionPath(key)}/rollback`, { to_seq: toSeq });
}

function postJson<T>(path: string, body: unknown): Promise<T> {
  return request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Handlers for {@link streamSession}. */
export interface StreamHandlers {
  /** A new session.jsonl line (its 1-based number and raw JSON text). */
  onLine(line: number, text: string): void;
  /** The session's status, at connect and on every change (waiting, running, completed…). */
  onStatus?(status: string): void;
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
    es.addEventListener("status", (ev) => {
      const status = (JSON.parse(String((ev as MessageEvent).data)) as { status?: unknown }).status;
      if (typeof status === "string") h.onStatus?.(status);
    });
    es.onerror = () => {
      h.onState("reconnecting");
      if (es?.readyState !== EventSource.CLOSED || closed) return;
      // EventSource hides the status that closed it: one plain request finds out whether
      // it was the token (a 401 then reaches onAuthLost like any other).
      void request("/api/routes").catch(() => {/* reported through onAuthLost or retried */});
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

// ---- The trash (delete, Undo). Types are the catalog's, imported type-only here so
// this block stays self-contained at the end of the file.
import type { RestoredSession, TrashedSession, TrashEntry } from "../lib/catalog/mod.ts";
export type { RestoredSession, TrashedSession, TrashEntry };

/** Moves a native session to the trash (the server does not ask: the caller confirmed). */
export function trashSession(key: string): Promise<TrashedSession & { deleted: string }> {
  return request(sessionPath(key), { method: "DELETE" });
}

/** Brings a trashed session back (the Undo of {@link trashSession}). */
export function restoreSession(key: string): Promise<RestoredSession & { restored: string }> {
  return request(`${sessionPath(key)}/restore`, { method: "POST" });
}

/** What is in the trash, most recent deletion first. */
export function fetchTrash(signal?: AbortSignal): Promise<{ entries: TrashEntry[] }> {
  return request("/api/trash", { signal });
}

// ---- Team scope (issue 19): a team search page's groups name their machine; a remote
// session is another machine's indexed prose from the team database. Types are the
// team subsystem's, imported type-only (nothing of it reaches the browser).
import type {
  MachineStatus,
  RemoteRecord,
  RemoteSession,
  TeamSearchGroup,
} from "../lib/team/mod.ts";
export type { MachineStatus, RemoteRecord, RemoteSession, TeamSearchGroup };

/** What GET /api/team/status answers: whether team scope exists, and the team's machines. */
export type TeamStatusAnswer =
  | { configured: false; hint: string }
  | { configured: true; machine: string; machines: MachineStatus[]; revision: number };

/** The daemon's team, or `configured: false`; a 503 (database down) throws ApiError. */
export function fetchTeamStatus(signal?: AbortSignal): Promise<TeamStatusAnswer> {
  return request("/api/team/status", { signal });
}

/** One page of a remote session's prose. */
export function fetchRemoteSession(
  p: { machine: string; key: string; offset: number; limit: number },
  signal?: AbortSignal,
): Promise<RemoteSession> {
  return request(`/api/team/session${query(p)}`, { signal });
}

// ---- The transcript vault (issue 29): what is kept, the agents' cleanups, restore.
import type { VaultReport } from "../lib/vault/mod.ts";
export type { VaultReport };

/** The vault's report (GET /api/vault); 404 `vault_off` when INTENDANT_VAULT=off. */
export function fetchVault(signal?: AbortSignal): Promise<VaultReport> {
  return request("/api/vault", { signal });
}

/** What a restore wrote back, and how to resume the session. */
export interface VaultRestored {
  key: string;
  files: { path: string; bytes: number }[];
  resume: string;
  note: string | null;
}

/** Writes a kept session back where its agent reads it (never over a file). */
export function restoreFromVault(key: string): Promise<VaultRestored> {
  return postJson("/api/vault/restore", { session: key });
}
