/**
 * A one-line progress indicator on stderr for long sweeps: only on a TTY, only after the
 * sweep has run for a while (a quick sweep prints nothing), redrawn at most 4 times a
 * second, cleared when done.
 */
import type { SweepProgress } from "../message_search/mod.ts";

/** Returns an onProgress callback and a `done()` that clears the line. */
export function progressLine(write: (s: string) => void, o: { isTty: boolean; afterMs?: number }) {
  let lastDraw = 0;
  let drawn = false;
  const onProgress = (p: SweepProgress) => {
    if (!o.isTty || p.elapsedMs < (o.afterMs ?? 750)) return;
    const now = Date.now();
    if (now - lastDraw < 250) return;
    lastDraw = now;
    drawn = true;
    const rate = p.elapsedMs > 0 ? Math.round((p.records * 1000) / p.elapsedMs) : 0;
    write(
      `\r\x1b[2Kindexing ${p.source}: ${p.files} files, ${p.sessions} sessions, ${p.records} records (${rate}/s)`,
    );
  };
  const done = () => {
    if (drawn) write("\r\x1b[2K");
  };
  return { onProgress, done };
}
