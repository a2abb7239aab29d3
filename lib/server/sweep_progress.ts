/**
 * The sweep in progress, as the coverage endpoint shows it while the index is building:
 * per source, the transcript files met and the messages extracted so far, and which
 * source is being read now. Fed by the indexer's onProgress (called per session unit and
 * once more when a source is done); a progress event whose elapsed time went backwards
 * starts a new sweep, so a retried first sweep does not add to a failed one's counts.
 * Counts only: no paths or names, nothing from a transcript.
 */
import type { Source, SweepProgress } from "../message_search/mod.ts";

/** What `/api/coverage` carries as `sweep_progress`. */
export interface SweepProgressView {
  /** Milliseconds since the sweep started. */
  elapsed_ms: number;
  /** The source being read now. */
  current: Source;
  /** Sources met so far this sweep, in sweep order. */
  sources: Partial<Record<Source, { files: number; messages: number }>>;
}

/** A tracker: `update` from onProgress, `snapshot` from the route. */
export interface ProgressTracker {
  update(p: SweepProgress): void;
  snapshot(): SweepProgressView | null;
}

/** A fresh tracker (nothing seen yet: snapshot() is null). */
export function createProgressTracker(): ProgressTracker {
  let view: SweepProgressView | null = null;
  return {
    update(p) {
      if (view === null || p.elapsedMs < view.elapsed_ms) {
        view = { elapsed_ms: 0, current: p.source, sources: {} };
      }
      view.elapsed_ms = p.elapsedMs;
      view.current = p.source;
      view.sources[p.source] = { files: p.files, messages: p.records };
    },
    snapshot: () => view && { ...view, sources: { ...view.sources } },
  };
}
