/**
 * The archive's band: which units the archive indexer reads. The complement of what the
 * main index publishes, decided from the main manifest at the start of each archive sweep:
 *  - a unit the main index holds or tombstones is left to it (never read here: no
 *    double extraction of the window's sessions);
 *  - a unit neither store holds is read when every file of it is older than the window's
 *    cutoff (the main indexer skips those without reading them), or unchanged since the
 *    start of the main's last completed full sweep (that sweep read it and published
 *    nothing: all of its messages are older than the window, or it has none).
 * Deletion is sticky across both stores: a key the main store tombstones is tombstoned in
 * the archive before the sweep (the main tombstone expires with the window; the archive's
 * never does, so a deleted session cannot come back through the archive).
 */
import type { Manifest, Store } from "../store/mod.ts";
import type { SweepBand } from "../indexer.ts";
import { DAY_MS } from "../store/mod.ts";

/** Options for {@link archiveBand}. */
export interface ArchiveBandOptions {
  main: Manifest;
  windowDays: number | null;
  nowMs: number;
  /** Start of the main's last completed full sweep in this process; null: unknown. */
  mainSweptAtMs: number | null;
}

/** The band of one archive sweep. */
export function archiveBand(o: ArchiveBandOptions): SweepBand {
  const { main, windowDays, mainSweptAtMs } = o;
  const cutoff = windowDays === null ? -Infinity : o.nowMs - windowDays * DAY_MS;
  const before = Math.max(cutoff, mainSweptAtMs ?? -Infinity);
  return {
    leaves: (key) => main.sessions[key] !== undefined || main.tombstones[key] !== undefined,
    // windowDays null: the main index keeps everything, the archive has nothing to add.
    takes: (mtimes) => windowDays !== null && mtimes.every((m) => m < before),
  };
}

/** Tombstones in the archive every key the main store tombstones; how many were new. */
export async function carryTombstones(main: Manifest, archive: Store): Promise<number> {
  const a = await archive.readManifest();
  let n = 0;
  for (const key of Object.keys(main.tombstones)) {
    if (a.tombstones[key] !== undefined) continue;
    await archive.deleteSession(key);
    n++;
  }
  return n;
}
