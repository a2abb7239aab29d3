/**
 * The append fast path's pure rules (publish.ts header, step 7): what a publisher
 * remembers of a session it completed on the server (a Tail), when a session's new local
 * state may be published from its new generations alone, and the diff and next Tail
 * that gives. No I/O: publish.ts loads the generations and asks the server whether any
 * new id is there already (a clash sends the session to the full diff).
 *
 * Invariants:
 *  - a Tail describes exactly the rows the server holds for the session while the
 *    server's sig equals `Tail.sig` (publish.ts checks that before using it);
 *  - the fast path applies only when the new generations extend the old list, carry no
 *    supersession mark, and every new record sorts after every old record and at or after
 *    every old mark's `after_order` — a mark applies only to records before its anchor
 *    (record.ts deriveActive), so every old flag stays right and every new record is
 *    active;
 *  - duplicate ids among the new records keep the first by order, as diffSession does.
 */
import type { MessageRecord, SupersessionMark } from "../message_search/mod.ts";
import type { SessionDiff } from "./publish_diff.ts";
import { pgLabel } from "./record_row.ts";

/** One session as this publisher last completed it on the server. */
export interface Tail {
  /** The sig it wrote: the tail is valid only while the server row carries it. */
  sig: string;
  generations: readonly string[];
  /** Rows the server holds for the session. */
  count: number;
  marks: readonly SupersessionMark[];
  /** Highest record order; highest mark after_order (-1 when none). */
  maxOrder: number;
  maxMarkAfter: number;
}

/** True when `now` is `before` followed by at least one more generation. */
export function extendsList(before: readonly string[], now: readonly string[]): boolean {
  if (now.length <= before.length) return false;
  for (let i = 0; i < before.length; i++) if (before[i] !== now[i]) return false;
  return true;
}

/**
 * Whether the new generations' `records` and `marks` may be published on top of `t` as
 * plain inserts (the server's ids aside, which the caller checks).
 */
export function canAppend(
  t: Tail,
  records: readonly MessageRecord[],
  marks: readonly SupersessionMark[],
): boolean {
  return marks.length === 0 &&
    records.every((r) => r.order > t.maxOrder && r.order >= t.maxMarkAfter);
}

/** The diff of an append onto `t`, and the Tail once it is published. */
export function appendDiff(
  t: Tail,
  records: readonly MessageRecord[],
  next: { sig: string; generations: readonly string[] },
): { diff: SessionDiff; tail: Tail } {
  const seen = new Set<string>();
  const inserts: number[] = [];
  let maxOrder = t.maxOrder;
  for (let i = 0; i < records.length; i++) {
    const id = pgLabel(records[i]!.id);
    if (seen.has(id)) continue;
    seen.add(id);
    inserts.push(i);
    maxOrder = Math.max(maxOrder, records[i]!.order);
  }
  const count = t.count + inserts.length;
  return {
    diff: { inserts, deletes: [], flips: [], count, destructive: false },
    tail: { ...t, ...next, count, maxOrder },
  };
}

/** The Tail of a session published by the full diff (all its records and marks). */
export function tailOf(o: {
  sig: string;
  generations: readonly string[];
  count: number;
  records: readonly MessageRecord[];
  marks: readonly SupersessionMark[];
}): Tail {
  let maxOrder = -1;
  for (const r of o.records) maxOrder = Math.max(maxOrder, r.order);
  let maxMarkAfter = -1;
  for (const k of o.marks) maxMarkAfter = Math.max(maxMarkAfter, k.after_order);
  return {
    sig: o.sig,
    generations: o.generations,
    count: o.count,
    marks: o.marks,
    maxOrder,
    maxMarkAfter,
  };
}
