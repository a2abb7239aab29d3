/**
 * The two per-store steps every SQLite source repeats around its own queries:
 * - {@link listStoreSessions} (discovery): the session ids of one database, read from the
 *   process-wide shared snapshot. A store that cannot be listed this sweep (a writer kept
 *   it busy, it became corrupt or too large, its schema is unknown) reuses the list it had
 *   last time in this process, and the reason is counted, so its sessions are not
 *   reported gone; with no list yet, a BUSY store throws (the indexer then skips the
 *   whole source this sweep instead of marking every session gone) and any other failure
 *   yields no ids. A missing database is "not present": null, nothing counted.
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

/** A source's query for the listable ids of a snapshot. */
export type ListSessions = (
  snap: SqliteSnapshot,
) => { ok: true; ids: string[] } | { ok: false; reason: string };

/** What {@link listStoreSessions} needs. */
export interface ListStoreOptions {
  /** Names the store in the busy error ("Goose", "OpenCode"). */
  label: string;
  /** The source's id query. */
  list: ListSessions;
  snapshot: SnapshotOptions;
  /** Where refusals are counted (by reason). */
  skipped: Record<string, number>;
}

const LAST_LISTS = new Map<string, string[]>();

/** The ids of the store at `db` (see the header); null when the database is missing. */
export async function listStoreSessions(
  db: string,
  o: ListStoreOptions,
): Promise<string[] | null> {
  const sig = statSqliteStore(db);
  if (sig === null) return null;
  let ids: string[] | null = null;
  let reason = "db_refused";
  if (sig !== "refused") {
    const snap = await sharedSnapshot(db, sig, o.snapshot);
    if (snap.ok) {
      const l = o.list(snap.snapshot);
      if (l.ok) ids = l.ids;
      else reason = l.reason;
    } else reason = snap.reason;
  }
  const key = `${o.label}\0${db}`;
  if (ids !== null) {
    LAST_LISTS.set(key, ids);
    return ids;
  }
  countSkip(o.skipped, reason);
  const last = LAST_LISTS.get(key) ?? null;
  if (last === null && reason === "db_busy") {
    throw new Error(`Cannot list ${o.label} sessions in "${db}": a writer kept it busy`);
  }
  return last ?? [];
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
