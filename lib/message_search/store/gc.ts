/**
 * Retention and garbage collection. Two independent steps the store runs under its lock:
 *  1. expireManifest (pure): drops sessions whose newest message left the window and
 *     tombstones older than the window; `windowDays: null` keeps everything forever.
 *  2. deleteUnreferencedGenerations: deletes generation files the CURRENT manifest does
 *     not name, whose mtime is older than GC_GRACE_MS AND that the manifest's `retired`
 *     map does not show retired within GC_GRACE_MS.
 * Why the grace: a query pinned to an older revision resolved its generation names from
 * that manifest and may open them after a newer manifest has dropped them (paging through
 * a snapshot). Deleting only files retired for 10 minutes gives such a reader that long
 * to finish; a page that comes later answers 410 (snapshot gone) instead of ENOENT. The
 * mtime alone is not enough: it dates the file's creation, so a generation written an
 * hour ago and retired by this very sweep's publish looked deletable at once (A15). Every
 * manifest write stamps what it retires (withRetired). The mtime grace still covers
 * generations no manifest ever named: a lockless concurrent writer's fresh generation that
 * is durable but whose manifest has not landed yet (data before pointer).
 * Invariant: never deletes a file the current manifest references, never deletes a name
 * outside GENERATION_NAME_RE (temps are removeOrphanTemps' business, unknown files stay).
 */
import { join } from "node:path";
import type { Fs } from "../../durable/mod.ts";
import { GENERATION_NAME_RE } from "./segments.ts";
import type { Manifest } from "./types.ts";

/** Unreferenced generations younger than this are kept (in-flight readers). */
export const GC_GRACE_MS = 10 * 60_000;

export const DAY_MS = 86_400_000;

/** What one gc() pass did. */
export interface GcReport {
  expiredSessions: number;
  expiredTombstones: number;
  deletedGenerations: number;
  keptYoungUnreferenced: number;
}

/** Options for {@link expireManifest}. */
export interface ExpireOptions {
  nowMs: number;
  /** Retention window; null keeps forever. */
  windowDays: number | null;
}

/** Returns a copy of `m` without expired sessions and tombstones, plus the counts. */
export function expireManifest(
  m: Manifest,
  { nowMs, windowDays }: ExpireOptions,
): { manifest: Manifest; expiredSessions: number; expiredTombstones: number } {
  if (windowDays === null) return { manifest: m, expiredSessions: 0, expiredTombstones: 0 };
  const cutoff = nowMs - windowDays * DAY_MS;
  const sessions: Manifest["sessions"] = {};
  const tombstones: Manifest["tombstones"] = {};
  let expiredSessions = 0;
  let expiredTombstones = 0;
  for (const [key, entry] of Object.entries(m.sessions)) {
    // An empty shard has newest_ts_ms 0 and expires at once; the indexer keeps sources
    // that publish nothing in memory instead (spec: "The indexer sweep").
    if (entry.newest_ts_ms < cutoff) expiredSessions++;
    else sessions[key] = entry;
  }
  for (const [key, at] of Object.entries(m.tombstones)) {
    if (at < cutoff) expiredTombstones++;
    else tombstones[key] = at;
  }
  return { manifest: { ...m, sessions, tombstones }, expiredSessions, expiredTombstones };
}

/** Every generation name `m` references. */
export function referencedGenerations(m: Manifest): Set<string> {
  const names = new Set<string>();
  for (const entry of Object.values(m.sessions)) for (const g of entry.generations) names.add(g);
  return names;
}

/**
 * `next` with its `retired` map brought up to date against `prev`, the manifest it
 * replaces: generations `prev` named and `next` does not are stamped `nowMs`; names `next`
 * references again, and stamps older than the grace (they protect nothing any more: the
 * file's mtime is older still), are dropped. Keeps the map to the last 10 minutes' churn.
 */
export function withRetired(
  prev: Manifest,
  next: Manifest,
  { nowMs, graceMs = GC_GRACE_MS }: { nowMs: number; graceMs?: number },
): Manifest {
  const live = referencedGenerations(next);
  const retired: Record<string, number> = {};
  for (const [g, at] of Object.entries(prev.retired ?? {})) {
    if (!live.has(g) && nowMs - at < graceMs) retired[g] = at;
  }
  for (const g of referencedGenerations(prev)) {
    if (!live.has(g) && !Object.hasOwn(retired, g)) retired[g] = nowMs;
  }
  const { retired: _old, ...rest } = next;
  return Object.keys(retired).length > 0 ? { ...rest, retired } : rest;
}

/** Options for {@link deleteUnreferencedGenerations}. */
export interface DeleteUnreferencedOptions {
  fs: Fs;
  nowMs: number;
  /** @default GC_GRACE_MS */
  graceMs?: number;
  /** The manifest's `retired` map: name → when it was retired. @default {} */
  retired?: Record<string, number>;
}

/** Deletes old unreferenced generation files in `genDir`. */
export async function deleteUnreferencedGenerations(
  genDir: string,
  referenced: ReadonlySet<string>,
  { fs, nowMs, graceMs = GC_GRACE_MS, retired = {} }: DeleteUnreferencedOptions,
): Promise<{ deleted: number; keptYoung: number }> {
  let deleted = 0;
  let keptYoung = 0;
  for (const e of await fs.readDir(genDir)) {
    if (!e.isFile || !GENERATION_NAME_RE.test(e.name) || referenced.has(e.name)) continue;
    const path = join(genDir, e.name);
    let mtimeMs: number | null;
    try {
      mtimeMs = (await fs.lstat(path)).mtimeMs;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    // Unknown mtime: keep (cannot prove no reader is inside the grace).
    const retiredAt = Object.hasOwn(retired, e.name) ? retired[e.name]! : null;
    if (
      mtimeMs === null || nowMs - mtimeMs < graceMs ||
      (retiredAt !== null && nowMs - retiredAt < graceMs)
    ) {
      keptYoung++;
      continue;
    }
    try {
      await fs.remove(path);
      deleted++;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return { deleted, keptYoung };
}
