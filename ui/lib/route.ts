/**
 * Hash routes: `#/` is the recent list, `#/session/<encoded key>?locate=…&q=…` a session
 * detail (locate: the hit's opaque locator; q: the query whose words to highlight).
 * Hash routing needs no server routes and keeps the page's own query string (for
 * example `?message_search=off`) untouched. Pure.
 */

/** A parsed route. */
export type Route =
  | { name: "list" }
  | { name: "session"; key: string; locate: string | null; q: string | null };

/** Parses `location.hash`. Anything unknown is the list. */
export function parseRoute(hash: string): Route {
  const m = /^#\/session\/([^?]+)(?:\?(.*))?$/.exec(hash);
  if (!m) return { name: "list" };
  let key: string;
  try {
    key = decodeURIComponent(m[1]!);
  } catch {
    return { name: "list" }; // a malformed escape is not a session
  }
  const p = new URLSearchParams(m[2] ?? "");
  return { name: "session", key, locate: p.get("locate") || null, q: p.get("q") || null };
}

/** The href of a session detail. */
export function sessionHref(
  key: string,
  o: { locate?: string | null; q?: string | null } = {},
): string {
  const p = new URLSearchParams();
  if (o.locate) p.set("locate", o.locate);
  if (o.q) p.set("q", o.q);
  const s = p.toString();
  return `#/session/${encodeURIComponent(key)}${s ? `?${s}` : ""}`;
}

/** True unless the page URL turns the message lane off (`?message_search=off` or `=0`). */
export function messageLaneAllowed(search: string): boolean {
  const v = new URLSearchParams(search).get("message_search");
  return !(v !== null && ["off", "0", "false", "no"].includes(v.trim().toLowerCase()));
}
