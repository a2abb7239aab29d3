/**
 * The arena's resident form of one generation file (one segment of a session's shard):
 * parsed, folded and indexed once, then immutable — generation files are content-named,
 * so an entry never goes stale and is shared by every session and query that names it.
 * Layout, chosen so the scan touches no per-record object:
 *  - blocks: runs of consecutive records whose folded texts, joined by NUL, form one
 *    string of about BLOCK_TARGET_UNITS units (a longer record is a block of its own),
 *    each with a trigram Bloom filter; a needle never spans records (needles hold no NUL);
 *    a block holds records of one string width only (see TWO_BYTE), so an emoji does not
 *    double the memory of the ASCII around it;
 *  - per record: typed arrays (span within its block, ts, seq, flag bits, and the
 *    identity fields supersession marks key on) plus the original text, id and locator,
 *    which only hits read.
 * `bytes` is what the arena's LRU accounts: V8 sizes of every kept string, typed arrays,
 * and fixed per-record and per-block overheads fitted to the measured heap.
 */
import type { Locator } from "../locator.ts";
import type { MessageRecord, SupersessionMark } from "../record.ts";
import type { ShardSegment } from "../store/mod.ts";
import { fold } from "./fold.ts";
import type { BlockView } from "./match.ts";
import { ROLE_ASSISTANT, ROLE_USER } from "./normalize_request.ts";
import { BLOCK_TARGET_UNITS, buildBloom, buildSummary } from "./trigram.ts";

/** Flag bits per record (role bits shared with NormalizedRequest.roleMask). */
export const FLAG_TRUNCATED = 4;
export const FLAG_SUBAGENT = 8;
/**
 * Estimated bytes per record for the locator object (its strings shared, see
 * shareLocatorStrings), string headers and array slots, and per block for the view
 * object, the filter's header and array slots. Fitted to V8's heap (heapUsed after a
 * full GC) over 600 benchmark generations / 184k records: 119 MiB measured against
 * 124 MiB accounted, so the cap errs on the side of holding less.
 */
const RECORD_OVERHEAD_BYTES = 180;
const BLOCK_OVERHEAD_BYTES = 64;
/**
 * JSON bytes of a record in a generation file besides its variable strings (field names,
 * role, numbers, flags, locator kind and hash): measured 230–260 over every source's
 * fixtures. The variable strings (text, ids, locator file) are added per record.
 */
const RECORD_JSON_FIXED_BYTES = 240;
/** The segment's own fields (schema, parser_version, key, marks wrapper). */
const SEGMENT_JSON_FIXED_BYTES = 100;

// deno-lint-ignore no-control-regex
const ASCII_RE = /^[\x00-\x7f]*$/;
/**
 * V8 keeps strings whose every unit is < 0x100 as one-byte strings (1 byte a char),
 * others as two-byte; counting both at 2 would make the arena hold a third less prose
 * than its cap allows.
 */
// deno-lint-ignore no-control-regex
const TWO_BYTE = /[^\x00-\xff]/;
const enc = new TextEncoder();
/** Scratch space for measuring UTF-8 lengths without allocating (grown on demand). */
let scratch = new Uint8Array(64 * 1024);

/** UTF-8 length of a non-ASCII string. */
function utf8Length(s: string): number {
  if (scratch.length < s.length * 3) scratch = new Uint8Array(s.length * 3);
  return enc.encodeInto(s, scratch).written;
}

/** Estimated bytes of `r` in a generation file (`ascii`: its text is ASCII-only). */
function recordJsonBytes(r: MessageRecord, ascii: boolean): number {
  const loc = r.locator;
  return (ascii ? r.text.length : utf8Length(r.text)) + RECORD_JSON_FIXED_BYTES + r.id.length +
    r.session_id.length + ("file" in loc ? loc.file.length : 0) +
    (loc.kind === "external_record_id" ? loc.record_id.length : 0);
}

/** Identity fields deriveActive reads, kept so marks can be replayed without the records. */
export interface RecordIdentity {
  order: Uint32Array;
  /** -1 when absent. */
  userTurn: Int32Array;
  generation: Uint32Array;
  /** null when no record of the segment has an item id. */
  itemIds: (string | undefined)[] | null;
}

/** One resident generation. */
export interface ShardEntry {
  readonly name: string;
  readonly count: number;
  readonly blocks: readonly BlockView[];
  readonly blooms: readonly Uint32Array[];
  /** Bigram + trigram summary of the whole generation (kept after eviction, see Arena). */
  readonly summary: Uint32Array;
  readonly ts: Float64Array;
  /** NaN when the record has no seq. */
  readonly seq: Float64Array;
  /** ROLE_* | FLAG_* bits. */
  readonly flags: Uint8Array;
  readonly texts: readonly string[];
  readonly ids: readonly string[];
  readonly locators: readonly Locator[];
  readonly identity: RecordIdentity;
  readonly marks: readonly SupersessionMark[];
  readonly minTs: number;
  readonly maxTs: number;
  readonly bytes: number;
  /**
   * Estimated size of the generation file (UTF-8 text and ids plus fixed JSON per record,
   * within ~15% on real shards): what loading it read from disk, for the fresh-load
   * budget. Re-encoding the segment to measure it exactly would cost 40% of the load.
   */
  readonly diskBytes: number;
}

/** Folds and indexes a parsed segment. */
export function buildShardEntry(name: string, seg: ShardSegment): ShardEntry {
  const n = seg.records.length;
  const ts = new Float64Array(n);
  const seq = new Float64Array(n);
  const flags = new Uint8Array(n);
  const recStart = new Uint32Array(n);
  const recEnd = new Uint32Array(n);
  const order = new Uint32Array(n);
  const userTurn = new Int32Array(n);
  const generation = new Uint32Array(n);
  const texts: string[] = new Array(n);
  const ids: string[] = new Array(n);
  const locators: Locator[] = new Array(n);
  let itemIds: (string | undefined)[] | null = null;
  const blocks: BlockView[] = [];
  const blooms: Uint32Array[] = [];
  let bytes = 0;
  let diskBytes = SEGMENT_JSON_FIXED_BYTES + seg.key.length;
  let minTs = Infinity;
  let maxTs = -Infinity;
  let parts: string[] = [];
  let blockLen = 0;
  let first = 0;
  // The block's string width: V8 stores a string whose every unit is < 0x100 in one byte
  // a unit, else in two, so one CJK or emoji record would double a whole block of ASCII.
  let blockWide = false;
  const closeBlock = (last: number) => {
    const text = parts.join("\u0000");
    blocks.push({ text, first, last, recStart, recEnd });
    const bloom = buildBloom(text);
    blooms.push(bloom);
    bytes += (blockWide ? text.length * 2 : text.length) + bloom.byteLength + BLOCK_OVERHEAD_BYTES;
    parts = [];
    blockLen = 0;
    first = last;
  };
  const pool = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const r = seg.records[i]!;
    const ascii = ASCII_RE.test(r.text);
    const f = ascii ? r.text.toLowerCase() : fold(r.text);
    const wide = !ascii && TWO_BYTE.test(f);
    // Records of the other width start a block of their own (see blockWide).
    if (parts.length > 0 && wide !== blockWide) closeBlock(i);
    blockWide = wide;
    diskBytes += recordJsonBytes(r, ascii);
    if (parts.length > 0) blockLen++; // the NUL separator before every record but the first
    recStart[i] = blockLen;
    blockLen += f.length;
    recEnd[i] = blockLen;
    parts.push(f);
    ts[i] = r.ts_ms;
    if (r.ts_ms < minTs) minTs = r.ts_ms;
    if (r.ts_ms > maxTs) maxTs = r.ts_ms;
    seq[i] = r.seq ?? NaN;
    flags[i] = (r.role === "assistant" ? ROLE_ASSISTANT : ROLE_USER) |
      (r.truncated ? FLAG_TRUNCATED : 0) | (r.subagent ? FLAG_SUBAGENT : 0);
    order[i] = r.order;
    userTurn[i] = r.user_turn ?? -1;
    generation[i] = r.generation;
    if (r.item_id !== undefined) (itemIds ??= new Array(n))[i] = r.item_id;
    texts[i] = r.text;
    ids[i] = r.id;
    locators[i] = shareLocatorStrings(r.locator, r.id, pool);
    bytes += stringBytes(r.text) + stringBytes(r.id) + RECORD_OVERHEAD_BYTES;
    if (blockLen >= BLOCK_TARGET_UNITS) closeBlock(i + 1);
  }
  if (parts.length > 0) closeBlock(n);
  // Typed arrays: 8+8+1+4+4+4+4+4 bytes per record.
  bytes += n * 37;
  const summary = buildSummary(blocks.map((b) => b.text));
  return {
    name,
    count: n,
    blocks,
    blooms,
    summary,
    ts,
    seq,
    flags,
    texts,
    ids,
    locators,
    identity: { order, userTurn, generation, itemIds },
    marks: seg.marks,
    minTs,
    maxTs,
    bytes,
    diskBytes,
  };
}

/**
 * Makes equal strings of a segment's locators one string: every record of a source file
 * repeats its path, and an external record_id usually equals the record's id (JSON.parse
 * gives each its own copy: ~130 of a locator's ~265 resident bytes). Replaces fields in
 * place with equal strings, so the locator (and its encoding: same keys, same order) is
 * unchanged; the parsed segment is this build's own copy.
 */
function shareLocatorStrings(loc: Locator, id: string, pool: Map<string, string>): Locator {
  if (loc.kind === "external_record_id" && loc.record_id === id) loc.record_id = id;
  if ("file" in loc) {
    const f = pool.get(loc.file);
    if (f === undefined) pool.set(loc.file, loc.file);
    else loc.file = f;
  }
  return loc;
}

/** Resident size of a string (see TWO_BYTE). */
function stringBytes(s: string): number {
  return TWO_BYTE.test(s) ? s.length * 2 : s.length;
}
