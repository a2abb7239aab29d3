/**
 * `GET /api/sessions/message-search?scope=archive`: the same parameters and page as the
 * local search, answered by the archive (lib/message_search archive/: a cold scan over
 * sessions older than the window) with its `archive` block saying what it covered.
 * Never sweeps first unless asked (`refresh=1` sweeps the archive); a daemon whose main
 * store has no archive attached answers 404 archive_not_available. Runs in the same
 * search slots as every search (a cold scan is the heaviest kind).
 */
import type { Context } from "hono";
import { dirname } from "node:path";
import { archiveOf, normalizeRequest, type SearchRequest } from "../message_search/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { MessageSearchParams, parseQuery, searchRequestOf } from "./params.ts";
import { loadCursorKey } from "./cursor_key.ts";
import type { RouteDeps } from "./routes.ts";

/** The state root's cursor key per cache root, read once. */
const KEYS = new Map<string, Promise<Uint8Array>>();

/** Answers an archive search (scope=archive is already checked by the caller). */
export async function archiveMessageSearch(c: Context, d: RouteDeps): Promise<Response> {
  const archive = archiveOf(d.store);
  if (!archive) {
    return c.json({
      error: "archive_not_available",
      message: "This daemon has no archive of sessions older than its window",
    }, 404);
  }
  const url = new URL(c.req.url);
  url.searchParams.delete("scope");
  const refresh = url.searchParams.get("refresh");
  url.searchParams.delete("refresh");
  if (refresh !== null && !["0", "1", "true", "false"].includes(refresh)) {
    throw new InvalidInputError(`Invalid refresh "${refresh.slice(0, 20)}": expected 1 or 0`);
  }
  const req: SearchRequest = searchRequestOf(parseQuery(MessageSearchParams, url));
  normalizeRequest(req); // a refused request is a 400 before any sweep or slot
  if (refresh === "1" || refresh === "true") await archive.sweep();
  const cacheRoot = dirname(d.store.root);
  let key = KEYS.get(cacheRoot);
  if (!key) KEYS.set(cacheRoot, key = loadCursorKey(cacheRoot));
  const cursorKey = await key;
  const r = await d.gate!.run(() => archive.search(req, { cursorKey }));
  if (!r) {
    return c.json({ error: "busy", message: "Too many searches in flight; retry shortly" }, 429, {
      "Retry-After": "1",
    });
  }
  return c.json(r.value);
}
