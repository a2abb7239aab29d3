/**
 * Hash routes — the dashboard's state lives in the URL, so reload, Back/Forward and a
 * pasted link restore it:
 *  - `#/?q=…&source=a,b&role=user&superseded=1&sort=relevance` is the home view with its
 *    query and filters (every parameter optional; `#/` alone is the plain recent list);
 *  - `#/session/<encoded key>?locate=…&q=…` a session detail (locate: the hit's opaque
 *    locator; q: the query whose words to highlight and step through);
 *  - team scope (only when the daemon has a team): `scope=team&machine=a,b` on the home
 *    view, and `#/remote/<machine>/<encoded key>?q=…` a remote session's prose. The team
 *    fields are absent from a local state (not false/empty), so every local href and
 *    parsed route is exactly what it was before team scope existed;
 *  - the message search's order (issue 27): `sort=relevance` is "Best match"; Newest is
 *    the default and is never written, so `sort` is absent from a newest state like the
 *    team fields from a local one, and every link made before the switch still means
 *    newest. It is a preference of the view, kept in team scope too (where the lane
 *    cannot apply it yet and says so).
 * Hash routing needs no server routes and keeps the page's own query string (for example
 * `?message_search=off`) untouched. Unknown sources and roles in a pasted link are dropped,
 * not trusted. Pure.
 */
import type { SearchSort, Source } from "../api_client.ts";
import { SOURCE_LIST } from "./sources.ts";

export type Role = "user" | "assistant";

/** The home view's query and filters. */
export interface ListState {
  q: string;
  sources: Source[];
  roles: Role[];
  includeSuperseded: boolean;
  /**
   * "team": search the team database; "archive": this machine's sessions older than the
   * message window (`scope=archive`, on request); "deep": Deep Search of the agents' files
   * and the vault's copies, tool output too (`scope=deep`, on request); absent: this
   * machine's window.
   */
  scope?: "team" | "archive" | "deep";
  /** Team scope only: these machines (absent or empty: all). */
  machines?: string[];
  /** "relevance": the message search's Best match order (absent: newest). */
  sort?: "relevance";
}

/** A parsed route. */
export type Route =
  | { name: "list"; list: ListState }
  | { name: "session"; key: string; locate: string | null; q: string | null }
  | { name: "remote"; machine: string; key: string; q: string | null };

/** A machine name as the team schema allows it (anything else in a link is dropped). */
const MACHINE_RE = /^[A-Za-z0-9._-]{1,64}$/;

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
  const r = /^#\/remote\/([A-Za-z0-9._-]{1,64})\/([^?]+)(?:\?(.*))?$/.exec(hash);
  if (r) {
    let key: string;
    try {
      key = decodeURIComponent(r[2]!);
    } catch {
      return { name: "list", list: EMPTY_LIST };
    }
    const q = new URLSearchParams(r[3] ?? "").get("q") || null;
    return { name: "remote", machine: r[1]!, key, q };
  }
  const m = /^#\/session\/([^?]+)(?:\?(.*))?$/.exec(hash);
  if (!m) {
    const l = /^#\/?\?(.*)$/.exec(hash);
    if (!l) return { name: "list", list: EMPTY_LIST };
    const p = new URLSearchParams(l[1]);
    const list: ListState = {
      q: p.get("q") ?? "",
      sources: listOf(p.get("source"), SOURCE_LIST),
      roles: listOf(p.get("role"), ROLES),
      includeSuperseded: p.get("superseded") === "1",
    };
    if (p.get("sort") === "relevance") list.sort = "relevance";
    if (p.get("scope") === "archive") list.scope = "archive";
    if (p.get("scope") === "deep") list.scope = "deep";
    if (p.get("scope") === "team") {
      list.scope = "team";
      const machines = (p.get("machine") ?? "").split(",").filter((x) => MACHINE_RE.test(x));
      if (machines.length) list.machines = [...new Set(machines)].sort();
    }
    return { name: "list", list };
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
  if (s.sort === "relevance") p.set("sort", "relevance");
  if (s.scope === "archive") p.set("scope", "archive");
  if (s.scope === "deep") p.set("scope", "deep");
  if (s.scope === "team") {
    p.set("scope", "team");
    if (s.machines?.length) p.set("machine", [...s.machines].sort().join(","));
  }
  const str = p.toString();
  return str ? `#/?${str}` : "#/";
}

/** `s` searching this machine's window again (archive, deep or team scope dropped). */
export function withoutScope(s: ListState): ListState {
  const { scope: _s, machines: _m, ...local } = s;
  return local;
}

/** `s` in order `sort` (newest drops the field, so its href is the pre-switch one). */
export function withSort(s: ListState, sort: SearchSort): ListState {
  const { sort: _old, ...rest } = s;
  return sort === "relevance" ? { ...rest, sort: "relevance" } : rest;
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

/** The href of a remote (team) session's prose; `q` highlights its words. */
export function remoteHref(machine: string, key: string, o: { q?: string | null } = {}): string {
  const p = new URLSearchParams();
  if (o.q) p.set("q", o.q);
  const s = p.toString();
  return `#/remote/${machine}/${encodeURIComponent(key)}${s ? `?${s}` : ""}`;
}

/** True unless the page URL turns the message lane off (`?message_search=off` or `=0`). */
export function messageLaneAllowed(search: string): boolean {
  const v = new URLSearchParams(search).get("message_search");
  return !(v !== null && ["off", "0", "false", "no"].includes(v.trim().toLowerCase()));
}
