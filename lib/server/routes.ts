/**
 * The declared route table: every API route with its operation name, body policy and
 * handler. The landing page, `/api/routes` (which the dashboard reads to decide which
 * features this daemon offers: an older daemon without message search just hides the
 * lane) and the app are all derived from this one list.
 */
import type { Context } from "hono";
import { stream as honoStream } from "hono/streaming";
import type {
  Indexer,
  SearchRequest,
  SearchResponse,
  SourceLocation,
  Store,
} from "../message_search/mod.ts";
import { type Freshness, normalizeRequest } from "../message_search/mod.ts";
import {
  type CatalogDeps,
  deepSearch,
  finishInterruptedDeletes,
  listSessions,
  nativeReplay,
  resolveSessionKey,
  sessionDetail,
  sessionReportStream,
} from "../catalog/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { renameNativeSession, setOverlayName } from "../session_log/mod.ts";
import {
  AnswerBody,
  DeepSearchParams,
  DetailParams,
  MessageSearchParams,
  parseQuery,
  RenameBody,
  ReplayParams,
  RollbackBody,
  searchRequestOf,
  SessionListParams,
  SteerBody,
  StreamParams,
} from "./params.ts";
import type { SearchGate } from "./search_gate.ts";
import {
  createHeavyGates,
  gated,
  gatedStream,
  type HeavyGates,
  holdWhileStreaming,
} from "./heavy_gates.ts";
import { liveStream } from "./live_stream.ts";
import { coverageFor, coverageView, freshnessOf } from "./coverage_route.ts";
import type { SweepProgressView } from "./sweep_progress.ts";
import { answerRoute, rollbackRoute, steerRoute } from "./control_route.ts";
import { deleteRoute, restoreRoute, trashListRoute } from "./trash_route.ts";
import { TRASH_KEEP_DAYS, type TrashDeps } from "../catalog/mod.ts";
import { archiveMessageSearch } from "./archive_route.ts";
import { searchScope, TEAM_ROUTES, type TeamDeps, teamMessageSearch } from "./team_routes.ts";
import { VAULT_ROUTES, type VaultDeps } from "./vault_routes.ts";

/** What handlers may use. */
export interface RouteDeps {
  windowDays: number | null;
  engine: { search(req: SearchRequest): Promise<SearchResponse> };
  indexer: Pick<
    Indexer,
    | "sweep"
    | "ready"
    | "lastSweepAtMs"
    | "lastReport"
    | "unpublishedSkips"
    | "pendingDamage"
  >;
  /**
   * How fresh the index is, and the explicit "sweep first" (`refresh=1`): the daemon's
   * freshness scheduler. Absent (an app built without one), freshness is the last sweep's
   * start and a refresh is one indexer sweep.
   */
  freshness?: { status(): Freshness; refresh(): Promise<unknown> };
  store: Store;
  catalog: CatalogDeps;
  /** The trash: delete moves a native session there (tombstone first), restore brings it back. */
  trash: TrashDeps;
  /** The sweep in progress, per source (the coverage endpoint shows it while building). */
  sweepProgress?: () => SweepProgressView | null;
  /** Where each source is looked for (an empty index says so). */
  locations?: () => Promise<SourceLocation[]>;
  gate?: SearchGate;
  /** Caps of the heavy routes (heavy_gates.ts). @default createHeavyGates() per app */
  heavyGates?: HeavyGates;
  /** The transcript vault: absent (INTENDANT_VAULT=off), its routes answer 404 vault_off. */
  vault?: VaultDeps;
  /** Team search (`--team`): absent, the team routes answer "not configured". */
  team?: TeamDeps;
}

/**
 * The heavy routes' gates of this app: the ones injected, else made once. `d` is the
 * app's own copy of its deps (created once per app in createApp), so one set per app.
 */
function heavy(d: RouteDeps): HeavyGates {
  return d.heavyGates ??= createHeavyGates();
}

/** One route. */
export interface RouteDef {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** Operation name (stable; the dashboard's feature detection keys on it). */
  operation: string;
  body: "none" | "json";
  summary: string;
  handler(c: Context, d: RouteDeps): Promise<Response> | Response;
}

const RETRY_AFTER_S = "1";

/** One Deep Search page (lib/catalog deep_search.ts), in a heavy-work slot. */
function deepSearchRoute(c: Context, d: RouteDeps): Promise<Response> {
  const p = parseQuery(DeepSearchParams, new URL(c.req.url));
  return gated(c, heavy(d), "deep", async () =>
    c.json(
      await deepSearch(d.catalog, {
        q: p.q,
        cursor: p.cursor ?? null,
        limit: p.limit,
        maxMs: p.max_ms,
      }),
    ));
}

async function messageSearch(c: Context, d: RouteDeps): Promise<Response> {
  const url = new URL(c.req.url);
  if (url.searchParams.get("scope") === "archive") return archiveMessageSearch(c, d);
  if (url.searchParams.get("scope") === "deep") return deepSearchRoute(c, d);
  if (searchScope(url) === "team") return teamMessageSearch(c, d);
  url.searchParams.delete("scope"); // "local", said explicitly
  const refresh = takeRefresh(url);
  const p = parseQuery(MessageSearchParams, url);
  const req: SearchRequest = searchRequestOf(p);
  // The engine's own rules first (F7 in tests/RELIABILITY.md): a request it refuses (a
  // one-character query, too many terms…) is a 400 before any sweep or search slot.
  normalizeRequest(req);
  // Never a sweep before answering unless the caller asked (issue 28): the watcher keeps
  // the index fresh, and the answer says how fresh. A refresh runs outside the search
  // slots, so one caller's sweep never holds another's search.
  if (refresh) await (d.freshness ? d.freshness.refresh() : d.indexer.sweep());
  const r = await d.gate!.run(async () => {
    const res = await d.engine.search(req);
    return { ...res, freshness: freshnessOf(d), coverage: await coverageFor(d) };
  });
  if (!r) {
    return c.json({ error: "busy", message: "Too many searches in flight; retry shortly" }, 429, {
      "Retry-After": RETRY_AFTER_S,
    });
  }
  return c.json(r.value);
}

/** `refresh=1|true` (sweep first): taken out of the strict parameter set, like `scope`. */
function takeRefresh(url: URL): boolean {
  const v = url.searchParams.get("refresh");
  url.searchParams.delete("refresh");
  if (v === null || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw new InvalidInputError(`Invalid refresh "${v.slice(0, 20)}": expected 1 or 0`);
}

/** Ids come from the network: refuse anything outside the key grammar before any lookup. */
function idParam(c: Context): string {
  const id = c.req.param("id") ?? "";
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id) || id.includes("..")) {
    throw new InvalidInputError(`Invalid session id`);
  }
  return id;
}

/** The request's JSON body; a body that is not JSON is a 400 naming the expected shape. */
function jsonBody(c: Context, shape: string): Promise<unknown> {
  return c.req.json().catch(() => {
    throw new InvalidInputError(`Expected a JSON body ${shape}`);
  });
}

async function nativeDir(c: Context, d: RouteDeps): Promise<{ sessionId: string; dir: string }> {
  const s = await resolveSessionKey(d.catalog, idParam(c));
  if (s.source !== "intendant" || !s.dir) {
    throw new InvalidInputError(
      `Only native sessions have a live log; use /api/session/{id} for "${s.key}"`,
    );
  }
  return { sessionId: s.session_id, dir: s.dir };
}

export const ROUTES: readonly RouteDef[] = [
  {
    method: "GET",
    path: "/api/routes",
    operation: "api_routes",
    body: "none",
    summary: "this table: which operations this daemon offers",
    handler: (c) =>
      c.json({
        routes: ROUTES.map(({ method, path, operation, body, summary }) => ({
          method,
          path,
          operation,
          body,
          summary,
        })),
      }),
  },
  {
    method: "GET",
    path: "/api/sessions/message-search",
    operation: "api_sessions_message_search",
    body: "none",
    summary:
      "full-text search over every agent's messages (q, limit, cursor, include_superseded, source, role, project, since, until, complete, sort=newest|relevance; scope=team with machine=a,b searches the team database; scope=archive searches sessions older than the window; scope=deep is Deep Search)",
    handler: messageSearch,
  },
  {
    method: "GET",
    path: "/api/sessions/search",
    operation: "api_sessions_deep_search",
    body: "none",
    summary:
      "Deep Search (also message-search?scope=deep): exhaustive paged scan of every source's files and the vault's copies, tool output and reasoning included (q, cursor, limit, max_ms); each page says what it scanned",
    handler: deepSearchRoute,
  },
  {
    method: "GET",
    path: "/api/sessions",
    operation: "api_sessions_list",
    body: "none",
    summary: "the catalog: native and external sessions, names overlaid, newest first, paged",
    handler: (c, d) => {
      const p = parseQuery(SessionListParams, new URL(c.req.url));
      return gated(c, heavy(d), "catalog", async () => {
        // A delete another process left half done (H9) is finished before listing, so the
        // list never shows a session search cannot find.
        await finishInterruptedDeletes(d.trash);
        return c.json(await listSessions(d.catalog, p));
      });
    },
  },
  {
    method: "GET",
    path: "/api/coverage",
    operation: "api_coverage",
    body: "none",
    summary:
      "what the message index holds, per source (building until the first sweep, with its progress), and where each source is looked for",
    handler: async (c, d) => c.json(await coverageView(d)),
  },
  {
    method: "GET",
    path: "/api/session/:id",
    operation: "api_session_detail",
    body: "none",
    summary:
      "paged session detail; ?locate=<locator> centers the page on a hit (resolved | stale | unavailable); ?q=<query> lists every matching entry's index (hits)",
    handler: (c, d) => {
      const p = parseQuery(DetailParams, new URL(c.req.url));
      const id = idParam(c);
      return gated(c, heavy(d), "detail", async () => {
        const s = await resolveSessionKey(d.catalog, id);
        return c.json(
          await sessionDetail(d.catalog, s.key, {
            offset: p.offset,
            limit: p.limit,
            locate: p.locate ?? null,
            q: p.q ?? null,
          }),
        );
      });
    },
  },
  {
    method: "GET",
    path: "/api/session/:id/replay",
    operation: "api_session_replay",
    body: "none",
    summary: "native session.jsonl as outbound entries, a replay_start marker first, paged",
    handler: (c, d) => {
      const p = parseQuery(ReplayParams, new URL(c.req.url));
      idParam(c);
      return gated(c, heavy(d), "replay", async () => {
        const { dir, sessionId } = await nativeDir(c, d);
        // Paged through the spine index: only this page's lines are parsed.
        return c.json(
          await nativeReplay(dir, sessionId, { offset: p.offset ?? 0, limit: p.limit ?? 1000 }),
        );
      });
    },
  },
  {
    method: "GET",
    path: "/api/session/:id/stream",
    operation: "api_session_stream",
    body: "none",
    summary:
      "live Server-Sent Events of a native session's new events (from_line, Last-Event-ID), its status changes (event: status) and lines that are not JSON or too long (event: skipped)",
    handler: async (c, d) => {
      const p = parseQuery(StreamParams, new URL(c.req.url));
      const { dir } = await nativeDir(c, d);
      const last = Number(c.req.header("last-event-id") ?? "");
      const fromLine = Number.isInteger(last) && last > 0 ? last : p.from_line ?? 0;
      c.header("Content-Type", "text/event-stream; charset=utf-8");
      c.header("Cache-Control", "no-store");
      c.header("X-Accel-Buffering", "no");
      return honoStream(c, async (s) => {
        // The stream's own abort (client gone), not request.signal, whose legacy semantics
        // also fire on successful responses.
        const ac = new AbortController();
        s.onAbort(() => ac.abort());
        await s.pipe(liveStream({ dir, fromLine, signal: ac.signal }));
      });
    },
  },
  {
    method: "POST",
    path: "/api/session/:id/name",
    operation: "api_session_rename",
    body: "json",
    summary: "rename a session: native names live in its meta, external ones in the overlay",
    handler: async (c, d) => {
      const body = RenameBody.parse(
        await c.req.json().catch(() => {
          throw new InvalidInputError('Expected a JSON body {"name": string | null}');
        }),
      );
      const s = await resolveSessionKey(d.catalog, idParam(c));
      const name = s.source === "intendant"
        ? (await renameNativeSession(d.catalog.logsDir, s.session_id, body.name)).name
        : await setOverlayName(d.catalog.namesPath, {
          source: s.source,
          sessionId: s.session_id,
          name: body.name,
        });
      return c.json({ key: s.key, name });
    },
  },
  {
    method: "POST",
    path: "/api/session/:id/answer",
    operation: "api_session_answer",
    body: "json",
    summary:
      'answer the askHuman a live native session waits on ({"text", "question_id"?}), as `ctl answer`',
    handler: async (c, d) => {
      const body = AnswerBody.parse(await jsonBody(c, '{"text": string}'));
      return answerRoute(c, d.catalog, idParam(c), body);
    },
  },
  {
    method: "POST",
    path: "/api/session/:id/steer",
    operation: "api_session_steer",
    body: "json",
    summary: 'queue a steer for a live native session\'s next turn ({"text"}), as `ctl steer`',
    handler: async (c, d) => {
      const body = SteerBody.parse(await jsonBody(c, '{"text": string}'));
      return steerRoute(c, d.catalog, idParam(c), body);
    },
  },
  {
    method: "POST",
    path: "/api/session/:id/rollback",
    operation: "api_session_rollback",
    body: "json",
    summary:
      'cut a native conversation after a seq ({"to_seq"}): queued while live, applied at once when ended',
    handler: async (c, d) => {
      const body = RollbackBody.parse(await jsonBody(c, '{"to_seq": number}'));
      return rollbackRoute(c, d.catalog, idParam(c), body);
    },
  },
  {
    method: "DELETE",
    path: "/api/session/:id",
    operation: "api_session_delete",
    body: "none",
    summary:
      `move a native session to the trash (full id or 8+ character prefix; its shard is tombstoned first); restorable for ${TRASH_KEEP_DAYS} days`,
    handler: (c, d) => deleteRoute(c, d.trash, idParam(c)),
  },
  {
    method: "POST",
    path: "/api/session/:id/restore",
    operation: "api_session_restore",
    body: "none",
    summary:
      "bring a session back from the trash (the dashboard's Undo); lifts its tombstone so the next sweep re-indexes it",
    handler: (c, d) => restoreRoute(c, d.trash, idParam(c)),
  },
  {
    method: "GET",
    path: "/api/trash",
    operation: "api_trash_list",
    body: "none",
    summary: "deleted sessions in the trash, most recent first, with when each expires",
    handler: (c, d) => trashListRoute(c, d.trash),
  },
  {
    method: "GET",
    path: "/api/session/:id/report",
    operation: "api_session_report",
    body: "none",
    summary: "download the native session directory (daemon.log included) as a zip",
    handler: (c, d) => {
      const id = idParam(c);
      // Streamed: the slot is held until the download ends (or stalls, or is cancelled).
      return gatedStream(c, heavy(d), "report", async (release) => {
        const s = await resolveSessionKey(d.catalog, id);
        const { sessionId, stream } = await sessionReportStream(d.catalog, s.key);
        return c.body(holdWhileStreaming(stream, release), 200, {
          "Content-Type": "application/zip",
          "Content-Disposition": `attachment; filename="intendant-${
            sessionId.replace(/[^A-Za-z0-9_-]/g, "_")
          }.zip"`,
        });
      });
    },
  },
  ...TEAM_ROUTES,
  ...VAULT_ROUTES,
];
