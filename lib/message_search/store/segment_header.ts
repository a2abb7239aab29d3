/**
 * parseHeader: the checks every segment reader trips on first (segment_layout.ts): the
 * magic, the header's crc, the format, the reserved bytes, the section table (in order,
 * 8-aligned, zero gaps, the file ending with the last section) and the crcs of the small
 * sections checked at load (not FOLDED and PAYLOAD, checked per block, nor TERMS, checked
 * when first read). Pure; a failure is a FormatError (the view makes it a
 * CorruptGenerationError).
 */
import {
  align8,
  crcOf,
  FOLDED,
  H_BLOCKS,
  H_CRC,
  H_CRCS,
  H_FLAGS,
  H_FORMAT,
  H_MAX_TS,
  H_MIN_TS,
  H_PARSER,
  H_RECORDS,
  H_ROLES,
  H_SESSION,
  H_SOURCE,
  H_TABLE,
  HEADER_BYTES,
  MAGIC,
  PAYLOAD,
  SECTION_COUNT,
  SECTION_NAMES,
  TERMS,
} from "./segment_layout.ts";
import { FormatError } from "./segment_tail.ts";
import { SEGMENT_SCHEMA } from "./types.ts";

function fail(detail: string): never {
  throw new FormatError(detail);
}

/** Offsets of one section. */
export interface Section {
  off: number;
  len: number;
}

/** The decoded, checked facts a view is built from. */
export interface Parsed {
  parserVersion: number;
  n: number;
  b: number;
  minTs: number;
  maxTs: number;
  roleMask: number;
  commonSource: number;
  commonSession: number;
  sections: Section[];
}

export function parseHeader(bytes: Uint8Array, dv: DataView): Parsed {
  if (bytes.length < HEADER_BYTES) fail(`file of ${bytes.length} bytes is shorter than a header`);
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) fail("not a segment file");
  if (dv.getUint32(H_CRC, true) !== crcOf(bytes.subarray(0, H_CRC))) fail("header checksum");
  const format = dv.getUint32(H_FORMAT, true);
  if (format !== SEGMENT_SCHEMA) fail(`format ${format}, expected ${SEGMENT_SCHEMA}`);
  let reserved = dv.getUint32(H_FLAGS, true);
  for (let p = H_CRC + 4; p < HEADER_BYTES; p++) reserved |= bytes[p]!;
  if (reserved !== 0) fail("reserved header bits set");
  const sections: Section[] = [];
  let end = HEADER_BYTES;
  for (let s = 0; s < SECTION_COUNT; s++) {
    const off = Number(dv.getBigUint64(H_TABLE + 16 * s, true));
    const len = Number(dv.getBigUint64(H_TABLE + 16 * s + 8, true));
    const expected = s === 0 ? HEADER_BYTES : align8(end);
    if (off !== expected || len > bytes.length - off) fail(`${SECTION_NAMES[s]} section bounds`);
    for (let p = end; p < off; p++) if (bytes[p] !== 0) fail("padding is not zero");
    const crc = dv.getUint32(H_CRCS + 4 * s, true);
    // FOLDED and PAYLOAD are checked per block, when read (their slot is 0); TERMS when
    // first read (SegmentView.terms).
    if (s === FOLDED || s === PAYLOAD) {
      if (crc !== 0) fail(`${SECTION_NAMES[s]} section checksum slot is not empty`);
    } else if (s !== TERMS && crc !== crcOf(bytes.subarray(off, off + len))) {
      fail(`${SECTION_NAMES[s]} section checksum`);
    }
    sections.push({ off, len });
    end = off + len;
  }
  if (end !== bytes.length) fail("bytes after the last section");
  const n = dv.getUint32(H_RECORDS, true);
  return {
    parserVersion: dv.getUint32(H_PARSER, true),
    n,
    b: dv.getUint32(H_BLOCKS, true),
    minTs: dv.getFloat64(H_MIN_TS, true),
    maxTs: dv.getFloat64(H_MAX_TS, true),
    roleMask: dv.getUint32(H_ROLES, true),
    commonSource: dv.getUint32(H_SOURCE, true),
    commonSession: dv.getUint32(H_SESSION, true),
    sections,
  };
}
