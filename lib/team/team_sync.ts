/**
 * Keeps a machine's team replica current while a daemon runs (`intendant serve --team`):
 * after every change of the local index — a sweep that published something, a deletion
 * from the dashboard, a repair — the publisher runs once. The local manifest revision is
 * the signal (every accepted publish moves it; a no-op sweep does not), read every
 * `pollMs` through the store's cached manifest reader (a stat when nothing moved).
 * Invariants: one publish at a time (a change during a publish is caught by the next
 * poll); a failed publish (database down, stale writer) is logged once per distinct
 * message and retried with exponential backoff up to `maxBackoffMs`, never taking the
 * daemon down — the local index stays the source of truth and the next publish diffs
 * against the server, so nothing is lost while the database is away; `status()` says
 * what the last attempt did (for the coverage route and `team status`).
 */
import type { PublishReport } from "./publish.ts";

/** How often the local revision is compared with the last published one. */
export const TEAM_POLL_MS = 250;
/** Longest wait between retries while the team database fails. */
export const TEAM_MAX_BACKOFF_MS = 60_000;

/** What the last publish attempt did. */
export interface TeamSyncStatus {
  /** Local revision last published completely (null: not yet). */
  publishedRevision: number | null;
  lastPublishAtMs: number | null;
  lastReport: PublishReport | null;
  /** The last failure's message (cleared by a success). */
  lastError: string | null;
  failures: number;
}

/** Options for {@link startTeamSync}. */
export interface TeamSyncOptions {
  /** The local manifest's revision now. */
  readRevision: () => Promise<number>;
  publish: () => Promise<PublishReport>;
  logger?: (line: string) => void;
  /** @default TEAM_POLL_MS */
  pollMs?: number;
  /** @default TEAM_MAX_BACKOFF_MS */
  maxBackoffMs?: number;
  now?: () => number;
}

/** A running sync loop. */
export interface TeamSync {
  status(): TeamSyncStatus;
  /** Publishes now if the local revision moved (also what the loop calls). */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the loop (the first check runs at once). */
export function startTeamSync(o: TeamSyncOptions): TeamSync {
  const pollMs = o.pollMs ?? TEAM_POLL_MS;
  const maxBackoffMs = o.maxBackoffMs ?? TEAM_MAX_BACKOFF_MS;
  const now = o.now ?? Date.now;
  const st: TeamSyncStatus = {
    publishedRevision: null,
    lastPublishAtMs: null,
    lastReport: null,
    lastError: null,
    failures: 0,
  };
  let running: Promise<void> | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let retryAt = 0;

  const once = async () => {
    const rev = await o.readRevision();
    if (rev === st.publishedRevision || now() < retryAt) return;
    try {
      const report = await o.publish();
      st.publishedRevision = rev;
      st.lastPublishAtMs = now();
      st.lastReport = report;
      if (st.lastError !== null) o.logger?.("intendant: team publishing works again");
      st.lastError = null;
      st.failures = 0;
      retryAt = 0;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      st.failures++;
      if (msg !== st.lastError) o.logger?.(`intendant: team publish failed: ${msg}`);
      st.lastError = msg;
      retryAt = now() + Math.min(maxBackoffMs, pollMs * 2 ** Math.min(st.failures, 16));
    }
  };
  const syncNow = () => {
    running ??= once().finally(() => (running = null));
    return running;
  };
  const tick = async () => {
    if (stopped) return;
    try {
      await syncNow();
    } catch (err) {
      // readRevision failing (a store being repaired) is retried at the next tick.
      o.logger?.(`intendant: team sync could not read the index: ${(err as Error).message}`);
    }
    if (!stopped) timer = setTimeout(tick, pollMs);
  };
  timer = setTimeout(tick, 0);
  return {
    status: () => ({ ...st }),
    syncNow,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
