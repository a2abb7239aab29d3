/**
 * The team side of a running daemon (`intendant serve --team`): publishes this machine's
 * index after every change (team_sync.ts) and answers team search, remote session reads
 * and team status for the API — all over one lazily opened database (team_handle.ts), so
 * the daemon serves this machine whatever the team database does. Errors of the database
 * (down, misconfigured, schema missing) reach each caller as the open's or the query's own
 * error (TeamDbError or the client's), for the route to answer 503; publishing retries on
 * its own.
 */
import type { Store } from "../message_search/mod.ts";
import type { TeamDb } from "./connect.ts";
import { createPublisher, type Publisher } from "./publish.ts";
import { loadRemoteSession, type RemoteSession } from "./remote_session.ts";
import { createTeamHandle } from "./team_handle.ts";
import {
  createTeamSearch,
  type TeamSearch,
  type TeamSearchRequest,
  type TeamSearchResponse,
} from "./team_search.ts";
import { readTeamStatus, type TeamStatus } from "./team_status.ts";
import { startTeamSync, type TeamSyncStatus } from "./team_sync.ts";

/** Options for {@link startTeamService}. */
export interface TeamServiceOptions {
  /** Opens and checks the database (the CLI's openTeam: connect, checks, schema). */
  open: () => Promise<TeamDb>;
  machine: string;
  store: Store;
  cursorKey: Uint8Array;
  binaryVersion: string;
  logger?: (line: string) => void;
  /** The sync loop's poll period (team_sync.ts). */
  pollMs?: number;
}

/** What `/api/team/status` answers: the team's state and this daemon's publishing. */
export type TeamServiceStatus = TeamStatus & { sync: TeamSyncStatus };

/** A running team service. */
export interface TeamService {
  readonly machine: string;
  search(req: TeamSearchRequest): Promise<TeamSearchResponse>;
  remoteSession(
    o: { machine: string; sessionKey: string; offset?: number; limit?: number },
  ): Promise<RemoteSession>;
  status(): Promise<TeamServiceStatus>;
  /** Publishes now if the local index moved (tests and `index` use it). */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts publishing and serving; nothing is opened until the first use. */
export function startTeamService(o: TeamServiceOptions): TeamService {
  const handle = createTeamHandle({ open: o.open });
  let publisher: Publisher | null = null;
  let engine: TeamSearch | null = null;
  const sync = startTeamSync({
    readRevision: async () => (await o.store.readManifest()).revision,
    publish: async () => {
      const db = await handle.get();
      publisher ??= createPublisher({
        db,
        store: o.store,
        machine: o.machine,
        binaryVersion: o.binaryVersion,
      });
      return publisher.publish();
    },
    logger: o.logger,
    pollMs: o.pollMs,
  });
  return {
    machine: o.machine,
    async search(req) {
      const db = await handle.get();
      // Team search is bounded by the server's retention (`team retention`), not this
      // machine's window: the other machines' records are theirs to keep.
      engine ??= createTeamSearch({ db, cursorKey: o.cursorKey, windowDays: null });
      return engine.search(req);
    },
    async remoteSession(q) {
      return loadRemoteSession(await handle.get(), q);
    },
    async status() {
      return { ...(await readTeamStatus(await handle.get())), sync: sync.status() };
    },
    syncNow: () => sync.syncNow(),
    async stop() {
      await sync.stop();
      await handle.close();
    },
  };
}
