/**
 * Keeps lexicon.pack current (lexicon_pack.ts, lexicon_build.ts): reads the manifest's
 * live generations and the lexicon on disk, and when the lexicon is stale (lexiconStale)
 * or missing rebuilds it incrementally and renames it in. Runs off every query's path —
 * the daemon's indexer starts it after a sweep that published (at most one in flight per
 * store, see Store.refreshLexicon) — and never under the writer lock: the file is a cache
 * written whole through writeFileAtomic, so two writers racing only waste work, and a
 * reader sees the old file or the new one. A generation collected while the build reads
 * is left uncovered (its read fails as missing), which only costs the next query a summary
 * check; a lexicon naming generations that are no longer live is harmless (readers only
 * consult it for generations they are about to search).
 */
import type { Fs } from "../../durable/mod.ts";
import { NotFoundError } from "../../errors.ts";
import { buildLexicon, lexiconStale } from "./lexicon_build.ts";
import { readLexicon, writeLexicon } from "./lexicon_pack.ts";
import { CorruptGenerationError } from "./generation_error.ts";
import type { SegmentView } from "./segment_view.ts";
import type { TermsView } from "./segment_terms.ts";
import type { Manifest } from "./types.ts";

/** What a refresh did. */
export interface LexiconRefresh {
  /** False when the lexicon on disk was current enough (nothing written). */
  built: boolean;
  /** Generations the lexicon now covers, and live generations. */
  covered: number;
  live: number;
  /** Generations whose TERMS this refresh read. */
  read: number;
  entries: number;
  bytes: number;
  ms: number;
}

/** What refreshLexicon needs from its store. */
export interface LexiconRefreshInput {
  fs: Fs;
  root: string;
  manifest: Manifest;
  loadSegment: (name: string) => Promise<SegmentView>;
  /** Rebuild even when the lexicon is not stale (tests, `--force`). */
  force?: boolean;
  pause?: () => Promise<void>;
}

/** The generations the manifest's sessions reference (quarantined entries name none). */
export function liveGenerations(m: Manifest): string[] {
  const out = new Set<string>();
  for (const e of Object.values(m.sessions)) for (const g of e.generations) out.add(g);
  return [...out];
}

/** Refreshes lexicon.pack (see the header). */
export async function refreshLexicon(x: LexiconRefreshInput): Promise<LexiconRefresh> {
  const t0 = performance.now();
  const live = liveGenerations(x.manifest);
  const prev = await readLexicon(x.fs, x.root);
  const done = (
    o: { built: boolean; covered: number; read: number; entries: number; bytes: number },
  ) => ({
    ...o,
    live: live.length,
    ms: Math.round(performance.now() - t0),
  });
  if (!x.force && !lexiconStale(prev?.view.index ?? null, live)) {
    const covered = prev ? live.filter((g) => prev.view.index.has(g)).length : 0;
    return done({ built: false, covered, read: 0, entries: prev?.view.size ?? 0, bytes: 0 });
  }
  const terms = async (name: string): Promise<TermsView | null> => {
    try {
      const seg = await x.loadSegment(name);
      const t = seg.terms();
      t.vocab(); // decoded and its separators checked here, where damage is caught
      return t;
    } catch (err) {
      if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return null;
      throw err;
    }
  };
  const b = await buildLexicon({ live, previous: prev?.view ?? null, terms, pause: x.pause });
  await writeLexicon(x.fs, x.root, b.bytes);
  return done({
    built: true,
    covered: b.gens,
    read: b.read,
    entries: b.entries,
    bytes: b.bytes.length,
  });
}
