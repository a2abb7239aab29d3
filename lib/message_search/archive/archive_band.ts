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
 * Restoring is the one way back: liftArchiveTombstone lifts the archive's tombstone of a
 * session restored from the trash. The archive cannot infer a restore from the main
 * manifest alone (a lifted main tombstone and an expired one look the same), so the
 * restore says so; it lifts the archive's first, then the main's, so a restore cut off
 * between the two is re-tombstoned by the next carry and finished by running it again.
 */
import { dirname, join } from "node:path";
import type { Manifest, Store } from "../store/mod.ts";
import type { SweepBand } from "../indexer.ts";
import { DAY_MS, openStore } from "../store/mod.ts";
import { realFs, statOrNull } from "../../durable/mod.ts";
import { archiveOf } from "./attach.ts";

/** Directory of the archive store under the message-search cache root. */
export const ARCHIVE_DIR = join("archive", "v2");

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

/**
 * Lifts the archive's tombstone of `key` (a session restored from the trash), so the next
 * archive sweep may read it again; true when there was one. The archive attached to
 * `main` when there is one; else the archive store beside it (`<cache>/archive/v2`, whose
 * main store is `<cache>/v2`), opened for this one write — or none, when it was never
 * built (nothing to lift).
 */
export async function liftArchiveTombstone(main: Store, key: string): Promise<boolean> {
  const attached = archiveOf(main);
  if (attached) return await attached.store.liftTombstone(key);
  const root = join(dirname(main.root), ARCHIVE_DIR);
  if (!(await statOrNull(realFs, root))) return false;
  if (main.parserVersion === undefined) {
    throw new TypeError(`Cannot lift the archive tombstone of "${key}": no parser version`);
  }
  const archive = await openStore({ root, parserVersion: main.parserVersion, windowDays: null });
  return await archive.liftTombstone(key);
}
