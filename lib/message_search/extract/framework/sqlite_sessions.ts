/**
 * The two per-store steps every SQLite source repeats around its own queries:
 * - {@link listStoreSessions} (discovery): the sessions of one database, read from the
 *   process-wide shared snapshot, at most `maxSessions` (more is counted
 *   `db_sessions_truncated`). A store that cannot be listed this sweep reuses the list it
 *   had last time in this process (counted), so its sessions are not reported gone. With
 *   no list yet the store is HELD: no units from it, and the indexer keeps every session
 *   it published from that file as it is (Discovery.held) — one busy, empty, corrupt or
 *   hostile database never takes the source's other databases down with it (issue 26 H1:
 *   it used to throw, and the indexer skipped the whole source every sweep). A failure
 *   that is not a writer at work (empty, not SQLite, corrupt, hostile, too large, refused,
 *   an unknown schema) is also named in a note, shown with the source's coverage. A
 *   missing database is "not present": null, nothing counted.
 * - {@link perSnapshotWatermarks}: every session's watermark computed once per snapshot
 *   (a few grouped scans instead of one query per session), memoised by the snapshot
 *   object, so a new snapshot (the store moved) computes afresh.
 * Invariant: the last lists are keyed by source and database path, so two sources never
 * share one; they live as long as the process (one string per session id, bounded by
 * what the store lists).
 */
import {
  sharedSnapshot,
  type SnapshotOptions,
  type SqliteSnapshot,
  statSqliteStore,
} from "./sqlite_snapshot.ts";
import { countSkip } from "./types.ts";

/** One listed session: its id and, when the store says, when it last changed (ms). */
export interface ListedSession {
  id: string;
  updated: number | null;
}

/** A source's query for the listable sessions of a snapshot (at most `max` + 1 rows). */
export type ListSessions = (
  snap: SqliteSnapshot,
  o: { max: number },
) => { ok: true; sessions: ListedSession[] } | { ok: false; reason: string };

/** Sessions listed per database at most, by default. */
export const STORE_SESSIONS_MAX = 1_000_000;

/** What {@link listStoreSessions} needs. */
export interface ListStoreOptions {
  /** Names the store in notes ("Goose", "OpenCode"). */
  label: string;
  /** The source's session query. */
  list: ListSessions;
  snapshot: SnapshotOptions;
  /** Where refusals are counted (by reason). */
  skipped: Record<string, number>;
  /** @default STORE_SESSIONS_MAX */
  maxSessions?: number;
}

/** What one database lists this sweep. */
export interface StoreListing {
  sessions: ListedSession[];
  /** Nothing could be listed and no earlier list exists: keep what was published from it. */
  held: boolean;
  /** Why the database was not read (a sentence naming it), or null. */
  note: string | null;
  /** The database file's mtime (ms): the tie-break between copies of one session. */
  mtimeMs: number;
}

const LAST_LISTS = new Map<string, ListedSession[]>();

/** What each refusal means, said in a note. */
const WHY: Record<string, string> = {
  db_empty: "an empty file (0 bytes)",
  db_not_sqlite: "not a SQLite database",
  db_corrupt: "the database is malformed",
  db_hostile: "its tables are views, virtual tables or generated columns (queries refused)",
  db_too_large: "larger than the copy cap",
  db_refused: "not a regular file (symlink, FIFO or device)",
  db_unreadable: "permission denied",
  db_schema: "an unknown schema (a table or column this version needs is missing)",
  db_error: "SQLite refused a query",
};

/** The sessions of the store at `db` (see the header); null when the database is missing. */
export async function listStoreSessions(
  db: string,
  o: ListStoreOptions,
): Promise<StoreListing | null> {
  const sig = statSqliteStore(db);
  if (sig === null) return null;
  const max = o.maxSessions ?? STORE_SESSIONS_MAX;
  let sessions: ListedSession[] | null = null;
  let reason = "db_refused";
  if (sig !== "refused") {
    const snap = await sharedSnapshot(db, sig, o.snapshot);
    if (snap.ok) {
      const l = o.list(snap.snapshot, { max });
      if (l.ok) sessions = l.sessions;
      else reason = l.reason;
    } else reason = snap.reason;
  }
  const mtimeMs = sig === "refused" ? 0 : Math.max(sig.db.mtime_ms, sig.wal?.mtime_ms ?? 0);
  const key = `${o.label}\0${db}`;
  if (sessions !== null) {
    if (sessions.length > max) {
      countSkip(o.skipped, "db_sessions_truncated", sessions.length - max);
      sessions = sessions.slice(0, max);
    }
    LAST_LISTS.set(key, sessions);
    return { sessions, held: false, note: null, mtimeMs };
  }
  countSkip(o.skipped, reason);
  const note = reason === "db_busy"
    ? null
    : `skipped ${o.label} database "${db}": ${WHY[reason] ?? reason}`;
  const last = LAST_LISTS.get(key) ?? null;
  if (last !== null) return { sessions: last, held: false, note, mtimeMs };
  return { sessions: [], held: true, note, mtimeMs };
}

/** Every session's watermark of a snapshot, or the reason the store is held. */
export type Watermarks = Map<string, string> | { hold: string };

/** The watermark of one session: null when it is not in the store. */
export type WatermarkOf = (
  snap: SqliteSnapshot,
  sessionId: string,
) => string | null | { hold: string };

/** A watermark lookup that runs `compute` once per snapshot (see the header). */
export function perSnapshotWatermarks(compute: (snap: SqliteSnapshot) => Watermarks): WatermarkOf {
  const memo = new WeakMap<SqliteSnapshot, Watermarks>();
  return (snap, sessionId) => {
    let w = memo.get(snap);
    if (w === undefined) {
      w = compute(snap);
      memo.set(snap, w);
    }
    if (!(w instanceof Map)) return w;
    return w.get(sessionId) ?? null;
  };
}

/** `name` when `table` has that column in this store's schema, else SQL `NULL`. */
export function columnOrNull(snap: SqliteSnapshot, table: string, name: string): string {
  return snap.columns(table).has(name) ? name : "NULL";
}
