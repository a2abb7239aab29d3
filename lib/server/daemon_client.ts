/**
 * The daemon's own client, for a process that would otherwise open the store (`intendant
 * search`, `intendant mcp`): asking the running daemon of this state root, whose arena is
 * warm and which already keeps the index fresh. Reached over loopback with the token from
 * daemon.json (daemon_file.ts). A daemon that cannot answer — gone (connection
 * refused), not ours (401: another program on a reused port, or a rotated token), busy
 * beyond a few retries (429), failing (5xx) — is "unreachable": the caller searches the
 * store itself. Its answers to a bad request are the caller's errors, typed as the local
 * engine would throw them (a bad cursor is InvalidCursorError either way, so the CLI maps
 * both paths to the same exit code). `sort` travels only when it is not the default, so a
 * newest request is the URL every daemon knows; an older daemon refusing `sort=relevance`
 * as an unknown parameter is "unreachable" too (the caller's own engine can sort).
 */
import type { DaemonFile } from "./daemon_file.ts";
import {
  CursorExpiredError,
  InvalidCursorError,
  type SearchRequest,
  type SearchResponse,
} from "../message_search/mod.ts";
import { InvalidInputError } from "../errors.ts";

/** A page as the route answers it: the engine's page plus the coverage block. */
export type DaemonPage = SearchResponse & { coverage?: unknown };

/** Why the daemon could not be used (for the one note the CLI prints). */
export interface Unreachable {
  unreachable: string;
}

const BUSY_RETRIES = 8;
const BUSY_WAIT_MAX_MS = 2_000;

function queryString(req: SearchRequest): string {
  const p = new URLSearchParams({ q: req.q });
  if (req.limit !== undefined) p.set("limit", String(req.limit));
  if (req.cursor) p.set("cursor", req.cursor);
  if (req.include_superseded) p.set("include_superseded", "true");
  if (req.source?.length) p.set("source", req.source.join(","));
  if (req.role?.length) p.set("role", req.role.join(","));
  if (req.project) p.set("project", req.project);
  if (req.since !== undefined) p.set("since", String(req.since));
  if (req.until !== undefined) p.set("until", String(req.until));
  if (req.complete) p.set("complete", "true");
  // Only a non-default order travels: a newest request stays the URL an older daemon knows.
  if (req.sort && req.sort !== "newest") p.set("sort", req.sort);
  return p.toString();
}

/** Runs `req` on the daemon `d`; a page, or why the daemon could not be used. */
export async function searchViaDaemon(
  d: DaemonFile,
  req: SearchRequest,
  o: { signal?: AbortSignal; refresh?: boolean; archive?: boolean } = {},
): Promise<DaemonPage | Unreachable> {
  const url = `http://127.0.0.1:${d.port}/api/sessions/message-search?${queryString(req)}` +
    (o.refresh ? "&refresh=1" : "") + (o.archive ? "&scope=archive" : "");
  for (let attempt = 0;; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${d.token}`, accept: "application/json" },
        signal: o.signal,
      });
    } catch (err) {
      if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
        // A locked profile that grants no net to this port: the store is still readable.
        return { unreachable: "no network permission for the daemon's port" };
      }
      if (err instanceof TypeError) return { unreachable: "the daemon did not answer" };
      throw err;
    }
    const body = await res.json().catch(() => null) as Record<string, unknown> | null;
    const message = typeof body?.message === "string" ? body.message : `HTTP ${res.status}`;
    if (res.ok && body) return body as unknown as DaemonPage;
    if (res.status === 429 && attempt < BUSY_RETRIES) {
      const after = Number(res.headers.get("retry-after"));
      const ms = Number.isFinite(after) && after > 0 ? after * 1000 : 250;
      await new Promise((r) => setTimeout(r, Math.min(ms, BUSY_WAIT_MAX_MS)));
      continue;
    }
    if (res.status === 410) throw new CursorExpiredError(message);
    if (res.status === 400 && body?.error === "bad_cursor") throw new InvalidCursorError(message);
    if (
      res.status === 400 && req.sort === "relevance" && /unknown fields: .*\bsort\b/.test(message)
    ) {
      // A daemon started from an older checkout (its parameters are strict): the store
      // itself can still answer a relevance request.
      return { unreachable: "the daemon is older than this program and cannot sort by relevance" };
    }
    if (res.status === 400) throw new InvalidInputError(message);
    if (res.status === 401) return { unreachable: "the daemon did not accept our token" };
    if (res.status === 429) return { unreachable: "the daemon stayed busy" };
    return { unreachable: `the daemon answered HTTP ${res.status}` };
  }
}
