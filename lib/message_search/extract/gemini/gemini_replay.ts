/**
 * Gemini CLI replay: events → records + supersession marks + a small persisted state, as a
 * full pass or as an exact append continuation. Pure: no I/O.
 *
 * Replay (formats-more.md §1.2–1.4, [src] `loadConversationRecord`, `rewindTo`): the live
 * message list is an ordered id → value map. A message line upserts (first position, last
 * value); `$rewindTo: X` removes X and everything after it in the current order (an X not
 * in the list clears it); a `$set.messages` checkpoint replaces the whole list.
 * Mapping to records: one record per id whose LAST value is prose (gemini_prose.ts),
 * ordered by the id's first appearance (a line or a checkpoint entry), record id = the
 * message id (unique per session; the shard is per session). Every id removed by a
 * `$rewindTo` is superseded, and un-superseded if it later reappears (line or
 * checkpoint). A checkpoint that merely omits ids (compression, abort rollback,
 * masking) supersedes nothing: compaction is not supersession. A full pass publishes
 * ONE `record_ids` mark after every record.
 *
 * Incremental rule (state stays bounded: the manifest stores it per session): the state
 * keeps the current order's length, its last {@link TAIL} ids with a digest of their
 * prose, and a fixed-size Bloom filter of every id ever seen. An appended event is applied
 * without re-reading only when its effect is certain from that:
 * - a message whose id is in the tail with the same prose digest: no change;
 * - a message whose id the filter has never seen: a new id at the end of the order;
 * - a rewind whose target is in the tail (or the tail is the whole order): the removed
 *   ids are superseded by a `record_ids` mark placed after every record so far;
 * - `$set` without messages, metadata: title facts only.
 * Anything else (changed prose, an older or superseded id coming back, a checkpoint, a
 * rewind reaching past the tail, a filter false positive) returns null and the caller
 * re-parses in full. Under those rules the append result equals a full pass: the same
 * records in the same order, the same active flags, the same state.
 */
import { createHash } from "node:crypto";
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { foldedTitle } from "../framework/plugin.ts";
import type { GeminiEvent } from "./gemini_events.ts";
import { type GeminiProse, proseOf } from "./gemini_prose.ts";

/** Ids of the current order remembered with their prose digest. */
export const TAIL = 64;
/** Bloom filter size: 8192 bits, 3 probes (≈0.5% false positives at 500 ids). */
const BLOOM_BYTES = 1024;
const BLOOM_PROBES = 3;

/** Persisted carry-over between sweeps (bounded: ≈ 1.4 KiB + 64 tail entries). */
export interface GeminiState {
  v: 1;
  /** Length of the current order. */
  n: number;
  /** The last ≤ TAIL ids of the current order, each with its prose digest ("-": none). */
  tail: [string, string][];
  /** base64 Bloom filter of every id ever seen. */
  bloom: string;
  /** Distinct ids seen (the message bound). */
  ids: number;
  /** Last `summary` (metadata or `$set`): Gemini's one-line title. */
  summary: string | null;
  /** First user prose in record order, cut for a title. */
  first_user: string | null;
  /** Why the unit was published empty (fail-closed), or null. */
  failed: string | null;
}

/** Narrows a persisted state; anything else means "no usable state" (full parse). */
export function isGeminiState(v: unknown): v is GeminiState {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  const strOrNull = (x: unknown) => x === null || typeof x === "string";
  return s.v === 1 && Number.isSafeInteger(s.n) && Number.isSafeInteger(s.ids) &&
    typeof s.bloom === "string" && Array.isArray(s.tail) &&
    s.tail.every((t) =>
      Array.isArray(t) && t.length === 2 && typeof t[0] === "string" && typeof t[1] === "string"
    ) && strOrNull(s.summary) && strOrNull(s.first_user) && strOrNull(s.failed);
}

/** Fixed facts of one pass. */
export interface GeminiPassContext {
  sessionId: string;
  /** Locator `file`: the path relative to the `.gemini` directory. */
  file: string;
  /** Records of a subagent session file. */
  subagent: boolean;
  /** Distinct message ids accepted before the unit fails closed. */
  maxMessages: number;
}

/** What a pass produced. */
export interface GeminiPassResult {
  records: MessageRecord[];
  marks: SupersessionMark[];
  state: GeminiState;
  skipped: Record<string, number>;
}

/** The prose digest the tail compares (role, time and text: any change is a change). */
export function proseDigest(p: GeminiProse | null): string {
  return p === null ? "-" : hash16Of(`${p.role}\0${p.ts_ms}\0${p.text}`);
}

function bloomProbes(id: string): number[] {
  const h = createHash("sha256").update(id).digest();
  const out: number[] = [];
  for (let k = 0; k < BLOOM_PROBES; k++) out.push(((h[2 * k]! << 8) | h[2 * k + 1]!) & 8191);
  return out;
}

function bloomDecode(b64: string): Uint8Array | null {
  try {
    const bin = atob(b64);
    if (bin.length !== BLOOM_BYTES) return null;
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    // Not base64: a damaged state, treated as no state.
    return null;
  }
}

function bloomEncode(bits: Uint8Array): string {
  let bin = "";
  for (const b of bits) bin += String.fromCharCode(b);
  return btoa(bin);
}

const bloomHas = (bits: Uint8Array, id: string) =>
  bloomProbes(id).every((i) => (bits[i >> 3]! & (1 << (i & 7))) !== 0);
function bloomAdd(bits: Uint8Array, id: string): void {
  for (const i of bloomProbes(id)) bits[i >> 3]! |= 1 << (i & 7);
}

function toRecord(
  ctx: GeminiPassContext,
  id: string,
  p: GeminiProse,
  order: number,
): MessageRecord {
  const capped = capText(p.text);
  return {
    id,
    source: "gemini",
    session_id: ctx.sessionId,
    role: p.role,
    ts_ms: p.ts_ms,
    text: capped.text,
    truncated: capped.truncated,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: id,
      file: ctx.file,
      hash: hash16Of(capped.text),
    },
    order,
    generation: 0,
    subagent: ctx.subagent,
  };
}

function summaryOf(set: Record<string, unknown>, prior: string | null): string | null {
  return typeof set.summary === "string" && set.summary.trim() !== "" ? set.summary : prior;
}

interface Slot {
  prose: GeminiProse | null;
  seq: number;
}

/** Replays every event; `failed` when the message bound is exceeded (nothing partial). */
export function fullPass(
  events: Iterable<GeminiEvent>,
  ctx: GeminiPassContext,
  skipped: Record<string, number> = {},
): GeminiPassResult | { failed: string; skipped: Record<string, number> } {
  const slots = new Map<string, Slot>();
  let order: string[] = [];
  let inOrder = new Set<string>();
  const sup = new Set<string>();
  let summary: string | null = null;
  const upsert = (id: string, msg: Record<string, unknown>) => {
    const prose = proseOf(msg, skipped);
    const slot = slots.get(id);
    if (slot) slot.prose = prose;
    else slots.set(id, { prose, seq: slots.size });
    if (!inOrder.has(id)) {
      inOrder.add(id);
      order.push(id);
    }
    sup.delete(id);
  };
  for (const e of events) {
    if (e.kind === "message") upsert(e.id, e.msg);
    else if (e.kind === "rewind") {
      const at = inOrder.has(e.id) ? order.indexOf(e.id) : 0;
      for (const id of order.splice(at)) {
        inOrder.delete(id);
        sup.add(id);
      }
    } else if (e.kind === "checkpoint") {
      [order, inOrder] = [[], new Set()];
      for (const m of e.messages) upsert(m.id, m.msg);
      summary = summaryOf(e.set, summary);
    } else if (e.kind === "set") summary = summaryOf(e.set, summary);
    else {
      for (const m of e.messages) upsert(m.id, m.msg);
      summary = summaryOf(e.meta, summary);
    }
    if (slots.size > ctx.maxMessages) return { failed: "too_many_messages", skipped };
  }
  const records: MessageRecord[] = [];
  const superseded: string[] = [];
  let firstUser: string | null = null;
  // Map iteration is insertion order = first appearance = `seq`.
  for (const [id, slot] of slots) {
    if (slot.prose === null) continue;
    records.push(toRecord(ctx, id, slot.prose, records.length));
    if (sup.has(id)) superseded.push(id);
    if (firstUser === null && slot.prose.role === "user") firstUser = foldedTitle(slot.prose.text);
  }
  const bits = new Uint8Array(BLOOM_BYTES);
  for (const id of slots.keys()) bloomAdd(bits, id);
  const state: GeminiState = {
    v: 1,
    n: order.length,
    tail: order.slice(-TAIL).map((id) => [id, proseDigest(slots.get(id)!.prose)]),
    bloom: bloomEncode(bits),
    ids: slots.size,
    summary,
    first_user: firstUser,
    failed: null,
  };
  const marks: SupersessionMark[] = superseded.length > 0
    ? [{ kind: "record_ids", after_order: records.length, ids: superseded }]
    : [];
  return { records, marks, state, skipped };
}

/**
 * Applies appended events to `prior` when their effect is certain (see the header);
 * null when only a full pass can answer. `nextOrder` = records already in the shard.
 */
export function appendPass(
  events: Iterable<GeminiEvent>,
  prior: GeminiState,
  nextOrder: number,
  ctx: GeminiPassContext,
  skipped: Record<string, number> = {},
): GeminiPassResult | null {
  if (prior.failed !== null) return null;
  const bits = bloomDecode(prior.bloom);
  if (bits === null) return null;
  const state: GeminiState = { ...prior, tail: prior.tail.map(([a, b]) => [a, b]) };
  const records: MessageRecord[] = [];
  const marks: SupersessionMark[] = [];
  for (const e of events) {
    if (e.kind === "message") {
      const prose = proseOf(e.msg, skipped);
      const digest = proseDigest(prose);
      const at = state.tail.findIndex(([id]) => id === e.id);
      if (at >= 0) {
        if (state.tail[at]![1] !== digest) return null; // Prose changed: records move.
        continue;
      }
      if (bloomHas(bits, e.id)) return null; // Older, superseded, or a false positive.
      if (state.ids + 1 > ctx.maxMessages) return null; // The full pass fails closed.
      bloomAdd(bits, e.id);
      state.ids++;
      state.n++;
      state.tail.push([e.id, digest]);
      if (state.tail.length > TAIL) state.tail.shift();
      if (prose !== null) {
        records.push(toRecord(ctx, e.id, prose, nextOrder + records.length));
        if (state.first_user === null && prose.role === "user") {
          state.first_user = foldedTitle(prose.text);
        }
      }
    } else if (e.kind === "rewind") {
      let at = state.tail.findIndex(([id]) => id === e.id);
      // Not in the tail: certain only when the tail IS the order (then Gemini clears all).
      if (at < 0 && state.n !== state.tail.length) return null;
      if (at < 0) at = 0;
      const removed = state.tail.splice(at);
      state.n -= removed.length;
      const ids = removed.filter(([, d]) => d !== "-").map(([id]) => id);
      if (ids.length > 0) {
        marks.push({ kind: "record_ids", after_order: nextOrder + records.length, ids });
      }
    } else if (e.kind === "checkpoint") return null;
    else if (e.kind === "set") state.summary = summaryOf(e.set, state.summary);
    else {
      if (e.messages.length > 0) return null;
      state.summary = summaryOf(e.meta, state.summary);
    }
  }
  state.bloom = bloomEncode(bits);
  return { records, marks, state, skipped };
}
