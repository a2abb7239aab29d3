/**
 * MessageRecord and supersession marks: what every extractor produces and every shard
 * stores. Active vs superseded is NEVER stored: {@link deriveActive} recomputes it by
 * replaying the marks over the records in source order, because a later mark (a Codex
 * same-thread restore) can reactivate records an earlier mark superseded.
 * Invariants: `order` is the record's position in source order within its shard and is
 * unique; a mark's `after_order` says how many records (by order) precede it, so it only
 * affects records that existed when it was written; text is the ORIGINAL text capped at
 * RECORD_TEXT_CAP_BYTES of UTF-8, cut on a character boundary, `truncated` set.
 */
import { z } from "zod";
import { LocatorSchema } from "./locator.ts";

/** Longest text kept per record, in UTF-8 bytes. */
export const RECORD_TEXT_CAP_BYTES = 256 * 1024;

/**
 * Every source, in a FIXED order: a source's index is stored in segment files, so ids are
 * only ever appended (issue 17 added the last seven), never reordered or removed.
 */
export const SOURCES = [
  "intendant",
  "codex",
  "claude-code",
  "kimi",
  "pi",
  "gemini",
  "qwen",
  "copilot",
  "cursor",
  "droid",
  "opencode",
  "goose",
] as const;
export type Source = (typeof SOURCES)[number];

export const MessageRecordSchema = z.object({
  /** Stable id within the session: the same source bytes always mint the same id. */
  id: z.string().min(1),
  source: z.enum(SOURCES),
  session_id: z.string().min(1),
  role: z.enum(["user", "assistant"]),
  ts_ms: z.number().int(),
  text: z.string(),
  truncated: z.boolean(),
  locator: LocatorSchema,
  /** Position in source order within the shard (0-based, unique). */
  order: z.number().int().nonnegative(),
  /** Native Message.seq (SeqCut keys on it). */
  seq: z.number().int().nonnegative().optional(),
  /** Codex: index of the user turn this record belongs to (TurnCount keys on it). */
  user_turn: z.number().int().nonnegative().optional(),
  /** Codex response_item id (ItemAnchor keys on it). */
  item_id: z.string().optional(),
  /** Codex rewrite generation (GenerationRestore keys on it); 0 elsewhere. */
  generation: z.number().int().nonnegative(),
  /** Produced by a sub-agent of the session. */
  subagent: z.boolean(),
});
export type MessageRecord = z.infer<typeof MessageRecordSchema>;

const after = z.number().int().nonnegative();

export const MarkSchema = z.discriminatedUnion("kind", [
  /** Native conversation_rewound: records with seq > cut_after_seq are superseded. */
  z.object({
    kind: z.literal("seq_cut"),
    after_order: after,
    cut_after_seq: z.number().int().nonnegative(),
  }),
  /** Codex thread_rolled_back: the last num_turns active user turns of `generation`. */
  z.object({
    kind: z.literal("turn_count"),
    after_order: after,
    num_turns: z.number().int().positive(),
    generation: z.number().int().nonnegative(),
  }),
  /** Rollback anchored on an item: records of `generation` after the item are superseded. */
  z.object({
    kind: z.literal("item_anchor"),
    after_order: after,
    item_id: z.string(),
    generation: z.number().int().nonnegative(),
  }),
  /** In-place rewrite: only `active_generation` stays active among records so far. */
  z.object({
    kind: z.literal("generation_restore"),
    after_order: after,
    active_generation: z.number().int().nonnegative(),
  }),
  /** Exact set (Kimi undo, Pi/Claude abandoned branches). */
  z.object({ kind: z.literal("record_ids"), after_order: after, ids: z.array(z.string()) }),
]);
export type SupersessionMark = z.infer<typeof MarkSchema>;

/**
 * The fields supersession reads, per record index: what deriveActiveOf needs, whether the
 * records are objects (deriveActive) or a resident segment's columns (query/active.ts).
 */
export interface RecordIdentities {
  readonly count: number;
  order(i: number): number;
  seq(i: number): number | undefined;
  userTurn(i: number): number | undefined;
  itemId(i: number): string | undefined;
  generation(i: number): number;
  id(i: number): string;
}

/**
 * Replays `marks` over `records` in source order. Returns active flags aligned with the
 * input array (records need not be sorted). A mark naming something that does not exist
 * (unknown anchor, empty set) changes nothing: failing safe toward active.
 */
export function deriveActive(
  records: readonly MessageRecord[],
  marks: readonly SupersessionMark[],
): boolean[] {
  return deriveActiveOf({
    count: records.length,
    order: (i) => records[i]!.order,
    seq: (i) => records[i]!.seq,
    userTurn: (i) => records[i]!.user_turn,
    itemId: (i) => records[i]!.item_id,
    generation: (i) => records[i]!.generation,
    id: (i) => records[i]!.id,
  }, marks);
}

/** deriveActive over any record store (the single definition of supersession). */
export function deriveActiveOf(
  r: RecordIdentities,
  marks: readonly SupersessionMark[],
): boolean[] {
  const idx = Array.from({ length: r.count }, (_, i) => i).sort((a, b) => r.order(a) - r.order(b));
  const active = new Array<boolean>(r.count).fill(true);
  const sortedMarks = [...marks].sort((a, b) => a.after_order - b.after_order);
  // `seen` = indices of records with order < mark.after_order, in order.
  let cursor = 0;
  const seen: number[] = [];
  for (const m of sortedMarks) {
    while (cursor < idx.length && r.order(idx[cursor]!) < m.after_order) {
      seen.push(idx[cursor++]!);
    }
    applyMark(m, seen, r, active);
  }
  return active;
}

function applyMark(
  m: SupersessionMark,
  seen: number[],
  r: RecordIdentities,
  active: boolean[],
): void {
  switch (m.kind) {
    case "seq_cut":
      for (const i of seen) {
        const s = r.seq(i);
        if (s !== undefined && s > m.cut_after_seq) active[i] = false;
      }
      return;
    case "turn_count": {
      // Counts turns in the already-rolled-back effective history (rollbacks stack).
      const turns: number[] = [];
      for (const i of seen) {
        const t = r.userTurn(i);
        if (r.generation(i) !== m.generation || !active[i] || t === undefined) continue;
        if (turns.at(-1) !== t) turns.push(t);
      }
      const dropped = new Set(turns.slice(Math.max(0, turns.length - m.num_turns)));
      for (const i of seen) {
        const t = r.userTurn(i);
        if (r.generation(i) === m.generation && t !== undefined && dropped.has(t)) {
          active[i] = false;
        }
      }
      return;
    }
    case "item_anchor": {
      const gen = seen.filter((i) => r.generation(i) === m.generation);
      const at = gen.findIndex((i) => r.itemId(i) === m.item_id);
      if (at < 0) return;
      for (const i of gen.slice(at + 1)) active[i] = false;
      return;
    }
    case "generation_restore":
      for (const i of seen) active[i] = r.generation(i) === m.active_generation;
      return;
    case "record_ids": {
      const ids = new Set(m.ids);
      for (const i of seen) if (ids.has(r.id(i))) active[i] = false;
      return;
    }
  }
}

/** Caps text at RECORD_TEXT_CAP_BYTES of UTF-8 on a character boundary. */
export function capText(
  text: string,
  capBytes = RECORD_TEXT_CAP_BYTES,
): { text: string; truncated: boolean } {
  // Fast path: a string of n UTF-16 units encodes to at most 3n bytes.
  if (text.length * 3 <= capBytes) return { text, truncated: false };
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= capBytes) return { text, truncated: false };
  let end = capBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), truncated: true };
}
