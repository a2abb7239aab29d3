/**
 * The team scope of the HTTP API (issue 19): message search answered from the shared
 * PostgreSQL replica (`GET /api/sessions/message-search?scope=team`, dispatched here by
 * routes.ts), a remote session's indexed prose (`GET /api/team/session`) and the team's
 * status (`GET /api/team/status`). Every route sits behind the app's token/Host/Origin
 * middleware like any /api route; the team objects are an optional dependency
 * (`RouteDeps.team`), built by the daemon from `--team`.
 *
 * Decisions:
 *  - No team configured: search and session answer 404 `team_not_configured` with how to
 *    configure one; `/api/team/status` answers 200 `{configured: false, hint}` instead,
 *    because it is the dashboard's probe for whether to show the "team" toggle.
 *  - A team database that is down or refuses us (TeamDbError, or the client's connection
 *    errors: ECONNREFUSED, a closed socket, SQLSTATE 08xxx / 57P0x…) becomes a TeamDbError
 *    "connect" that the one onError maps to 503 `team_unavailable` — a clear sentence, the
 *    client's code, never a stack, the URL or its password. Other errors keep their usual
 *    mapping (400 bad input / bad cursor, 410 expired cursor, 404 unknown session).
 *  - Team searches take slots of their OWN gate (TEAM_SEARCH_CAPACITY, 429 busy beyond):
 *    a slow team database must never starve local search of its two slots.
 *  - Team pages carry no local coverage block (it describes this machine's index, not the
 *    replica); they carry `scope: "team"`, `revision` and each group's `machine`.
 *  - `sort=relevance` is a 400 in words: the team reader orders newest first only.
 *  - The query text is never logged nor put into an error message.
 */
import type { Context } from "hono";
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import { TeamDbError } from "../team/mod.ts";
import type {
  RemoteSession,
  TeamSearchRequest,
  TeamSearchResponse,
  TeamStatus,
} from "../team/mod.ts";
import { normalizeRequest } from "../message_search/mod.ts";
import { MessageSearchParams, parseQuery, searchRequestOf } from "./params.ts";
import type { RouteDef, RouteDeps } from "./routes.ts";
import { SearchGate } from "./search_gate.ts";

/** What the daemon gives the app when it runs with `--team`. */
export interface TeamDeps {
  /** This machine's name in the team. */
  machine: string;
  search(req: TeamSearchRequest): Promise<TeamSearchResponse>;
  remoteSession(
    o: { machine: string; sessionKey: string; offset?: number; limit?: number },
  ): Promise<RemoteSession>;
  /** readTeamStatus plus this daemon's publishing state (`sync`). */
  status(): Promise<TeamStatus & { sync?: unknown }>;
}

/** Concurrent team searches per app (their own gate, beside local search's). */
export const TEAM_SEARCH_CAPACITY = 2;

/** How to turn team scope on (the 404 body and the status probe say it). */
export const TEAM_HINT =
  "Start the daemon with `intendant serve --team postgres://…` (or set INTENDANT_TEAM_URL); " +
  "create the schema once with `intendant team init --team URL`";

const MACHINE_RE = /^[A-Za-z0-9._-]{1,64}$/;
const machineList = z.string().max(2000).transform((s) =>
  s.split(",").map((x) => x.trim()).filter(Boolean)
).pipe(z.array(z.string().regex(MACHINE_RE, "expected machine names")).max(100));
const int = (min: number, max: number) =>
  z.string().regex(/^\d{1,9}$/).transform(Number).pipe(z.number().int().min(min).max(max));

/** `/api/sessions/message-search?scope=team`: the local parameters plus `machine=a,b`. */
export const TeamSearchParams = MessageSearchParams.extend({
  scope: z.literal("team"),
  machine: machineList.optional(),
}).strict();

/** `/api/team/session`. */
export const RemoteSessionParams = z.object({
  machine: z.string().regex(MACHINE_RE, "expected a machine name"),
  key: z.string().min(1).max(400),
  offset: int(0, 100_000_000).optional(),
  limit: int(1, 1000).optional(),
}).strict();

/** The requested scope of a message search; anything but local/team is a 400. */
export function searchScope(url: URL): "local" | "team" {
  const s = url.searchParams.get("scope");
  if (s === null || s === "local") return "local";
  if (s === "team") return "team";
  throw new RangeError(`"scope" must be "local" or "team": got "${s.slice(0, 40)}"`);
}

function notConfigured(c: Context): Response {
  return c.json({
    error: "team_not_configured",
    message: `Team search is not configured on this daemon. ${TEAM_HINT}`,
  }, 404);
}

/** Client error codes that mean "the database is not reachable now". */
const DOWN_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  // SQLSTATE: admin/crash shutdown, cannot connect now, too many connections.
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/** The TeamDbError a failed team call means, or null when it is not an availability error. */
export function teamUnavailable(e: unknown): TeamDbError | null {
  if (e instanceof TeamDbError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const name = (e as { name?: unknown } | null)?.name;
  const down =
    (typeof code === "string" && (DOWN_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) ||
    name === "ConnectionRefused" || name === "ConnectionReset" || name === "BrokenPipe";
  if (!down) return null;
  // Only the code travels: the client's message can name the host, never anything else
  // useful, and a server message could in principle echo statement text.
  return new TeamDbError(
    "connect",
    `The team database is unavailable (${typeof code === "string" ? code : String(name)}): ` +
      `team search resumes when it is back; this machine's own search still works`,
  );
}

/** Runs a team call, turning availability failures into TeamDbError (→ 503). */
async function teamCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw teamUnavailable(e) ?? e;
  }
}

const gates = new WeakMap<RouteDeps, SearchGate>();

/** `GET /api/sessions/message-search?scope=team`. */
export async function teamMessageSearch(c: Context, d: RouteDeps): Promise<Response> {
  if (!d.team) return notConfigured(c);
  const team = d.team;
  const p = parseQuery(TeamSearchParams, new URL(c.req.url));
  if (p.sort === "relevance") {
    // The team reader (lib/team/team_search.ts) has no relevance order yet: refuse in
    // words instead of answering a newest page the caller would take for best matches.
    throw new InvalidInputError(
      "sort=relevance is not available for team search yet: team pages are newest first",
    );
  }
  const req: TeamSearchRequest = { ...searchRequestOf(p), machine: p.machine };
  // The engine's own rules first: a refused request is a 400 before any slot or query.
  normalizeRequest(req);
  let gate = gates.get(d);
  if (!gate) gates.set(d, gate = new SearchGate(TEAM_SEARCH_CAPACITY));
  const r = await gate.run(() => teamCall(() => team.search(req)));
  if (!r) {
    return c.json(
      { error: "busy", message: "Too many team searches in flight; retry shortly" },
      429,
      { "Retry-After": "1" },
    );
  }
  return c.json(r.value);
}

/** The team routes, appended to the route table. */
export const TEAM_ROUTES: readonly RouteDef[] = [
  {
    method: "GET",
    path: "/api/team/session",
    operation: "api_team_session",
    body: "none",
    summary:
      "a remote session's indexed prose from the team database, marked remote (machine, key, offset, limit)",
    handler: async (c, d) => {
      if (!d.team) return notConfigured(c);
      const team = d.team;
      const p = parseQuery(RemoteSessionParams, new URL(c.req.url));
      return c.json(
        await teamCall(() =>
          team.remoteSession({
            machine: p.machine,
            sessionKey: p.key,
            offset: p.offset,
            limit: p.limit,
          })
        ),
      );
    },
  },
  {
    method: "GET",
    path: "/api/team/status",
    operation: "api_team_status",
    body: "none",
    summary:
      "whether team search is configured; its machines, last publishes, counts and lag, and this daemon's publishing",
    handler: async (c, d) => {
      if (!d.team) return c.json({ configured: false, hint: TEAM_HINT });
      const team = d.team;
      const st = await teamCall(() => team.status());
      return c.json({ ...st, configured: true, machine: team.machine });
    },
  },
];
