/**
 * The team scope of the HTTP API on real parts, for the route and browser tests: a
 * migrated team replica on a real PostgreSQL (tests/helpers/pg_cluster.ts) seeded with
 * real MessageRecords through the real row mapping (toRecordRow + INSERTs, sessions rows,
 * team revision — the publisher is not needed to test the readers), the team objects the
 * daemon builds from `--team` (createTeamSearch, loadRemoteSession, readTeamStatus over
 * one TeamDb), and the real Hono app over an empty local index with that team dependency.
 * Nothing is mocked.
 */
import { loadTeamRows, textRecords } from "./team_rows.ts";
import { join } from "node:path";
import { resolveConfig } from "../../lib/config.ts";
import {
  createMessageIndex,
  createSearchEngine,
  type MessageRecord,
  type Source,
} from "../../lib/message_search/mod.ts";
import { createApp, loadCursorKey, type TeamDeps } from "../../lib/server/mod.ts";
import {
  createTeamSearch,
  loadRemoteSession,
  migrateTeamDb,
  openTeamDb,
  parseTeamUrl,
  readTeamStatus,
  type TeamDb,
} from "../../lib/team/mod.ts";
import { hermeticEnv } from "./temp.ts";

/** One session of one pretend machine. */
export interface ReplicaSession {
  machine: string;
  source: Source;
  id: string;
  title: string;
  project: string;
  /** Message texts in order (user, assistant, user, …), one minute apart, ending at endMs. */
  texts: string[];
  endMs: number;
}

/** The local key of a replica session. */
export const keyOf = (s: ReplicaSession): string => `${s.source}:${s.id}`;

const recordsOf = (s: ReplicaSession): MessageRecord[] => textRecords(s);

/** A migrated replica on `url` (a superuser URL of a throwaway cluster). */
export async function openReplica(url: string): Promise<TeamDb> {
  const db = await openTeamDb(parseTeamUrl(url));
  await migrateTeamDb(db, { binaryVersion: "test" });
  return db;
}

/** Loads sessions as published at team revision `rev` (the revision is raised to it). */
export async function seedReplica(
  db: TeamDb,
  sessions: readonly ReplicaSession[],
  rev: number,
): Promise<void> {
  await loadTeamRows(
    db,
    sessions.map((s) => ({
      machine: s.machine,
      key: keyOf(s),
      source: s.source,
      id: s.id,
      title: s.title,
      project: s.project,
      recs: recordsOf(s),
    })),
    rev,
  );
}

/** A destructive change on `machine` at a new team revision (what a tombstone does). */
export async function destructiveChange(db: TeamDb, machine: string): Promise<void> {
  const [r] = await db.sql<{ revision: string }[]>`
    UPDATE intendant.team_state SET revision = revision + 1 RETURNING revision`;
  await db.sql`UPDATE intendant.machines SET destructive_rev = ${Number(r!.revision)}
    WHERE name = ${machine}`;
}

/** The team objects `serve --team` hands the app, over one replica. */
export function teamDepsOf(db: TeamDb, machine: string): TeamDeps {
  // A generous time budget: the first query on a fresh cluster is cold, and these tests
  // assert complete answers (the budget's own behaviour is team_search_test.ts's).
  const engine = createTeamSearch({
    db,
    cursorKey: new Uint8Array(32).fill(9),
    windowDays: null,
    timeBudgetMs: 10_000,
  });
  return {
    machine,
    search: engine.search,
    remoteSession: (o) => loadRemoteSession(db, o),
    status: async () => ({ ...await readTeamStatus(db), sync: null }),
  };
}

/** Port the in-process app believes it serves on (Host checks). */
export const TEAM_APP_PORT = 8766;

/** The real app over an empty local index under `root`, with `team` when given. */
export async function buildTeamApp(
  root: string,
  o: { team?: TeamDeps; port?: number; ui?: { html: string; js: string } } = {},
) {
  const env = hermeticEnv(root);
  const cfg = resolveConfig(env, { cwd: root });
  const { store, indexer } = await createMessageIndex(cfg);
  await indexer.sweep();
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
    isReady: () => indexer.ready,
  });
  const token = "t0k3n-" + "y".repeat(37);
  const port = o.port ?? TEAM_APP_PORT;
  const logs: string[] = [];
  const app = createApp({
    token,
    port,
    windowDays: cfg.messageSearch.windowDays,
    engine,
    indexer,
    store,
    catalog: { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath },
    trash: { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store },
    team: o.team,
    ui: o.ui,
    logger: (l) => logs.push(l),
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    Promise.resolve(app.request(path, {
      headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, ...headers },
    }));
  return { app, token, logs, get, stateRoot: join(root, "state") };
}
