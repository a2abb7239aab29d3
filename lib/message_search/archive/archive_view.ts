/**
 * The archive's read-only view for the search engine: one Store-shaped object over the
 * archive store and the main (windowed) store, built per archive query and dropped after
 * it. Its manifest names
 *  - every archived session the main index neither holds nor tombstones, and
 *  - every main session with a message older than the cutoff (a long session still in
 *    the window: its old messages are filtered out of the normal search, not out of this
 *    one), with the main entry winning over a stale archived copy of the same key;
 * and its loadSegment reads each generation from the store whose manifest named it.
 * Invariants: nothing here writes (every write method throws TypeError); the main store
 * is only read — its engine's arena, lexicon and query path are not touched; the view's
 * revision is main + archive + the cutoff's day, so any publish to either store, or the
 * cutoff moving a day, expires every archive cursor (410), exactly as a publish expires a
 * normal one. The cutoff is floored to the day so pages asked seconds apart agree on it.
 * Errors: the stores' read errors propagate.
 */
import { DAY_MS, type Manifest, type Store, type Summaries } from "../store/mod.ts";

/** What {@link archiveView} reads. */
export interface ArchiveViewOptions {
  archive: Store;
  main: Store;
  /** The main index's window; null: it keeps everything and the archive adds nothing. */
  windowDays: number | null;
  nowMs: number;
}

/** A read-only Store over both, and which store each generation it names came from. */
export interface ArchiveView {
  store: Store;
  /** Generation name → true when it is the main store's (onDamage routes by it). */
  isMain(generation: string): boolean;
  /** The cutoff the view was built with (ms; messages older than it are the archive's). */
  cutoffMs: number;
}

/** The day-floored cutoff of a window (Infinity when the window is null). */
export function archiveCutoff(windowDays: number | null, nowMs: number): number {
  if (windowDays === null) return Infinity;
  return Math.floor((nowMs - windowDays * DAY_MS) / DAY_MS) * DAY_MS;
}

/** Builds the view; reads both manifests once per readManifest call. */
export function archiveView(o: ArchiveViewOptions): ArchiveView {
  const { archive, main } = o;
  const cutoffMs = archiveCutoff(o.windowDays, o.nowMs);
  const fromMain = new Set<string>();
  const readManifest = async (): Promise<Manifest> => {
    const [a, m] = await Promise.all([archive.readManifest(), main.readManifest()]);
    const sessions: Manifest["sessions"] = {};
    for (const [k, e] of Object.entries(a.sessions)) {
      if (m.sessions[k] === undefined && m.tombstones[k] === undefined) sessions[k] = e;
    }
    fromMain.clear();
    for (const [k, e] of Object.entries(m.sessions)) {
      // oldest_ts_ms 0: an empty shard, nothing to search.
      if (e.oldest_ts_ms > 0 && e.oldest_ts_ms < cutoffMs) {
        sessions[k] = e;
        for (const g of e.generations) fromMain.add(g);
      }
    }
    const day = Number.isFinite(cutoffMs) ? cutoffMs / DAY_MS : 0;
    return {
      ...a,
      revision: a.revision + m.revision + day,
      sessions,
      tombstones: { ...a.tombstones, ...m.tombstones },
    };
  };
  const readOnly = (what: string) => () => {
    throw new TypeError(`The archive view is read-only: cannot ${what}`);
  };
  const store: Store = {
    root: archive.root,
    readManifest,
    loadSegment: (name, d) =>
      fromMain.has(name) ? main.loadSegment(name, d) : archive.loadSegment(name, d),
    async loadSummaries(): Promise<Summaries> {
      const [a, m] = await Promise.all([archive.loadSummaries(), main.loadSummaries()]);
      for (const [k, v] of m) a.set(k, v);
      return a;
    },
    // No lexicon: it would describe one store only; the trigram summaries still prune.
    loadLexicon: () => Promise.resolve(null),
    publish: readOnly("publish"),
    deleteSession: readOnly("delete a session"),
    liftTombstone: readOnly("lift a tombstone"),
    refreshLexicon: readOnly("refresh the lexicon"),
    gc: readOnly("collect garbage"),
    verifyAll: readOnly("verify"),
    dropEntries: readOnly("drop entries"),
  };
  return { store, isMain: (g) => fromMain.has(g), cutoffMs };
}
