/**
 * Links into the dashboard that open one message (`intendant mcp` results, the
 * `intendant secrets` audit): the session detail route of the dashboard
 * (ui/lib/route.ts `sessionHref`: `#/session/<encoded key>?locate=…&q=…`) on the daemon's
 * port. Deliberately WITHOUT the dashboard token: a tool result goes into the model's
 * context, which usually leaves the machine, and the token is a credential. A browser that
 * has opened the dashboard once carries the token cookie, so the link opens there; the
 * result text says to use `intendant url` otherwise.
 */

/** The link that opens session `key` (on the hit `locator`, highlighting `q`). */
export function hitLink(
  port: number,
  key: string,
  o: { locator?: string | null; q?: string | null } = {},
): string {
  const p = new URLSearchParams();
  if (o.locator) p.set("locate", o.locator);
  if (o.q) p.set("q", o.q);
  const s = p.toString();
  return `http://127.0.0.1:${port}/#/session/${encodeURIComponent(key)}${s ? `?${s}` : ""}`;
}

/** Said once per result that carries links. */
export const LINK_NOTE =
  "Links open the Intendant dashboard (in a browser that opened `intendant url` once).";
