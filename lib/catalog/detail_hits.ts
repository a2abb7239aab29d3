/**
 * Every hit of a query inside one session's detail, for previous/next-hit navigation:
 * the total indices of the entries whose SHOWN text (the entry's `text`, as capped at
 * ENTRY_TEXT_CAP_BYTES — what the view can mark) holds every needle of the query. The
 * query is read and folded exactly as message search reads it (parseQuery: words ANDed,
 * quoted phrases, one-letter words dropped; fold: per-character lowercase + NFD), so a
 * hit the search listed is a hit here. Tool output and tool inputs are not matched: the
 * message index never holds them either.
 * Bounds: at most DETAIL_HITS_MAX indices and DETAIL_HITS_SCAN_MAX_BYTES of text read
 * per request; either cut answers `complete: false`. A query with nothing searchable
 * (empty, only one-letter words) answers no hits rather than failing the page: `q` only
 * steers navigation. The query text never reaches an error message or a log.
 */
import { fold, parseQuery } from "../message_search/mod.ts";
import { DETAIL_HITS_MAX, DETAIL_HITS_SCAN_MAX_BYTES } from "./types.ts";

/** The folded needles of `q`, or null when it has nothing searchable. */
export function hitNeedles(q: string): string[] | null {
  try {
    return parseQuery(q).needles;
  } catch (err) {
    if (err instanceof RangeError) return null;
    throw err;
  }
}

/** Options for {@link findHits}. */
export interface FindHitsOptions {
  /** @default DETAIL_HITS_MAX */
  maxHits?: number;
  /** @default DETAIL_HITS_SCAN_MAX_BYTES */
  maxBytes?: number;
}

/**
 * Scans entries 0…count-1 in order; `textAt(i)` yields entry i's shown text (undefined:
 * none). The scan budget counts each text as its in-memory size (UTF-16: length × 2),
 * which needs no encoding pass.
 */
export async function findHits(
  count: number,
  needles: readonly string[],
  textAt: (i: number) => string | undefined | Promise<string | undefined>,
  o: FindHitsOptions = {},
): Promise<{ hits: number[]; complete: boolean }> {
  const { maxHits = DETAIL_HITS_MAX, maxBytes = DETAIL_HITS_SCAN_MAX_BYTES } = o;
  const hits: number[] = [];
  let read = 0;
  for (let i = 0; i < count; i++) {
    const text = await textAt(i);
    if (text === undefined || text === "") continue;
    read += text.length * 2;
    if (read > maxBytes) return { hits, complete: false };
    const folded = fold(text);
    if (!needles.every((n) => folded.includes(n))) continue;
    if (hits.length === maxHits) return { hits, complete: false };
    hits.push(i);
  }
  return { hits, complete: true };
}
