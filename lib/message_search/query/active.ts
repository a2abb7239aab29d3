/**
 * Active flags for one session: supersession (record.ts deriveActiveOf, its single
 * definition) replayed over the concatenation of the session's resident segments, in
 * manifest order (a later segment's mark can supersede or reactivate records of an
 * earlier one). It reads the segments' columns in place; ids and item ids, which only
 * record_ids and item_anchor marks read, are decoded from the payload on first use and
 * kept for the derivation. A session whose segments carry no marks is all-active and
 * costs nothing.
 */
import { deriveActiveOf } from "../record.ts";
import type { SegmentView } from "../store/mod.ts";

/** Per segment, 1 = active; null when every record of the session is active. */
export type ActiveFlags = Uint8Array[] | null;

/** Derives the session's active flags from its segments (in manifest order). */
export function deriveSessionActive(entries: readonly SegmentView[]): ActiveFlags {
  if (entries.every((e) => e.marks.length === 0)) return null;
  const marks = entries.flatMap((e) => e.marks);
  // Global index → (segment, local index).
  const seg = new Uint32Array(entries.reduce((n, e) => n + e.count, 0));
  const local = new Uint32Array(seg.length);
  let k = 0;
  for (let s = 0; s < entries.length; s++) {
    for (let i = 0; i < entries[s]!.count; i++, k++) {
      seg[k] = s;
      local[k] = i;
    }
  }
  const tails = new Map<number, ReturnType<SegmentView["tail"]>>();
  const tail = (g: number) => {
    let t = tails.get(g);
    if (t === undefined) tails.set(g, t = entries[seg[g]!]!.tail(local[g]!));
    return t;
  };
  const at = (g: number) => entries[seg[g]!]!;
  const active = deriveActiveOf({
    count: seg.length,
    order: (g) => at(g).order[local[g]!]!,
    seq: (g) => {
      const s = at(g).seq[local[g]!]!;
      return Number.isNaN(s) ? undefined : s;
    },
    userTurn: (g) => {
      const t = at(g).userTurn[local[g]!]!;
      return t < 0 ? undefined : t;
    },
    itemId: (g) => tail(g).itemId,
    generation: (g) => at(g).generation[local[g]!]!,
    id: (g) => tail(g).id,
  }, marks);
  const out: Uint8Array[] = [];
  k = 0;
  for (const e of entries) {
    const a = new Uint8Array(e.count);
    for (let i = 0; i < e.count; i++) a[i] = active[k++] ? 1 : 0;
    out.push(a);
  }
  return out;
}
