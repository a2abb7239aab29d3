/**
 * A `<time>` showing a relative time ("5 min ago") with the absolute local time as its
 * tooltip and machine-readable datetime. Renders nothing for a missing time.
 */
import { html } from "htm/preact";
import { absoluteTime, relativeTime } from "../lib/format.ts";

/** A relative time. */
export function RelTime({ ms, prefix = "" }: { ms: number | null | undefined; prefix?: string }) {
  if (typeof ms !== "number") return null;
  const iso = new Date(ms).toISOString();
  const text = prefix + relativeTime(ms, Date.now());
  return html`<time datetime=${iso} title=${absoluteTime(ms)}>${text}</time>`;
}
