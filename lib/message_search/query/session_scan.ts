/**
 * Matching one session: every record of its resident segments that contains all needles
 * and passes the per-record filters (role, time bounds including the retention window,
 * supersession) counts toward total_hits; the HITS_PER_GROUP most recent are kept as
 * references (entry + index) so only shown hits are ever highlighted. Segments whose ts
 * range or roles miss the filters and blocks whose trigram filter rules a needle out are
 * skipped without touching their text; a candidate block's folded text is decoded from
 * the segment's bytes (one native call) for this scan only and dropped after it.
 * Errors: CorruptGenerationError when a block the match reads (or a shown hit's payload)
 * fails its checksum; the scan treats the session as damaged.
 */
import type { SegmentView } from "../store/mod.ts";
import type { ActiveFlags } from "./active.ts";
import { matchBlock } from "./match.ts";
import { HITS_PER_GROUP } from "./types.ts";

/** What a session is matched against. */
export interface SessionFilter {
  /** Folded needles, the scan's lead first. */
  needles: readonly string[];
  /** Trigram hashes per needle (null: too short for the prefilter). */
  trigrams: readonly (Uint32Array | null)[];
  roleMask: number;
  /** Inclusive ts bounds (the retention cutoff already folded into `from`). */
  from: number;
  to: number;
  includeSuperseded: boolean;
}

/** A shown-hit candidate: which record, without materializing it. */
export interface HitRef {
  entry: SegmentView;
  /** Segment position in the session (tiebreak: later segments are newer). */
  seg: number;
  i: number;
  ts: number;
  superseded: boolean;
}

/** A session's matches. */
export interface SessionMatch {
  best: number;
  total: number;
  /** Most recent first, at most HITS_PER_GROUP. */
  hits: HitRef[];
}

/** False when block `b`'s filter proves some needle absent (needles without trigrams pass). */
function blockMayMatch(e: SegmentView, b: number, trigrams: SessionFilter["trigrams"]): boolean {
  for (const t of trigrams) if (t && !e.blockMayContain(b, t)) return false;
  return true;
}

/** True when hit a sorts before b: newer ts, then later in source order. */
function newer(a: HitRef, b: HitRef): boolean {
  if (a.ts !== b.ts) return a.ts > b.ts;
  return a.seg !== b.seg ? a.seg > b.seg : a.i > b.i;
}

function keep(hits: HitRef[], h: HitRef): void {
  if (hits.length === HITS_PER_GROUP && !newer(h, hits[HITS_PER_GROUP - 1]!)) return;
  let at = hits.length;
  while (at > 0 && newer(h, hits[at - 1]!)) at--;
  hits.splice(at, 0, h);
  if (hits.length > HITS_PER_GROUP) hits.pop();
}

/** Called for each record that passes; returning true stops the walk. */
type Visit = (h: HitRef) => boolean | void;

/**
 * Walks every record of `entries` that holds all needles and passes the filters, in
 * source order (segments in manifest order). The one filter loop behind matchSession and
 * sessionMatches, so a count and a page can never disagree on what matches.
 */
function eachMatch(
  entries: readonly SegmentView[],
  active: ActiveFlags,
  f: SessionFilter,
  visit: Visit,
): void {
  for (let s = 0; s < entries.length; s++) {
    const e = entries[s]!;
    if (e.count === 0 || e.maxTs < f.from || e.minTs > f.to) continue;
    if ((e.roleMask & f.roleMask) === 0) continue;
    const act = active?.[s];
    for (let b = 0; b < e.blockCount; b++) {
      if (!blockMayMatch(e, b, f.trigrams)) continue;
      const block = {
        text: e.blockText(b),
        first: e.blockFirst(b),
        last: e.blockEnd(b),
        recStart: e.foldStart,
        recEnd: e.foldEnd,
      };
      for (const i of matchBlock(block, f.needles)) {
        const ts = e.ts[i]!;
        if ((e.flags[i]! & f.roleMask) === 0 || ts < f.from || ts > f.to) continue;
        const superseded = act !== undefined && act[i] === 0;
        if (superseded && !f.includeSuperseded) continue;
        if (visit({ entry: e, seg: s, i, ts, superseded })) return;
      }
    }
  }
}

/** Matches a session's segments (manifest order); null when nothing passes. */
export function matchSession(
  entries: readonly SegmentView[],
  active: ActiveFlags,
  f: SessionFilter,
): SessionMatch | null {
  let total = 0;
  let best = -Infinity;
  const hits: HitRef[] = [];
  eachMatch(entries, active, f, (h) => {
    total++;
    if (h.ts > best) best = h.ts;
    // Records arrive in source order, so an equal ts is newer than every kept hit:
    // only a strictly older one can be rejected without building its reference.
    if (hits.length < HITS_PER_GROUP || h.ts >= hits[HITS_PER_GROUP - 1]!.ts) keep(hits, h);
  });
  // The shown hits' payloads are read when the page renders: check them now, so a damaged
  // one fails the scan of this session (CorruptGenerationError), not the page.
  for (const h of hits) h.entry.verifyRecord(h.i);
  return total === 0 ? null : { best, total, hits };
}

/**
 * True when some record of the session passes: what a count needs. It stops at the first
 * one (a count of sessions after a page never needs their positions: the scan order puts
 * every one of them after the page's last group).
 */
export function sessionMatches(
  entries: readonly SegmentView[],
  active: ActiveFlags,
  f: SessionFilter,
): boolean {
  let found = false;
  eachMatch(entries, active, f, () => (found = true));
  return found;
}
