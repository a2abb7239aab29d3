/**
 * The binary segment file's layout (`<hash16>.seg`, format SEGMENT_SCHEMA): one
 * immutable, content-named file per shard segment, designed to be searched where it lies
 * (issue 16). Little-endian; every section starts 8-byte aligned, so typed arrays view
 * the read buffer without a copy.
 *
 *   header (HEADER_BYTES)
 *     0  magic "INTDSEG\0"        8  format u32       12  parser_version u32
 *    16  flags u32 (0)           20  records n u32   24  blocks b u32
 *    28  shared strings u32      32  minTs f64       40  maxTs f64
 *    48  role mask u32           52  common source u32 (index in SOURCES, NONE = none)
 *    56  common session u32 (shared string index, NONE = none)
 *    60  crc32 of each section (SECTION_COUNT × u32)
 *   100  section table: SECTION_COUNT × {offset u64, length u64}
 *   260  crc32 of bytes [0, 260), then zero bytes up to 272 (HEADER_BYTES)
 *   sections, in this order (gaps between them are < 8 zero bytes; the file ends with
 *   the last section):
 *     KEY      the session key (a string blob, segment_tail.ts)
 *     MARKS    the supersession marks as JSON (validated with zod on load)
 *     STRINGS  the shared string table: `shared strings` blobs (locator files, session
 *              ids), deduplicated within the segment
 *     COLUMNS  per record, struct-of-arrays (columnLayout): ts f64, seq f64 (NaN = none),
 *              order u32, userTurn i32 (-1 = none), generation u32, foldStart u32,
 *              foldEnd u32 (UTF-16 units within the record's block string), payOff
 *              u32[n+1] (record i's payload is [payOff[i], payOff[i+1])), origLen u32
 *              (bytes of its original text at the payload's start), flags u8
 *     BLOCKS   per block BLOCK_FIELDS u32: folded offset, folded length (bytes), first
 *              record, end record, encoding (FOLD_LATIN1 | FOLD_UTF16), bloom offset and
 *              length (u32 words into BLOOMS), crc32 of its folded bytes, crc32 of its
 *              records' payloads (payOff[first] to payOff[end])
 *     BLOOMS   the per-block trigram Bloom bitsets (trigram.ts buildBloom), contiguous
 *     SUMMARY  the segment's bigram+trigram summary (trigram.ts buildSummary)
 *     TERMS    the term dictionary: sorted vocabulary entries, per-entry postings (record,
 *              tf) and per-record token counts (segment_terms.ts; issue 27)
 *     FOLDED   each block's folded records joined by NUL: one byte a unit (ISO-8859-1)
 *              when every unit is below U+0100, else UTF-16LE — each decodes with one
 *              native call (node:buffer; TextDecoder's "latin1" is windows-1252)
 *     PAYLOAD  per record: its ORIGINAL text, in one of four forms (ORIG_MASK): an ASCII
 *              text is its folded text (in FOLDED: for ASCII, folding is lowercasing)
 *              plus, when it has capitals, one bit per unit saying which (ORIG_CASED) —
 *              originals stored whole doubled the prose, ~0.9 of it ASCII on the bench
 *              corpus (store 277.9 → 206 MiB); any other text as UTF-8, or UTF-16LE when
 *              it holds a lone surrogate (UTF-8 cannot carry it) — then its tail (id,
 *              locator, item id)
 *
 * Checksums (crc32, zlib's, native: 10–25 GB/s): the header's covers the header and the
 * section table; each of the small sections KEY…SUMMARY has its own in the header,
 * checked on every load; TERMS has its own too, checked the first time the terms are read
 * (an exact search never reads them); FOLDED and PAYLOAD (their header slots are 0) are covered per
 * block, checked the first time a block's folded text is decoded or a record of it is
 * read, or all at once when a whole-segment reader asks (segment_view.ts `verify`). Why
 * lazily: the crc itself is nearly free, but it is the first touch of the freshly read
 * pages, and first touches cost as much as the read on the benchmark machine (a 3.3 MiB
 * generation: read 17.9 ms, checked 12.3 ms; a second pass over the same bytes 0.1 ms), so
 * a cold query pays for what it scans, not for every block of every file it opens. A
 * mismatch is CorruptGenerationError.
 */
import { crc32 } from "node:zlib";

/** The file's magic: "INTDSEG\0". */
export const MAGIC = [0x49, 0x4e, 0x54, 0x44, 0x53, 0x45, 0x47, 0x00] as const;

/** Section ids, in file order. */
export const KEY = 0;
export const MARKS = 1;
export const STRINGS = 2;
export const COLUMNS = 3;
export const BLOCKS = 4;
export const BLOOMS = 5;
export const SUMMARY = 6;
export const TERMS = 7;
export const FOLDED = 8;
export const PAYLOAD = 9;
export const SECTION_COUNT = 10;
export const SECTION_NAMES = [
  "key",
  "marks",
  "strings",
  "columns",
  "blocks",
  "blooms",
  "summary",
  "terms",
  "folded",
  "payload",
] as const;

/** Header field offsets. */
export const H_FORMAT = 8;
export const H_PARSER = 12;
export const H_FLAGS = 16;
export const H_RECORDS = 20;
export const H_BLOCKS = 24;
export const H_STRINGS = 28;
export const H_MIN_TS = 32;
export const H_MAX_TS = 40;
export const H_ROLES = 48;
export const H_SOURCE = 52;
export const H_SESSION = 56;
export const H_CRCS = 60;
export const H_TABLE = H_CRCS + 4 * SECTION_COUNT;
export const H_CRC = H_TABLE + 16 * SECTION_COUNT;
/** The crc, then zero bytes up to the next multiple of 8 (sections start 8-aligned). */
export const HEADER_BYTES = Math.ceil((H_CRC + 8) / 8) * 8;

/** A u32 field's "absent" value. */
export const NONE = 0xffffffff;

/** Per-record flag bits: role bits as NormalizedRequest.roleMask, then the rest. */
export const FLAG_USER = 1;
export const FLAG_ASSISTANT = 2;
export const FLAG_TRUNCATED = 4;
export const FLAG_SUBAGENT = 8;
/** How the original text is stored (two bits, see PAYLOAD). */
export const ORIG_MASK = 48;
export const ORIG_UTF8 = 0;
/** It holds a lone surrogate: UTF-16LE. */
export const ORIG_UTF16 = 16;
/** ASCII without capitals: its folded text, nothing in the payload. */
export const ORIG_FOLDED = 32;
/** ASCII: its folded text with the capitals' bits (bit j of byte j >> 3 = unit j). */
export const ORIG_CASED = 48;
/** The tail carries an item id. */
export const FLAG_ITEM = 64;
/** The record's source or session id differs from the segment's common ones (in the tail). */
export const FLAG_FOREIGN = 128;

/** BLOCKS fields per block. */
export const BLOCK_FIELDS = 9;
export const B_FOLDED_OFF = 0;
export const B_FOLDED_LEN = 1;
export const B_FIRST = 2;
export const B_END = 3;
export const B_ENCODING = 4;
export const B_BLOOM_OFF = 5;
export const B_BLOOM_WORDS = 6;
export const B_FOLDED_CRC = 7;
export const B_PAYLOAD_CRC = 8;
export const FOLD_LATIN1 = 0;
export const FOLD_UTF16 = 1;

/** Byte offsets of each column inside COLUMNS for `n` records, and its total length. */
export interface ColumnLayout {
  ts: number;
  seq: number;
  order: number;
  userTurn: number;
  generation: number;
  foldStart: number;
  foldEnd: number;
  payOff: number;
  origLen: number;
  flags: number;
  length: number;
}

export function align8(x: number): number {
  return Math.ceil(x / 8) * 8;
}

/** The COLUMNS layout for `n` records (each column 8-aligned). */
export function columnLayout(n: number): ColumnLayout {
  let at = 0;
  const take = (bytes: number) => {
    const start = at;
    at = align8(at + bytes);
    return start;
  };
  const l = {
    ts: take(8 * n),
    seq: take(8 * n),
    order: take(4 * n),
    userTurn: take(4 * n),
    generation: take(4 * n),
    foldStart: take(4 * n),
    foldEnd: take(4 * n),
    payOff: take(4 * (n + 1)),
    origLen: take(4 * n),
    flags: take(n),
  };
  return { ...l, length: at };
}

/** crc32 of `bytes` (zlib's, native). */
export function crcOf(bytes: Uint8Array): number {
  return crc32(bytes) >>> 0;
}
