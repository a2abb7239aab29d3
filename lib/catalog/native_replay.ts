/**
 * GET /api/session/:id/replay, paged through the spine index (spine_cache.ts): `total` is
 * the number of events the index holds, the `replay_start` facts (latest provider, model,
 * autonomy of the session_started events) are kept by the index, and a page parses only
 * its own lines (toReplayEntries turns them into entries, exactly as replaySession does
 * for a whole log). A page stops early once its lines reach REPLAY_PAGE_MAX_BYTES (at
 * least one entry is always served; `next_offset` says where to go on), so a page of
 * 5000 long lines cannot hold hundreds of MiB. A spine that cannot be read safely
 * (symlink, hard link, FIFO, swapped) is a ContainmentError; a missing one replays empty.
 */
import { ContainmentError } from "../errors.ts";
import {
  type ReadEvent,
  type ReplayEntry,
  type ReplayStart,
  toReplayEntries,
} from "../session_log/mod.ts";
import { withNativeSpine } from "./native_detail.ts";

/** Line bytes one replay page parses at most (the first entry is served whatever its size). */
export const REPLAY_PAGE_MAX_BYTES = 8 * 1024 * 1024;

/** One replay page. */
export interface ReplayPage {
  start: ReplayStart;
  entries: ReplayEntry[];
  offset: number;
  total: number;
  next_offset: number | null;
}

/** Entries [offset, offset + limit) of the native session in `dir` (fewer past the byte cap). */
export async function nativeReplay(
  dir: string,
  sessionId: string,
  o: { offset: number; limit: number },
): Promise<ReplayPage> {
  return await withNativeSpine(dir, sessionId, async (m) => {
    if (m.refused !== null && m.refused !== "missing") {
      throw new ContainmentError(`Refusing session.jsonl: ${m.refused.replace("_", " ")}`);
    }
    const idx = m.index;
    const total = idx.events;
    const events: ReadEvent[] = [];
    let bytes = 0;
    let next = o.offset;
    for (; next < Math.min(total, o.offset + o.limit); next++) {
      const len = idx.evLen.at(next);
      if (events.length > 0 && bytes + len > REPLAY_PAGE_MAX_BYTES) break;
      bytes += len;
      const event = await m.event(next);
      // A line rewritten under the reader: skipped (the next request rebuilds the index).
      if (event) events.push({ lineNo: idx.evLine.at(next), offset: idx.evOff.at(next), event });
    }
    return {
      start: {
        kind: "replay_start",
        provider: idx.provider,
        model: idx.model,
        autonomy: idx.autonomy,
        total,
      },
      entries: toReplayEntries(dir, events),
      offset: o.offset,
      total,
      next_offset: next < total ? next : null,
    };
  });
}
