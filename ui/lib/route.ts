/**
 * Hash routes — the dashboard's state lives in the URL, so reload, Back/Forward and a
 * pasted link restore it:
 *  - `#/?q=…&source=a,b&role=user&superseded=1` is the home view with its query and
 *    filters (every parameter optional; `#/` alone is the plain recent list);
 *  - `#/session/<encoded key>?locate=…&q=…` a session detail (locate: the hit's opaque
 *    locator; q: the query whose words to highlight and step through).
 * Hash routing needs no server routes and keeps the page's own query string (for example
 * `?message_search=off`) untouched. Unknown sources and roles in a pasted link are dropped,
 * not trusted. Pure.
 */
import type { Source } from "../api_client.ts";
import { SOURCE_LIST } from "./sources.ts";

export type Role = "user" | "assistant";

/** The home view's query and filters. */
export interface ListState {
  q: string;
  sources: Source[];
  roles: Role[];
  includeSuperseded: boolean;
}

/** A parsed route. */
export type Route =
  | { name: "list"; list: ListState }
  | { name: "session"; key: string; locate: string | null; q: string | null };

/** The home view with nothing typed and no filter. */
export const EMPTY_LIST: ListState = { q: "", sources: [], roles: [], includeSuperseded: false };

const ROLES: readonly Role[] = ["user", "assistant"];

function listOf<T extends string>(raw: string | null, allowed: readonly T[]): T[] {
  if (!raw) return [];
  const picked = raw.split(",").filter((x): x is T => allowed.includes(x as T));
  // Display order, no duplicates: two links naming the same filters are the same state.
  return allowed.filter((x) => picked.includes(x));
}

/** Parses `location.hash`. Anything unknown is the plain list. */
export function parseRoute(hash: string): Route {
  const m = /^#\/session\/([^?]+)(?:\?(.*))?$/.exec(hash);
  if (!m) {
    const l = /^#\/?\?(.*)$/.exec(hash);
    if (!l) return { name: "list", list: EMPTY_LIST };
    const p = new URLSearchParams(l[1]);
    return {
      name: "list",
      list: {
        q: p.get("q") ?? "",
        sources: listOf(p.get("source"), SOURCE_LIST),
        roles: listOf(p.get("role"), ROLES),
        includeSuperseded: p.get("superseded") === "1",
      },
    };
  }
  let key: string;
  try {
    key = decodeURIComponent(m[1]!);
  } catch {
    return { name: "list", list: EMPTY_LIST }; // a malformed escape is not a session
  }
  const p = new URLSearchParams(m[2] ?? "");
  return { name: "session", key, locate: p.get("locate") || null, q: p.get("q") || null };
}

/** The href of the home view in state `s`. */
export function listHref(s: ListState): string {
  const p = new URLSearchParams();
  if (s.q) p.set("q", s.q);
  const sources = SOURCE_LIST.filter((x) => s.sources.includes(x));
  if (sources.length) p.set("source", sources.join(","));
  const roles = ROLES.filter((x) => s.roles.includes(x));
  if (roles.length) p.set("role", roles.join(","));
  if (s.includeSuperseded) p.set("superseded", "1");
  const str = p.toString();
  return str ? `#/?${str}` : "#/";
}

let lastList = "#/";

/** Records the home view's current href (the detail's back link returns to it). */
export function rememberListHref(href: string): void {
  lastList = href;
}

/** Where "back to the sessions" goes: the home view as it was last shown. */
export function backToListHref(): string {
  return lastList;
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
