/**
 * Deleting a native session for good (the CLI and the API share this). The index shard
 * is tombstoned FIRST, so even if removing the directory fails halfway the session can
 * never reappear in search from a stale source (the upstream design never tombstoned);
 * then the directory is removed.
 */
import { sessionKey, type Store } from "../message_search/mod.ts";
import { isInside } from "../durable/mod.ts";
import { ContainmentError } from "../errors.ts";

/** Tombstones `intendant:<sessionId>` in `store`, then removes `dir` (which must be under logsDir). */
export async function deleteNativeSession(
  d: { store: Store; logsDir: string },
  sessionId: string,
  dir: string,
): Promise<void> {
  if (!isInside(dir, d.logsDir) || dir === d.logsDir) {
    throw new ContainmentError(`Refusing to delete "${dir}": not a session under "${d.logsDir}"`);
  }
  await d.store.deleteSession(sessionKey("intendant", sessionId));
  await Deno.remove(dir, { recursive: true });
}
