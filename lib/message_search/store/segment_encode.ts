/**
 * encodeSegment: a shard segment (records + marks) → the exact bytes of its `.seg` file
 * (segment_layout.ts) and its content name. Pure and worker-safe: no I/O and no Deno.*
 * call, so extraction workers encode where records are produced and the publisher only
 * writes the bytes. Folding, block building and the Bloom filters happen here, once per
 * segment, instead of at every load.
 * Blocks: runs of consecutive records whose folded texts, joined by NUL, form one string
 * of about BLOCK_TARGET_UNITS units (a longer record is a block of its own); a needle
 * never spans records (needles hold no NUL). A block holds records of one width only: a
 * block whose every unit is below U+0100 is stored (and, decoded, held by V8) one byte a
 * unit, so one CJK or emoji record does not double a whole block of ASCII. The term
 * dictionary (TERMS, segment_terms.ts) is built from the same folded texts.
 * Errors: TypeError for a segment or record the schemas refuse (the store rejects the
 * update as "invalid"; writing it would poison every later read), naming the field.
 */
import { hash16Of } from "../locator.ts";
import { MarkSchema, SOURCES } from "../record.ts";
import { fold } from "../query/fold.ts";
import { BLOCK_TARGET_UNITS, buildBloom, buildSummary } from "../query/trigram.ts";
import { checkRecord } from "./record_check.ts";
import {
  align8,
  BLOCK_FIELDS,
  BLOCKS,
  BLOOMS,
  columnLayout,
  COLUMNS,
  crcOf,
  FLAG_ASSISTANT,
  FLAG_FOREIGN,
  FLAG_ITEM,
  FLAG_SUBAGENT,
  FLAG_TRUNCATED,
  FLAG_USER,
  FOLD_LATIN1,
  FOLD_UTF16,
  FOLDED,
  H_BLOCKS,
  H_CRC,
  H_CRCS,
  H_FORMAT,
  H_MAX_TS,
  H_MIN_TS,
  H_PARSER,
  H_RECORDS,
  H_ROLES,
  H_SESSION,
  H_SOURCE,
  H_STRINGS,
  H_TABLE,
  HEADER_BYTES,
  KEY,
  MAGIC,
  MARKS,
  NONE,
  ORIG_CASED,
  ORIG_FOLDED,
  ORIG_UTF16,
  PAYLOAD,
  SECTION_COUNT,
  STRINGS,
  SUMMARY,
  TERMS,
} from "./segment_layout.ts";
import { ByteWriter, StringTable, writeLocator } from "./segment_tail.ts";
import { buildTerms } from "./segment_terms.ts";
import { SEGMENT_SCHEMA, type ShardSegment } from "./types.ts";

/** A segment file's exact bytes and its name (`<hash16>.seg`). */
export interface EncodedSegment {
  bytes: Uint8Array;
  name: string;
}

// deno-lint-ignore no-control-regex
const ASCII_RE = /^[\x00-\x7f]*$/;
// deno-lint-ignore no-control-regex
const TWO_BYTE = /[^\x00-\xff]/;
const MARKS_SCHEMA = MarkSchema.array();
const enc = new TextEncoder();

/** The content name of segment bytes. */
export function segmentName(bytes: Uint8Array): string {
  return `${hash16Of(bytes)}.seg`;
}

const CAPITAL = /[A-Z]/;

/**
 * Appends one bit per unit of ASCII `text` (bit j of byte j >> 3: unit j is a capital)
 * and returns the bytes written; nothing when it has no capital.
 */
function writeCapitals(w: ByteWriter, text: string): number {
  if (!CAPITAL.test(text)) return 0;
  const n = (text.length + 7) >> 3;
  const b = w.reserve(n);
  const at = w.length;
  b.fill(0, at, at + n);
  for (let j = 0; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c >= 65 && c <= 90) b[at + (j >> 3)]! |= 1 << (j & 7);
  }
  w.length += n;
  return n;
}

/** Per-record columns while encoding. */
function newColumns(n: number) {
  return {
    ts: new Float64Array(n),
    seq: new Float64Array(n),
    order: new Uint32Array(n),
    userTurn: new Int32Array(n),
    generation: new Uint32Array(n),
    foldStart: new Uint32Array(n),
    foldEnd: new Uint32Array(n),
    payOff: new Uint32Array(n + 1),
    origLen: new Uint32Array(n),
    flags: new Uint8Array(n),
  };
}
type Columns = ReturnType<typeof newColumns>;

/** Encodes `segment` (see the header). */
export function encodeSegment(segment: ShardSegment): EncodedSegment {
  const { key, records } = segment;
  if (segment.schema !== SEGMENT_SCHEMA) {
    throw new TypeError(`Cannot encode a segment of schema "${segment.schema}"`);
  }
  const pv = segment.parser_version;
  if (!Number.isSafeInteger(pv) || pv < 0 || pv > NONE - 1) {
    throw new TypeError(`Cannot encode a segment of parser version "${pv}"`);
  }
  if (typeof key !== "string" || !Array.isArray(records)) {
    throw new TypeError("Cannot encode a segment without a key and a record list");
  }
  const marks = MARKS_SCHEMA.safeParse(segment.marks);
  if (!marks.success) throw new TypeError(`Cannot encode the marks of "${key}": invalid`);
  const n = records.length;
  const cols = newColumns(n);
  const strings = new StringTable();
  const folded = new ByteWriter(64 * 1024);
  const payload = new ByteWriter(64 * 1024);
  const blocks: number[] = [];
  const blooms: Uint32Array[] = [];
  const blockTexts: string[] = [];
  const foldedTexts: string[] = new Array(n);
  let bloomWords = 0;
  let roles = 0;
  let minTs = n > 0 ? Infinity : 0;
  let maxTs = n > 0 ? -Infinity : 0;
  const r0 = records[0];
  const commonSource = r0 ? SOURCES.indexOf(r0.source) : NONE;
  const commonSession = r0 ? strings.ref(r0.session_id) : NONE;
  // The open block: its folded parts, units so far, first record, width and ASCII-ness.
  let parts: string[] = [];
  let blockLen = 0;
  let first = 0;
  let blockWide = false;
  let blockAscii = true;
  const closeBlock = (end: number) => {
    const text = parts.join("\u0000");
    const off = folded.length;
    if (blockWide) folded.utf16(text);
    else folded.latin1(text, blockAscii);
    const bloom = buildBloom(text);
    blocks.push(off, folded.length - off, first, end, blockWide ? FOLD_UTF16 : FOLD_LATIN1);
    // Every record of the block has written its payload by now (the block closes before
    // the next record's starts): its payloads are [payOff[first], payload.length).
    const foldedCrc = crcOf(folded.view().subarray(off));
    const payloadCrc = crcOf(payload.view().subarray(cols.payOff[first]!));
    blocks.push(bloomWords, bloom.length, foldedCrc, payloadCrc);
    blooms.push(bloom);
    bloomWords += bloom.length;
    blockTexts.push(text);
    parts = [];
    blockLen = 0;
    first = end;
    blockAscii = true;
  };
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    const bad = checkRecord(r);
    if (bad !== null) {
      throw new TypeError(`Cannot encode record ${i} of "${key}": invalid field "${bad}"`);
    }
    const ascii = ASCII_RE.test(r.text);
    const f = ascii ? r.text.toLowerCase() : fold(r.text);
    const wide = !ascii && TWO_BYTE.test(f);
    if (parts.length > 0 && wide !== blockWide) closeBlock(i);
    blockWide = wide;
    blockAscii &&= ascii;
    if (parts.length > 0) blockLen++; // the NUL before every record but the block's first
    cols.foldStart[i] = blockLen;
    blockLen += f.length;
    cols.foldEnd[i] = blockLen;
    parts.push(f);
    foldedTexts[i] = f;
    const role = r.role === "assistant" ? FLAG_ASSISTANT : FLAG_USER;
    roles |= role;
    if (r.ts_ms < minTs) minTs = r.ts_ms;
    if (r.ts_ms > maxTs) maxTs = r.ts_ms;
    cols.ts[i] = r.ts_ms;
    cols.seq[i] = r.seq ?? NaN;
    cols.order[i] = r.order;
    cols.userTurn[i] = r.user_turn ?? -1;
    cols.generation[i] = r.generation;
    cols.payOff[i] = payload.length;
    let flags = role | (r.truncated ? FLAG_TRUNCATED : 0) | (r.subagent ? FLAG_SUBAGENT : 0);
    if (ascii) {
      // Its folded text is its lowercasing, already in FOLDED: only the capitals are kept.
      cols.origLen[i] = writeCapitals(payload, r.text);
      flags |= cols.origLen[i] === 0 ? ORIG_FOLDED : ORIG_CASED;
    } else if (r.text.isWellFormed()) cols.origLen[i] = payload.utf8(r.text);
    else {
      flags |= ORIG_UTF16;
      payload.utf16(r.text);
      cols.origLen[i] = r.text.length * 2;
    }
    payload.blob(r.id);
    writeLocator(payload, r.locator, { id: r.id, strings });
    if (r.item_id !== undefined) {
      flags |= FLAG_ITEM;
      payload.blob(r.item_id);
    }
    if (SOURCES.indexOf(r.source) !== commonSource || strings.ref(r.session_id) !== commonSession) {
      flags |= FLAG_FOREIGN;
      payload.u8(SOURCES.indexOf(r.source));
      payload.varint(strings.ref(r.session_id));
    }
    cols.flags[i] = flags;
    if (blockLen >= BLOCK_TARGET_UNITS) closeBlock(i + 1);
  }
  if (parts.length > 0) closeBlock(n);
  cols.payOff[n] = payload.length;
  const keyBlob = new ByteWriter(key.length + 16);
  keyBlob.blob(key);
  const table = new ByteWriter(256);
  for (const s of strings.list) table.blob(s);
  const bloomBytes = new Uint32Array(bloomWords);
  let at = 0;
  for (const b of blooms) {
    bloomBytes.set(b, at);
    at += b.length;
  }
  const sections: Uint8Array[] = [];
  sections[KEY] = keyBlob.view();
  sections[MARKS] = enc.encode(JSON.stringify(marks.data));
  sections[STRINGS] = table.view();
  sections[COLUMNS] = columnBytes(cols, n);
  sections[BLOCKS] = new Uint8Array(Uint32Array.from(blocks).buffer);
  sections[BLOOMS] = new Uint8Array(bloomBytes.buffer);
  sections[SUMMARY] = new Uint8Array(buildSummary(blockTexts).buffer);
  sections[TERMS] = buildTerms(foldedTexts);
  sections[FOLDED] = folded.view();
  sections[PAYLOAD] = payload.view();
  const bytes = assemble(sections, {
    pv,
    n,
    blocks: blocks.length / BLOCK_FIELDS,
    strings: strings.list.length,
    minTs,
    maxTs,
    roles,
    commonSource,
    commonSession,
  });
  return { bytes, name: segmentName(bytes) };
}

/** The COLUMNS section of `cols`. */
function columnBytes(cols: Columns, n: number): Uint8Array {
  const l = columnLayout(n);
  const out = new Uint8Array(l.length);
  const b = out.buffer;
  new Float64Array(b, l.ts, n).set(cols.ts);
  new Float64Array(b, l.seq, n).set(cols.seq);
  new Uint32Array(b, l.order, n).set(cols.order);
  new Int32Array(b, l.userTurn, n).set(cols.userTurn);
  new Uint32Array(b, l.generation, n).set(cols.generation);
  new Uint32Array(b, l.foldStart, n).set(cols.foldStart);
  new Uint32Array(b, l.foldEnd, n).set(cols.foldEnd);
  new Uint32Array(b, l.payOff, n + 1).set(cols.payOff);
  new Uint32Array(b, l.origLen, n).set(cols.origLen);
  out.set(cols.flags, l.flags);
  return out;
}

interface HeaderFacts {
  pv: number;
  n: number;
  blocks: number;
  strings: number;
  minTs: number;
  maxTs: number;
  roles: number;
  commonSource: number;
  commonSession: number;
}

/** Header + sections (8-aligned, zero gaps), every crc filled in. */
function assemble(sections: Uint8Array[], h: HeaderFacts): Uint8Array {
  const offsets: number[] = [];
  let at = HEADER_BYTES;
  for (let s = 0; s < SECTION_COUNT; s++) {
    offsets.push(at);
    at += sections[s]!.length;
    if (s < SECTION_COUNT - 1) at = align8(at);
  }
  const out = new Uint8Array(at);
  const dv = new DataView(out.buffer);
  out.set(MAGIC, 0);
  dv.setUint32(H_FORMAT, SEGMENT_SCHEMA, true);
  dv.setUint32(H_PARSER, h.pv, true);
  dv.setUint32(H_RECORDS, h.n, true);
  dv.setUint32(H_BLOCKS, h.blocks, true);
  dv.setUint32(H_STRINGS, h.strings, true);
  dv.setFloat64(H_MIN_TS, h.minTs, true);
  dv.setFloat64(H_MAX_TS, h.maxTs, true);
  dv.setUint32(H_ROLES, h.roles, true);
  dv.setUint32(H_SOURCE, h.commonSource, true);
  dv.setUint32(H_SESSION, h.commonSession, true);
  for (let s = 0; s < SECTION_COUNT; s++) {
    const sec = sections[s]!;
    out.set(sec, offsets[s]!);
    // FOLDED and PAYLOAD are checksummed per block (segment_layout.ts).
    if (s !== FOLDED && s !== PAYLOAD) dv.setUint32(H_CRCS + 4 * s, crcOf(sec), true);
    dv.setBigUint64(H_TABLE + 16 * s, BigInt(offsets[s]!), true);
    dv.setBigUint64(H_TABLE + 16 * s + 8, BigInt(sec.length), true);
  }
  dv.setUint32(H_CRC, crcOf(out.subarray(0, H_CRC)), true);
  return out;
}
