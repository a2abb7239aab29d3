/**
 * Turns a scan outcome into the page the client sees: highlights only the hits shown,
 * applies the response budget by measuring each group's JSON as it is added (the first
 * group is always kept, so a page can never stall on an empty budget cut), and decides
 * state, partial_reason and the continuation position:
 *  - timeout           partial, no cursor (an unknown subset was scanned);
 *  - fresh-load budget partial, cursor after the last group returned (or the incoming
 *                      position when none could be returned yet);
 *  - response budget   partial, cursor after the last group that fit;
 *  - done, more exist  ready, cursor after the page's last group; else ready, no cursor.
 */
import { encodeLocator } from "../locator.ts";
import { highlight } from "./highlight.ts";
import { ROLE_ASSISTANT } from "./normalize_request.ts";
import type { ScanOutcome } from "./run_scan.ts";
import type { Candidate } from "./scan_plan.ts";
import type { CursorPosition } from "./search_cursor.ts";
import type { HitRef } from "./session_scan.ts";
import { FLAG_SUBAGENT, FLAG_TRUNCATED } from "./shard_entry.ts";
import type { SearchGroup, SearchHit, SearchResponse } from "./types.ts";

/** Bytes reserved for the envelope (state, window_days, cursor, took_ms). */
const ENVELOPE_BYTES = 512;

const enc = new TextEncoder();

function renderHit(h: HitRef, needles: readonly string[]): SearchHit {
  const e = h.entry;
  const i = h.i;
  const hl = highlight(e.texts[i]!, needles);
  const flags = e.flags[i]!;
  const seq = e.seq[i]!;
  return {
    record_id: e.ids[i]!,
    role: flags & ROLE_ASSISTANT ? "assistant" : "user",
    ts_ms: h.ts,
    seq: Number.isNaN(seq) ? null : seq,
    superseded: h.superseded,
    truncated: (flags & FLAG_TRUNCATED) !== 0,
    subagent: (flags & FLAG_SUBAGENT) !== 0,
    snippet: hl.snippet,
    snippet_offset_bytes: hl.snippetOffsetBytes,
    ranges: hl.ranges,
    locator: encodeLocator(e.locators[i]!),
  };
}

/** Renders one group with its shown hits highlighted. */
export function renderGroup(c: Candidate, needles: readonly string[]): SearchGroup {
  const e = c.session.entry;
  return {
    session_key: c.session.key,
    source: e.source,
    session_id: e.session_id,
    best_ts_ms: c.match.best,
    total_hits: c.match.total,
    source_gone: e.source_gone,
    title: e.meta.title,
    project: e.meta.project,
    hits: c.match.hits.map((h) => renderHit(h, needles)),
  };
}

/** The page part of a response; the caller signs `next` into a cursor. */
export type RenderedPage =
  & Pick<SearchResponse, "state" | "partial_reason" | "groups">
  & { next: CursorPosition | null | undefined };

/**
 * Renders at most `limit` groups within `budgetBytes`. `next` is undefined when no
 * cursor is due, else the position to resume after (null = from the top).
 */
export function renderPage(
  scan: ScanOutcome,
  o: {
    needles: readonly string[];
    limit: number;
    budgetBytes: number;
    from: CursorPosition | null;
  },
): RenderedPage {
  const groups: SearchGroup[] = [];
  let used = ENVELOPE_BYTES;
  let cut = false;
  for (const c of scan.groups.slice(0, o.limit)) {
    const g = renderGroup(c, o.needles);
    const size = enc.encode(JSON.stringify(g)).length + 1;
    if (groups.length > 0 && used + size > o.budgetBytes) {
      cut = true;
      break;
    }
    used += size;
    groups.push(g);
  }
  const lastPos = (): CursorPosition | null => {
    const g = groups.at(-1);
    return g ? { best: g.best_ts_ms, key: g.session_key } : o.from;
  };
  if (scan.stop === "timeout") {
    return { state: "partial", partial_reason: "timeout", groups, next: undefined };
  }
  if (cut || scan.stop === "budget") {
    return { state: "partial", partial_reason: "budget", groups, next: lastPos() };
  }
  const more = scan.groups.length > o.limit;
  return { state: "ready", groups, next: more ? lastPos() : undefined };
}
