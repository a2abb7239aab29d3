/**
 * The daemon's team database, opened on first use and re-tried after a failure. A daemon
 * must start and serve this machine even when the team database is unreachable (a laptop
 * offline at login): `serve --team` never fails on the database; publishing and team
 * search open it when they need it. Invariants: at most one open in flight (callers share
 * it); a successful open is kept until close(); a failed open is remembered and answered
 * again without a new attempt until `retryMs` has passed (no connection storm from a
 * dashboard typing into a dead database); close() ends an open database and refuses later
 * use.
 */
import type { TeamDb } from "./connect.ts";

/** Wait after a failed open before the next attempt. */
export const TEAM_REOPEN_MS = 5_000;

/** Options for {@link createTeamHandle}. */
export interface TeamHandleOptions {
  /** Opens and checks the database (openTeamDb + requireCurrentSchema). */
  open: () => Promise<TeamDb>;
  /** @default TEAM_REOPEN_MS */
  retryMs?: number;
  now?: () => number;
}

/** A lazily opened team database. */
export interface TeamHandle {
  /** The open database, opening it now if needed; rejects with the open's error. */
  get(): Promise<TeamDb>;
  /** The last open failure, while no open has succeeded since (for status answers). */
  lastError(): Error | null;
  close(): Promise<void>;
}

/** Creates the handle; nothing is opened until the first get(). */
export function createTeamHandle(o: TeamHandleOptions): TeamHandle {
  const retryMs = o.retryMs ?? TEAM_REOPEN_MS;
  const now = o.now ?? Date.now;
  let db: TeamDb | null = null;
  let opening: Promise<TeamDb> | null = null;
  let failure: { err: Error; at: number } | null = null;
  let closed = false;
  return {
    get() {
      if (closed) return Promise.reject(new Error("The team database connection is closed"));
      if (db) return Promise.resolve(db);
      if (failure && now() - failure.at < retryMs) return Promise.reject(failure.err);
      opening ??= o.open().then(
        (opened) => {
          opening = null;
          failure = null;
          if (closed) {
            void opened.close();
            throw new Error("The team database connection is closed");
          }
          db = opened;
          return opened;
        },
        (err) => {
          opening = null;
          failure = { err: err instanceof Error ? err : new Error(String(err)), at: now() };
          throw failure.err;
        },
      );
      return opening;
    },
    lastError: () => failure?.err ?? null,
    async close() {
      closed = true;
      const d = db;
      db = null;
      await d?.close();
    },
  };
}
