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
