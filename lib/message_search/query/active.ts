/**
 * Active flags for one session: deriveActive replayed over the concatenation of the
 * session's resident segments, in manifest order (a later segment's mark can supersede
 * or reactivate records of an earlier one). The record module stays the single
 * definition of supersession; this file only feeds it the identity fields the arena
 * kept. A session whose segments carry no marks is all-active and costs nothing.
 */
import { deriveActive, type MessageRecord } from "../record.ts";
import type { ShardEntry } from "./shard_entry.ts";

/** Per segment, 1 = active; null when every record of the session is active. */
export type ActiveFlags = Uint8Array[] | null;

/** Derives the session's active flags from its segments (in manifest order). */
export function deriveSessionActive(entries: readonly ShardEntry[]): ActiveFlags {
  const marks = entries.flatMap((e) => e.marks);
  if (marks.length === 0) return null;
  // deriveActive reads only order, seq, user_turn, item_id, generation and id; the
  // arena keeps exactly those, so rebuild minimal records instead of the full ones.
  const recs: MessageRecord[] = [];
  for (const e of entries) {
    const { order, userTurn, generation, itemIds } = e.identity;
    for (let i = 0; i < e.count; i++) {
      const s = e.seq[i]!;
      recs.push({
        id: e.ids[i]!,
        order: order[i]!,
        seq: Number.isNaN(s) ? undefined : s,
        user_turn: userTurn[i]! < 0 ? undefined : userTurn[i]!,
        item_id: itemIds?.[i],
        generation: generation[i]!,
      } as MessageRecord);
    }
  }
  const active = deriveActive(recs, marks);
  const out: Uint8Array[] = [];
  let k = 0;
  for (const e of entries) {
    const a = new Uint8Array(e.count);
    for (let i = 0; i < e.count; i++) a[i] = active[k++] ? 1 : 0;
    out.push(a);
  }
  return out;
}
