/**
 * What the vault holds, per source and in total (`intendant vault status`): sessions
 * (and how many of them are gone from their agent, so live only here), files, versions,
 * the compressed bytes kept (each object counted once, however many versions or
 * sessions share it) against the bytes of the originals they restore (every version's
 * size), and the oldest session kept. Pure over listed catalogs.
 */
import { type Catalog, sessionGone } from "./catalog.ts";

/** Figures of one source, or of the whole vault. */
export interface VaultFigures {
  sessions: number;
  /** Sessions whose every file is gone from its agent's directory. */
  gone: number;
  files: number;
  versions: number;
  /** Compressed bytes of the objects the catalogs name (shared objects once). */
  bytes_kept: number;
  /** Bytes the kept versions restore to. */
  bytes_original: number;
  /** Earliest first_kept_ms (null: empty). */
  oldest_kept_ms: number | null;
}

/** The status of a vault. */
export interface VaultStatus {
  total: VaultFigures;
  by_source: Record<string, VaultFigures>;
  /** Catalog files that could not be read (named). */
  damaged: string[];
}

function empty(): VaultFigures {
  return {
    sessions: 0,
    gone: 0,
    files: 0,
    versions: 0,
    bytes_kept: 0,
    bytes_original: 0,
    oldest_kept_ms: null,
  };
}

/** Figures over `catalogs` (see the header). */
export function vaultStatus(catalogs: readonly Catalog[], damaged: string[] = []): VaultStatus {
  const total = empty();
  const bySource: Record<string, VaultFigures> = {};
  const seenAll = new Set<string>();
  const seenBy = new Map<string, Set<string>>();
  for (const c of catalogs) {
    const s = bySource[c.source] ??= empty();
    const seen = seenBy.get(c.source) ?? new Set<string>();
    seenBy.set(c.source, seen);
    const gone = sessionGone(c) ? 1 : 0;
    for (const x of [s, total]) {
      x.sessions++;
      x.gone += gone;
      x.files += c.files.length;
      x.oldest_kept_ms = x.oldest_kept_ms === null
        ? c.first_kept_ms
        : Math.min(x.oldest_kept_ms, c.first_kept_ms);
    }
    for (const f of c.files) {
      for (const v of f.versions) {
        s.versions++;
        total.versions++;
        s.bytes_original += v.size;
        total.bytes_original += v.size;
        for (const k of v.chunks) {
          if (!seen.has(k.o)) {
            seen.add(k.o);
            s.bytes_kept += k.z;
          }
          if (!seenAll.has(k.o)) {
            seenAll.add(k.o);
            total.bytes_kept += k.z;
          }
        }
      }
    }
  }
  return { total, by_source: bySource, damaged };
}
