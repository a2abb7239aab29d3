/**
 * One status line on stderr for work that may take a while (a cold search, a sweep): it
 * appears only on a TTY and only once the work has run `afterMs`, is redrawn in place at
 * most 4 times a second, and is erased when the work ends — so a quick command prints
 * nothing and a piped one never gets carriage returns in its output.
 */

/** Options for {@link statusLine}. */
export interface StatusLineOptions {
  isTty: boolean;
  /** Quiet period before the first draw. @default 1000 */
  afterMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** A redrawable line. */
export interface StatusLine {
  /** Offers the current text; drawn when due. `text` must already be terminal-safe. */
  update(text: string): void;
  /** Erases the line if it was drawn. */
  done(): void;
}

const REDRAW_MS = 250;

/** Creates a status line writing through `write`. */
export function statusLine(write: (s: string) => void, o: StatusLineOptions): StatusLine {
  const now = o.now ?? Date.now;
  const started = now();
  let lastDraw = 0;
  let drawn = false;
  return {
    update(text) {
      const t = now();
      if (!o.isTty || t - started < (o.afterMs ?? 1000) || t - lastDraw < REDRAW_MS) return;
      lastDraw = t;
      drawn = true;
      write(`\r\x1b[2K${text}`);
    },
    done() {
      if (drawn) write("\r\x1b[2K");
      drawn = false;
    },
  };
}
