/**
 * Turns a scan outcome into the page the client sees: highlights only the hits shown,
 * applies the response budget by measuring each group's JSON as it is added (the first
 * group is always kept, so a page can never stall on an empty budget cut), and decides
 * state, partial_reason and the continuation position:
 *  - timeout           partial, no cursor (an unknown subset was scanned);
 *  - fresh-load budget partial, cursor after the last group returned (or the incoming
 *                      position when none could be returned yet);
 *  - response budget   partial, cursor after the last group that fit;
 *  - done, but sessions in scope could not be searched (damaged or quarantined shards)
 *                      partial/degraded, the cursor a ready page would carry;
 *  - done, more exist  ready, cursor after the page's last group; else ready, no cursor.
 * `degraded` (count + the first DEGRADED_LIST_MAX sessions) rides on every page whose
 * scan met such sessions, whatever its state (the contract is in types.ts).
 */
import { encodeLocator } from "../locator.ts";
import { FLAG_ASSISTANT, FLAG_SUBAGENT, FLAG_TRUNCATED } from "../store/mod.ts";
import { highlight } from "./highlight.ts";
import type { ScanOutcome } from "./run_scan.ts";
import type { Candidate } from "./scan_plan.ts";
import type { CursorPosition } from "./search_cursor.ts";
import type { HitRef } from "./session_scan.ts";
import {
  DEGRADED_LIST_MAX,
  type DegradedSession,
  type DegradedSessions,
  type SearchGroup,
  type SearchHit,
  type SearchResponse,
} from "./types.ts";

/** Bytes reserved for the envelope (state, window_days, cursor, took_ms). */
const ENVELOPE_BYTES = 512;

const enc = new TextEncoder();

function renderHit(h: HitRef, needles: readonly string[], loose: readonly RegExp[]): SearchHit {
  const e = h.entry;
  const i = h.i;
  // Decoded from the segment's payload only now, for the few hits a page shows.
  const hl = highlight(e.text(i), needles, loose);
  const { id, locator } = e.tail(i);
  const flags = e.flags[i]!;
  const seq = e.seq[i]!;
  return {
    record_id: id,
    role: flags & FLAG_ASSISTANT ? "assistant" : "user",
    ts_ms: h.ts,
    seq: Number.isNaN(seq) ? null : seq,
    superseded: h.superseded,
    truncated: (flags & FLAG_TRUNCATED) !== 0,
    subagent: (flags & FLAG_SUBAGENT) !== 0,
    snippet: hl.snippet,
    snippet_offset_bytes: hl.snippetOffsetBytes,
    snippet_cut_end: hl.cutEnd,
    ranges: hl.ranges,
    locator: encodeLocator(locator),
  };
}

/**
 * Renders one group with its shown hits highlighted (`loose`: accent-insensitive matchers
 * of a relevance page, marked as well).
 */
export function renderGroup(
  c: Candidate,
  needles: readonly string[],
  loose: readonly RegExp[] = [],
): SearchGroup {
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
    hits: c.match.hits.map((h) => renderHit(h, needles, loose)),
  };
}

/** The page part of a response; the caller signs `next` into a cursor. */
export type RenderedPage =
  & Pick<SearchResponse, "state" | "partial_reason" | "groups" | "degraded">
  & { next: CursorPosition | null | undefined };

/** The response's `degraded` block, or undefined when every session could be searched. */
export function degradedOf(list: readonly DegradedSession[]): DegradedSessions | undefined {
  if (list.length === 0) return undefined;
  return {
    count: list.length,
    lost: list.filter((d) => d.reason === "source_gone").length,
    sessions: list.slice(0, DEGRADED_LIST_MAX),
  };
}

/**
 * Renders candidates in order until the response budget is spent, each group's JSON
 * measured as it is added; the first group is always kept (a page never stalls on an
 * empty budget cut). `cut`: a group did not fit.
 */
export function fitGroups<T>(
  items: readonly T[],
  render: (item: T) => SearchGroup,
  o: { budgetBytes: number; degraded: DegradedSessions | undefined },
): { groups: SearchGroup[]; cut: boolean } {
  // The degraded block rides in the same response: its bytes come out of the budget.
  let used = ENVELOPE_BYTES + (o.degraded ? enc.encode(JSON.stringify(o.degraded)).length : 0);
  const groups: SearchGroup[] = [];
  for (const item of items) {
    const g = render(item);
    const size = enc.encode(JSON.stringify(g)).length + 1;
    if (groups.length > 0 && used + size > o.budgetBytes) return { groups, cut: true };
    used += size;
    groups.push(g);
  }
  return { groups, cut: false };
}

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
  const degraded = degradedOf(scan.degraded);
  const { groups, cut } = fitGroups(
    scan.groups.slice(0, o.limit),
    (c) => renderGroup(c, o.needles),
    { budgetBytes: o.budgetBytes, degraded },
  );
  const lastPos = (): CursorPosition | null => {
    const g = groups.at(-1);
    return g ? { best: g.best_ts_ms, key: g.session_key } : o.from;
  };
  const withDegraded = (p: RenderedPage): RenderedPage => degraded ? { ...p, degraded } : p;
  if (scan.stop === "timeout") {
    return withDegraded({ state: "partial", partial_reason: "timeout", groups, next: undefined });
  }
  if (cut || scan.stop === "budget") {
    return withDegraded({ state: "partial", partial_reason: "budget", groups, next: lastPos() });
  }
  const more = scan.groups.length > o.limit;
  const next = more ? lastPos() : undefined;
  if (degraded) return { state: "partial", partial_reason: "degraded", degraded, groups, next };
  return { state: "ready", groups, next };
}
