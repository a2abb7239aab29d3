/**
 * Time and count formatting for the dashboard: relative times for scanning ("3 min
 * ago"), absolute local times for tooltips, compact counts. Pure (callers pass `now`).
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "5 min ago", "3 h ago", "2 d ago", then a local date. */
export function relativeTime(ms: number, now: number): string {
  const d = now - ms;
  if (d < 45_000) return "just now";
  if (d < HOUR) return `${Math.round(d / MINUTE)} min ago`;
  if (d < DAY) return `${Math.round(d / HOUR)} h ago`;
  if (d < 14 * DAY) return `${Math.round(d / DAY)} d ago`;
  return new Date(ms).toLocaleDateString();
}

/** A full local date and time. */
export function absoluteTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

/** "1 message", "12 messages". */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? word : many}`;
}

/**
 * A result count that settles: "20 of 57 sessions" when the server knows the total, "20+
 * sessions" when more exist and how many is unknown (a cursor, or a page cut short), "12
 * sessions" when the page is all there is. Never "so far" on a finished answer.
 */
export function sessionsCount(shown: number, o: { total: number | null; more: boolean }): string {
  if (o.total !== null && o.total > shown) {
    return `${shown.toLocaleString()} of ${plural(o.total, "session")}`;
  }
  if (o.total !== null || !o.more) return plural(shown, "session");
  return shown === 0 ? "0 sessions so far" : `${shown.toLocaleString()}+ sessions`;
}

/** "512 B", "8 KiB", "1.5 MiB" (binary units, one decimal at most). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const [v, unit] = n < 1024 * 1024 ? [n / 1024, "KiB"] : [n / (1024 * 1024), "MiB"];
  return `${v >= 100 ? Math.round(v) : Number(v.toFixed(1))} ${unit}`;
}

/** "850 ms", "3.2 s", "4 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * The index's per-message cap as users read it. The server's RECORD_TEXT_CAP_BYTES is not
 * imported (a value import would pull server code into the bundle); format_test.ts keeps
 * the two equal.
 */
export const RECORD_CAP_KIB = 256;
export const RECORD_CAP_LABEL = `cut at ${RECORD_CAP_KIB} KiB`;

/** Characters of an id a card shows. */
export const SHORT_ID_CHARS = 8;

/**
 * The first SHORT_ID_CHARS characters of an id, after a word prefix that every id of a
 * source shares (Kimi's `session_<uuid>` would otherwise show as "session_" on every card).
 */
export function shortId(id: string): string {
  const prefix = /^[a-z]+[_-](?=[0-9a-f]{8})/i.exec(id);
  return [...(prefix ? id.slice(prefix[0].length) : id)].slice(0, SHORT_ID_CHARS).join("");
}
