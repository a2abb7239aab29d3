/**
 * The publisher's pure half (issue 19): what must change on the team server so that this
 * machine's rows there equal its local store. No I/O; publish.ts feeds it the local
 * manifest, the loaded records and what the server holds, and publish_batch.ts applies the
 * result.
 *
 * Invariants:
 *  - The diff is always LOCAL vs the SERVER's rows (by record id), never vs what we think
 *    we sent: a batch lost to a crash, a kill -9 or a StalePublishError is simply found
 *    missing again, so a republish lands exactly once.
 *  - A session's `sig` (sessionSig) hashes everything a session row and its records are
 *    derived from — the generations list (content-named segments: same list ⇒ same
 *    records and marks), source_gone and the display meta. Equal sig ⇒ nothing to do, so
 *    an unchanged session costs nothing, not even a shard load.
 *  - Record ids and session keys are compared in their stored form (pgLabel: U+0000 →
 *    U+FFFD), the form the server returns.
 *  - Destructive (moves an already-served row; cursors pinned before it answer 410): a
 *    record deleted, a record rewritten (same id, new ord or ts: delete + insert), a
 *    superseded flag flipped either way, a session deleted (tombstone or retention).
 *    Plain inserts and session-row updates are not destructive.
 *
 * Decisions the design left open:
 *  - Local sessions whose newest message is older than the server's retention cutoff are
 *    not published (and their server rows are deleted), else every publish would re-insert
 *    what retention just removed.
 *  - Quarantined local sessions keep their server rows untouched (the local shard is being
 *    re-derived; the replica's copy is the best there is meanwhile) — unless retention
 *    expires them.
 *  - Duplicate record ids within one local session (not produced by our extractors, but
 *    not schema-checked either) keep the first by order: the server key is unique.
 */
import {
  fold,
  hash16Of,
  type ManifestEntry,
  type MessageRecord,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { pgLabel } from "./record_row.ts";

/**
 * Sigs by entry object. A manifest state's entries are shared and never mutated (the
 * store's contract), so an entry's sig never changes: a daemon publishing after every
 * append hashes only the entries that changed, not all of them (≈ 6 ms per publish at
 * 2,346 sessions otherwise, with no yield).
 */
const sigs = new WeakMap<ManifestEntry, string>();

/** The `sig` of a local manifest entry (see the header). */
export function sessionSig(entry: ManifestEntry): string {
  let sig = sigs.get(entry);
  if (sig === undefined) sigs.set(entry, sig = computeSig(entry));
  return sig;
}

function computeSig(entry: ManifestEntry): string {
  const { project, title, parent_session_id } = entry.meta;
  return hash16Of(JSON.stringify([
    entry.generations,
    entry.source_gone,
    project,
    title,
    parent_session_id,
    entry.newest_ts_ms,
    entry.oldest_ts_ms,
  ]));
}

/** One of this machine's sessions as the server holds it. */
export interface ServerSession {
  sig: string;
}

/** One server record row, as the diff needs it (no text). */
export interface ServerRecord {
  record_id: string;
  superseded: boolean;
  ord: number;
  ts_ms: number;
}

/** A server session to delete, and whether the local store tombstoned it. */
export interface SessionDelete {
  key: string;
  tombstone: boolean;
  /** "gone": no longer in the local manifest; "retention": older than the server cutoff. */
  reason: "gone" | "retention";
}

/** Which sessions a publish must touch. */
export interface SessionPlan {
  /** Local keys whose sig differs from the server's (or the server lacks), newest first. */
  changed: string[];
  deleted: SessionDelete[];
  /** Local sessions skipped because they are quarantined. */
  quarantined: number;
}

/**
 * Compares the local manifest with the server's sessions of this machine.
 * `retentionCutoffMs`: sessions with newest_ts_ms below it are expired (null = keep all).
 */
export function planSessions(
  manifest: {
    sessions: Record<string, ManifestEntry>;
    tombstones: Record<string, number>;
  },
  server: ReadonlyMap<string, ServerSession>,
  o: { retentionCutoffMs: number | null },
): SessionPlan {
  const cutoff = o.retentionCutoffMs;
  const expired = (e: ManifestEntry) => cutoff !== null && e.newest_ts_ms < cutoff;
  const changed: { key: string; newest: number }[] = [];
  const deleted: SessionDelete[] = [];
  let quarantined = 0;
  const localByStored = new Map<string, ManifestEntry>();
  for (const [key, entry] of Object.entries(manifest.sessions)) {
    localByStored.set(pgLabel(key), entry);
    if (expired(entry)) continue;
    if (entry.quarantined_at_ms !== undefined) {
      quarantined++;
      continue;
    }
    if (server.get(pgLabel(key))?.sig !== sessionSig(entry)) {
      changed.push({ key, newest: entry.newest_ts_ms });
    }
  }
  const tombstoned = new Set(Object.keys(manifest.tombstones).map((k) => pgLabel(k)));
  for (const key of server.keys()) {
    const entry = localByStored.get(key);
    if (entry === undefined) {
      deleted.push({ key, tombstone: tombstoned.has(key), reason: "gone" });
    } else if (expired(entry)) {
      deleted.push({ key, tombstone: false, reason: "retention" });
    }
  }
  // Newest first: after an interruption the freshest sessions are searchable soonest.
  changed.sort((a, b) => b.newest - a.newest || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { changed: changed.map((c) => c.key), deleted, quarantined };
}

/** What one session's records need on the server. */
export interface SessionDiff {
  /** Indices into the local records to insert (new ids and rewritten ones). */
  inserts: number[];
  /** Stored record ids to delete (gone locally, or rewritten). */
  deletes: string[];
  /** Stored record ids whose superseded flag must become `superseded`. */
  flips: { id: string; superseded: boolean }[];
  /** Rows the server keeps after the diff plus the inserts: the session's record count. */
  count: number;
  destructive: boolean;
}

/**
 * Diffs one session's local records (with their derived active flags) against the
 * server's rows of that session, by record id.
 */
export function diffSession(
  records: readonly MessageRecord[],
  active: readonly boolean[],
  server: readonly ServerRecord[],
): SessionDiff {
  const byId = new Map<string, ServerRecord>();
  for (const s of server) byId.set(s.record_id, s);
  const seen = new Set<string>();
  const inserts: number[] = [];
  const deletes: string[] = [];
  const flips: { id: string; superseded: boolean }[] = [];
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!;
    const id = pgLabel(rec.id);
    if (seen.has(id)) continue;
    seen.add(id);
    const superseded = !active[i];
    const s = byId.get(id);
    if (s === undefined) inserts.push(i);
    else if (s.ord !== rec.order || s.ts_ms !== rec.ts_ms) {
      deletes.push(id);
      inserts.push(i);
    } else if (s.superseded !== superseded) flips.push({ id, superseded });
  }
  for (const s of server) if (!seen.has(s.record_id)) deletes.push(s.record_id);
  return {
    inserts,
    deletes,
    flips,
    count: seen.size,
    destructive: deletes.length > 0 || flips.length > 0,
  };
}

/** A sessions row as the publisher writes it (rev_added/rev_changed set by the batch). */
export interface SessionRow {
  session_key: string;
  source: string;
  session_id: string;
  title: string | null;
  project: string | null;
  project_folded: string | null;
  parent_session_id: string | null;
  newest_ts_ms: number;
  oldest_ts_ms: number;
  records: number;
  source_gone: boolean;
  /** The entry's sig, or "" while the session is only partly published (see publish.ts). */
  sig: string;
  /** JSON text of the supersession marks (for the remote detail view). */
  marks: string;
}

/** The session row for local entry `entry` (records: the count after the diff). */
export function sessionRow(
  key: string,
  entry: ManifestEntry,
  o: { records: number; marks: readonly SupersessionMark[]; complete: boolean },
): SessionRow {
  const { project, title, parent_session_id } = entry.meta;
  return {
    session_key: pgLabel(key),
    source: entry.source,
    session_id: pgLabel(entry.session_id),
    title: pgLabel(title),
    project: pgLabel(project),
    project_folded: project === null ? null : pgLabel(fold(project)),
    parent_session_id: pgLabel(parent_session_id),
    newest_ts_ms: entry.newest_ts_ms,
    oldest_ts_ms: entry.oldest_ts_ms,
    records: o.records,
    source_gone: entry.source_gone,
    sig: o.complete ? sessionSig(entry) : "",
    // jsonb refuses \u0000 as well: strings in marks carry U+FFFD in its place.
    marks: JSON.stringify(o.marks, (_k, v) => typeof v === "string" ? pgLabel(v) : v),
  };
}
