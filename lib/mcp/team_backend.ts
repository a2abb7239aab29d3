/**
 * The team side of `intendant mcp --team URL` (issue 19): search and remote reads answered
 * from the shared PostgreSQL replica (lib/team). Decisions:
 *  - With a team configured, search_messages searches the TEAM (every machine that
 *    publishes, this one included once its daemon or `intendant index --team` has
 *    published): that is the point of --team. The replica can lag this machine's newest
 *    messages by one publish; the tool description says so.
 *  - The database is opened lazily, on the first team call, never at startup: an MCP client
 *    starts its servers eagerly, and a team database that is down must not keep the local
 *    tools (list_sessions, read_session of this machine, index_status) from working.
 *  - Failures are one-line TeamDbErrors (the server returns them as isError results):
 *    opening/checking (connect.ts kinds), the schema missing or old (requireCurrentSchema:
 *    the `team init` hint), and a query that fails on a pool that was open (server stopped
 *    or restarted, connection reset). After any non-caller failure the pool is closed and
 *    forgotten, so the next call reopens and re-checks — a database that comes back is used
 *    again with no restart of the MCP server.
 *  - Messages name the database only by its redacted URL and carry the client's error CODE
 *    (or the server's own one-line message), never the client's error object: porsager
 *    attaches the query and its parameters (the user's search words) to it.
 *  - Retention: team searches use the team's own retention (applied on the server by
 *    `intendant team retention`), not this machine's local window: windowDays null.
 */
import { InvalidInputError, NotFoundError } from "../errors.ts";
import { CursorExpiredError, InvalidCursorError } from "../message_search/mod.ts";
import {
  loadRemoteSession,
  type RemoteSession,
  type TeamDb,
  TeamDbError,
  type TeamSearch,
  type TeamSearchRequest,
  type TeamSearchResponse,
} from "../team/mod.ts";
import { createTeamSearch } from "../team/mod.ts";

/** An opened, schema-checked team database and how to name it in messages. */
export interface OpenedTeamDb {
  db: TeamDb;
  /** The redacted URL (no password). */
  where: string;
}

/** Options of {@link createTeamBackend}. */
export interface TeamBackendOptions {
  /** Opens and checks the database (connect + requireCurrentSchema); throws TeamDbError. */
  open: () => Promise<OpenedTeamDb>;
  /** The HMAC key of search cursors. */
  cursorKey: () => Promise<Uint8Array>;
  /** This machine's name in the team, or null when it cannot be told (no hostname). */
  machine: string | null;
  /** Diagnostics (stderr). */
  logger: (line: string) => void;
}

/** What the MCP tools ask of the team database. */
export interface TeamBackend {
  /** This machine's name in the team (null: unknown, every machine is remote). */
  readonly machine: string | null;
  search(req: TeamSearchRequest): Promise<TeamSearchResponse>;
  /** One page of a remote session; NotFoundError when the machine has no such session. */
  readRemote(
    o: { machine: string; sessionKey: string; offset?: number; limit?: number },
  ): Promise<RemoteSession>;
  /** Closes the pool when one is open. */
  close(): Promise<void>;
}

/** Errors that are the caller's (or the domain's), passed through as they are. */
function isDomainError(err: unknown): boolean {
  return err instanceof TeamDbError || err instanceof NotFoundError ||
    err instanceof InvalidInputError || err instanceof InvalidCursorError ||
    err instanceof CursorExpiredError || err instanceof RangeError;
}

/** A one-line reason for a failed query: the code, or the server's own message. */
function reasonOf(err: unknown): string {
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  const oneLine = (s: string) => s.replace(/\s+/g, " ").trim().slice(0, 200);
  if (e?.name === "PostgresError" && typeof e.message === "string") {
    return `${oneLine(e.message)}${typeof e.code === "string" ? ` (SQLSTATE ${e.code})` : ""}`;
  }
  if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
    return "network access to it is not permitted to this process";
  }
  if (typeof e?.code === "string") return e.code;
  return err instanceof Error ? oneLine(err.name) : "unknown failure";
}

/** The team backend. */
export function createTeamBackend(o: TeamBackendOptions): TeamBackend {
  let opened: Promise<{ at: OpenedTeamDb; search: TeamSearch }> | null = null;

  const open = () =>
    opened ??= (async () => {
      const at = await o.open();
      try {
        const search = createTeamSearch({
          db: at.db,
          cursorKey: await o.cursorKey(),
          windowDays: null,
        });
        return { at, search };
      } catch (err) {
        await at.db.close();
        throw err;
      }
    })();

  /** Forgets the pool (closing it in the background) so the next call reopens. */
  const drop = (p: typeof opened) => {
    if (opened !== p || p === null) return;
    opened = null;
    p.then((x) => x.at.db.close()).catch(() => {});
  };

  /** Runs `fn` on the open database; failures become one-line errors. */
  async function withDb<T>(fn: (x: { at: OpenedTeamDb; search: TeamSearch }) => Promise<T>) {
    const p = open();
    let x: { at: OpenedTeamDb; search: TeamSearch };
    try {
      x = await p;
    } catch (err) {
      drop(p);
      if (err instanceof TeamDbError) {
        o.logger(`intendant mcp: ${err.message}`);
        throw err;
      }
      throw new TeamDbError("connect", `Cannot open the team database: ${reasonOf(err)}`);
    }
    try {
      return await fn(x);
    } catch (err) {
      if (isDomainError(err)) throw err;
      drop(p);
      const e = new TeamDbError(
        "connect",
        `The team database ${x.at.where} failed to answer: ${reasonOf(err)} ` +
          `(is PostgreSQL running? the next call reconnects)`,
      );
      o.logger(`intendant mcp: ${e.message}`);
      throw e;
    }
  }

  return {
    machine: o.machine,
    search: (req) => withDb((x) => x.search.search({ ...req, complete: true })),
    readRemote: (r) => withDb((x) => loadRemoteSession(x.at.db, r)),
    async close() {
      const p = opened;
      opened = null;
      if (p) await p.then((x) => x.at.db.close(), () => {});
    },
  };
}
