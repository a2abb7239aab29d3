/**
 * Short hit ids for agents (issue 27): a locator is ~200 characters of base64 that an
 * agent only passes back to read_session, printed per hit it costs most of a result's
 * bytes. search_messages prints instead `hit=<id>` — "h" and 12 base64url characters of
 * sha256(session key, locator), deterministic, so the same hit has the same id in every
 * answer — and remembers id → (session key, locator) for read_session, which accepts the
 * id (or a full locator, as before) as its `locator`. The registry is this server
 * process's memory, bounded (HIT_IDS_MAX, least recently minted dropped first): an id
 * from an earlier process or long gone is a clear error that says to search again.
 */
import { createHash } from "node:crypto";

/** Ids kept per process. */
export const HIT_IDS_MAX = 50_000;
const ID_RE = /^h[A-Za-z0-9_-]{12}$/;

const ids = new Map<string, { key: string; locator: string }>();

/** The short id of the hit `locator` of session `key`, remembered for read_session. */
export function hitId(key: string, locator: string): string {
  const h = createHash("sha256").update(key).update("\0").update(locator).digest("base64url");
  const id = `h${h.slice(0, 12)}`;
  ids.delete(id);
  ids.set(id, { key, locator });
  while (ids.size > HIT_IDS_MAX) ids.delete(ids.keys().next().value!);
  return id;
}

/** Whether `s` has the shape of a short id (not a locator). */
export function isHitId(s: string): boolean {
  return ID_RE.test(s);
}

/** The hit a short id names, or null when this process has no such id. */
export function resolveHitId(id: string): { key: string; locator: string } | null {
  return ids.get(id) ?? null;
}
