/**
 * Sweep progress on stderr, per source (files met, messages extracted), for `index` and
 * for `serve`'s first backfill. On a TTY: one line redrawn in place, only after the sweep
 * has run for a while (a quick sweep prints nothing), at most 4 times a second, cleared
 * by `done()`. Not on a TTY (a log, a pipe): nothing by default; with `plainEveryMs`, one
 * plain line per that period once the sweep has run past `afterMs`, so a long backfill
 * shows it is alive in a log without flooding it.
 */
import type { SweepProgress } from "../message_search/mod.ts";

/** Options for {@link progressLine}. */
export interface ProgressLineOptions {
  isTty: boolean;
  /** Nothing is shown before the sweep has run this long. @default 750 */
  afterMs?: number;
  /** Off a TTY, a plain line at most this often; undefined prints nothing. */
  plainEveryMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** Redraw period on a TTY. */
const TTY_REDRAW_MS = 250;

/** The line's text (no line end). */
export function progressText(p: SweepProgress, totalRecords: number): string {
  const rate = p.elapsedMs > 0 ? Math.round((totalRecords * 1000) / p.elapsedMs) : 0;
  return `indexing ${p.source}: ${p.files} files, ${p.records} messages (${totalRecords} messages in all, ${rate}/s)`;
}

/** Returns an onProgress callback and a `done()` that clears the line. */
export function progressLine(write: (s: string) => void, o: ProgressLineOptions) {
  const now = o.now ?? Date.now;
  const afterMs = o.afterMs ?? 750;
  let lastDraw = 0;
  let drawn = false;
  // Messages of the sources already finished this sweep, plus the current one's.
  const bySource = new Map<string, number>();
  const onProgress = (p: SweepProgress) => {
    bySource.set(p.source, p.records);
    if (p.elapsedMs < afterMs) return;
    const period = o.isTty ? TTY_REDRAW_MS : o.plainEveryMs;
    if (period === undefined) return;
    const t = now();
    if (lastDraw !== 0 && t - lastDraw < period) return;
    lastDraw = t;
    const total = [...bySource.values()].reduce((a, b) => a + b, 0);
    if (o.isTty) {
      drawn = true;
      write(`\r\x1b[2K${progressText(p, total)}`);
    } else write(progressText(p, total) + "\n");
  };
  const done = () => {
    if (drawn) write("\r\x1b[2K");
    drawn = false;
    bySource.clear();
    lastDraw = 0;
  };
  return { onProgress, done };
}
