/**
 * decodeSegment: the bytes of a `.seg` file (segment_layout.ts; its header is checked by
 * segment_header.ts) → a SegmentView, the resident form of one generation: typed arrays over the one buffer the file was read
 * into, nothing parsed per record until a record is needed (a hit, or a whole-segment
 * reader calling decodeRecords). Decoding checks what every reader trips on, once: the
 * header's and the small sections' crcs, the section table (8-aligned, in order, zero
 * gaps, the file ending with the last section), and the structure the scan indexes with —
 * record and block ranges, offsets, flags — so a view that exists can be scanned without
 * a bounds check failing. A block's folded text and its records' payloads are checked
 * against their crcs the first time they are read (verify "lazy": the scan's) or all at
 * decode (verify "all", the default: whole-segment readers, the quarantine's check); a
 * view remembers what it checked, so each block is checked once. Per-record tails are
 * parsed strictly when read.
 * Errors: anything malformed, from a truncated header to a tail that runs past its record,
 * is CorruptGenerationError (the fuzz test holds the decoder to it), never another error —
 * at decode, or, with verify "lazy", from the accessor that first reads a damaged block.
 */
import { Buffer } from "node:buffer";
import type { Locator } from "../locator.ts";
import { MarkSchema, type MessageRecord, SOURCES, type SupersessionMark } from "../record.ts";
import { bloomMayContainAt } from "../query/trigram.ts";
import { CorruptGenerationError } from "./generation_error.ts";
import {
  B_BLOOM_OFF,
  B_BLOOM_WORDS,
  B_ENCODING,
  B_END,
  B_FIRST,
  B_FOLDED_CRC,
  B_FOLDED_LEN,
  B_FOLDED_OFF,
  B_PAYLOAD_CRC,
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
  H_CRCS,
  H_STRINGS,
  KEY,
  MARKS,
  NONE,
  ORIG_CASED,
  ORIG_FOLDED,
  ORIG_MASK,
  ORIG_UTF16,
  PAYLOAD,
  STRINGS,
  SUMMARY,
  TERMS,
} from "./segment_layout.ts";
import { ByteReader, decodeText, FormatError, readLocator } from "./segment_tail.ts";
import { type Parsed, parseHeader, type Section } from "./segment_header.ts";
import { TermsView } from "./segment_terms.ts";

/**
 * Resident bytes of a view besides its buffer: the view object, its dozen typed-array
 * views, the Buffer over the file and the arena's map entries — measured 2.7 KiB a view
 * in V8's heap (tests/helpers/arena_memory_child.ts, 12 vs 60 resident views), rounded up.
 */
const VIEW_OVERHEAD_BYTES = 3072;
/** Resident bytes per byte of marks JSON once parsed into objects (generous). */
const MARK_BYTES_PER_JSON_BYTE = 4;

const MARKS_SCHEMA = MarkSchema.array();

/** Options for {@link decodeSegment}. */
export interface DecodeOptions {
  /**
   * "all": check every block's crc now (and fail now). "lazy": check each block the first
   * time it is read (the scan: a cold query pays for what it scans). @default "all"
   */
  verify?: "all" | "lazy";
}
// ignoreBOM: a string that begins with U+FEFF must decode to itself (a stripped BOM turned an
// id of "\uFEFF" into "" and shifted every highlight of a text that began with one).
const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function fail(detail: string): never {
  throw new FormatError(detail);
}

/** Reads exactly `count` blobs filling section `s`. */
function readBlobs(buf: Buffer, s: Section, count: number): string[] {
  const r = new ByteReader(buf, s.off, s.off + s.len);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(r.blob());
  if (r.at !== r.end) fail("trailing bytes in a string section");
  return out;
}

function isPow2(x: number): boolean {
  return x > 0 && (x & (x - 1)) === 0;
}

/** One resident generation (see the header). Immutable once built. */
export class SegmentView {
  readonly name: string;
  readonly key: string;
  readonly parserVersion: number;
  /** Records. */
  readonly count: number;
  readonly blockCount: number;
  readonly marks: readonly SupersessionMark[];
  readonly minTs: number;
  readonly maxTs: number;
  /** FLAG_USER | FLAG_ASSISTANT of the roles present. */
  readonly roleMask: number;
  readonly ts: Float64Array;
  /** NaN when the record has no seq. */
  readonly seq: Float64Array;
  readonly order: Uint32Array;
  /** -1 when absent. */
  readonly userTurn: Int32Array;
  readonly generation: Uint32Array;
  /** Record i's span [foldStart[i], foldEnd[i]) in its block's decoded string. */
  readonly foldStart: Uint32Array;
  readonly foldEnd: Uint32Array;
  /** FLAG_* bits per record. */
  readonly flags: Uint8Array;
  /** Bigram + trigram summary (a view into the buffer: copy it to keep it alone). */
  readonly summary: Uint32Array;
  /** Bytes read from disk (the file's size). */
  readonly fileBytes: number;
  /** Resident bytes: the buffer plus the view's own fixed overhead (what the arena counts). */
  readonly bytes: number;
  readonly #buf: Buffer;
  readonly #blocks: Uint32Array;
  readonly #blooms: Uint32Array;
  readonly #payOff: Uint32Array;
  readonly #origLen: Uint32Array;
  readonly #strings: readonly string[];
  readonly #source: number;
  readonly #session: number;
  readonly #foldedAt: number;
  readonly #payloadAt: number;
  /** 1 once block k's folded text / its records' payloads matched their crc. */
  readonly #foldedOk: Uint8Array;
  readonly #payloadOk: Uint8Array;
  readonly #termsAt: Section;
  readonly #termsCrc: number;
  #terms: TermsView | null = null;

  constructor(name: string, input: Uint8Array, { verify = "all" }: DecodeOptions = {}) {
    // Typed-array views need the sections 8-aligned in memory, not just in the file.
    const bytes = input.byteOffset % 8 === 0 ? input : input.slice();
    const ab = bytes.buffer as ArrayBuffer;
    const dv = new DataView(ab, bytes.byteOffset, bytes.byteLength);
    const p = parseHeader(bytes, dv);
    const sec = p.sections;
    const buf = Buffer.from(ab, bytes.byteOffset, bytes.byteLength);
    const at = (s: number) => bytes.byteOffset + sec[s]!.off;
    const { n, b } = p;
    const l = columnLayout(n);
    if (sec[COLUMNS]!.len !== l.length) fail("columns section length");
    if (sec[BLOCKS]!.len !== b * BLOCK_FIELDS * 4) fail("blocks section length");
    if (sec[BLOOMS]!.len % 4 !== 0 || !isPow2(sec[SUMMARY]!.len / 4)) fail("filter lengths");
    const c = at(COLUMNS);
    this.name = name;
    this.parserVersion = p.parserVersion;
    this.count = n;
    this.blockCount = b;
    this.minTs = p.minTs;
    this.maxTs = p.maxTs;
    this.roleMask = p.roleMask;
    this.ts = new Float64Array(ab, c + l.ts, n);
    this.seq = new Float64Array(ab, c + l.seq, n);
    this.order = new Uint32Array(ab, c + l.order, n);
    this.userTurn = new Int32Array(ab, c + l.userTurn, n);
    this.generation = new Uint32Array(ab, c + l.generation, n);
    this.foldStart = new Uint32Array(ab, c + l.foldStart, n);
    this.foldEnd = new Uint32Array(ab, c + l.foldEnd, n);
    this.flags = new Uint8Array(ab, c + l.flags, n);
    this.#payOff = new Uint32Array(ab, c + l.payOff, n + 1);
    this.#origLen = new Uint32Array(ab, c + l.origLen, n);
    this.#blocks = new Uint32Array(ab, at(BLOCKS), b * BLOCK_FIELDS);
    this.#blooms = new Uint32Array(ab, at(BLOOMS), sec[BLOOMS]!.len / 4);
    this.summary = new Uint32Array(ab, at(SUMMARY), sec[SUMMARY]!.len / 4);
    this.#buf = buf;
    this.#foldedAt = sec[FOLDED]!.off;
    this.#payloadAt = sec[PAYLOAD]!.off;
    const [key] = readBlobs(buf, sec[KEY]!, 1);
    this.key = key!;
    this.#strings = readBlobs(buf, sec[STRINGS]!, dv.getUint32(H_STRINGS, true));
    this.marks = parseMarks(bytes, sec[MARKS]!);
    this.#source = p.commonSource;
    this.#session = p.commonSession;
    this.#checkCommon(p);
    this.#checkRecords(sec[PAYLOAD]!.len);
    this.#checkBlocks(sec[FOLDED]!.len);
    this.#foldedOk = new Uint8Array(b);
    this.#payloadOk = new Uint8Array(b);
    this.#termsAt = sec[TERMS]!;
    this.#termsCrc = dv.getUint32(H_CRCS + 4 * TERMS, true);
    if (sec[TERMS]!.off % 4 !== 0) fail("terms section alignment");
    if (verify === "all") this.verify();
    this.fileBytes = input.byteLength;
    let extra = VIEW_OVERHEAD_BYTES + 2 * b + sec[MARKS]!.len * MARK_BYTES_PER_JSON_BYTE;
    // The vocabulary, once a relevance query decodes it, stays with the view (≤ its bytes).
    extra += sec[TERMS]!.len;
    for (const s of this.#strings) extra += 2 * s.length + 32;
    this.bytes = (bytes.buffer as ArrayBuffer).byteLength + extra;
  }

  #checkCommon(p: Parsed): void {
    const none = p.n === 0;
    if (none ? p.commonSource !== NONE : p.commonSource >= SOURCES.length) fail("common source");
    if (none ? p.commonSession !== NONE : p.commonSession >= this.#strings.length) {
      fail("common session");
    }
    if (!Number.isFinite(p.minTs) || !Number.isFinite(p.maxTs) || (p.roleMask & ~3) !== 0) {
      fail("header facts");
    }
  }

  /** Flags and payload offsets of every record. */
  #checkRecords(payloadLen: number): void {
    const off = this.#payOff;
    if (off[0] !== 0 || off[this.count] !== payloadLen) fail("payload bounds");
    for (let i = 0; i < this.count; i++) {
      const f = this.flags[i]!;
      const role = f & (FLAG_USER | FLAG_ASSISTANT);
      if (role !== FLAG_USER && role !== FLAG_ASSISTANT) fail(`flags of record ${i}`);
      const room = off[i + 1]! - off[i]!;
      const orig = this.#origLen[i]!;
      if (room < 0 || orig > room || ((f & ORIG_MASK) === ORIG_UTF16 && orig % 2 !== 0)) {
        fail(`payload of record ${i}`);
      }
    }
  }

  /** Block ranges, folded offsets, spans and filter ranges tile their sections exactly. */
  #checkBlocks(foldedLen: number): void {
    let rec = 0;
    let folded = 0;
    let bloom = 0;
    for (let k = 0; k < this.blockCount; k++) {
      const x = k * BLOCK_FIELDS;
      const bl = this.#blocks;
      const first = bl[x + B_FIRST]!;
      const end = bl[x + B_END]!;
      const len = bl[x + B_FOLDED_LEN]!;
      const kind = bl[x + B_ENCODING]!;
      const words = bl[x + B_BLOOM_WORDS]!;
      if (first !== rec || end <= first || end > this.count) fail(`records of block ${k}`);
      if (bl[x + B_FOLDED_OFF] !== folded || len > foldedLen - folded) fail(`text of block ${k}`);
      if (kind !== FOLD_LATIN1 && (kind !== FOLD_UTF16 || len % 2 !== 0)) fail(`block ${k} kind`);
      if (bl[x + B_BLOOM_OFF] !== bloom || !isPow2(words) || words > this.#blooms.length - bloom) {
        fail(`filter of block ${k}`);
      }
      const units = kind === FOLD_UTF16 ? len / 2 : len;
      let next = 0;
      for (let i = first; i < end; i++) {
        if (this.foldStart[i] !== next || this.foldEnd[i]! < next) fail(`span of record ${i}`);
        next = this.foldEnd[i]! + 1;
        // An original kept as its folded text needs one byte a unit there, and one bit a
        // unit in the payload when it has capitals.
        const orig = this.flags[i]! & ORIG_MASK;
        if (orig !== ORIG_FOLDED && orig !== ORIG_CASED) continue;
        const bits = orig === ORIG_FOLDED ? 0 : (this.foldEnd[i]! - this.foldStart[i]! + 7) >> 3;
        if (kind !== FOLD_LATIN1 || this.#origLen[i] !== bits) fail(`original of record ${i}`);
      }
      if (next - 1 !== units) fail(`spans of block ${k}`);
      rec = end;
      folded += len;
      bloom += words;
    }
    if (rec !== this.count || folded !== foldedLen || bloom !== this.#blooms.length) {
      fail("blocks do not cover the segment");
    }
  }

  /** First record of block `k`. */
  blockFirst(k: number): number {
    return this.#blocks[k * BLOCK_FIELDS + B_FIRST]!;
  }

  /** One past the last record of block `k`. */
  blockEnd(k: number): number {
    return this.#blocks[k * BLOCK_FIELDS + B_END]!;
  }

  /** False when block `k`'s trigram filter proves some hash of `hashes` absent. */
  blockMayContain(k: number, hashes: Uint32Array): boolean {
    const x = k * BLOCK_FIELDS;
    const bl = this.#blocks;
    return bloomMayContainAt(this.#blooms, bl[x + B_BLOOM_OFF]!, bl[x + B_BLOOM_WORDS]!, hashes);
  }

  /**
   * The term dictionary (segment_terms.ts), checked against its crc and its structure the
   * first time it is asked for. CorruptGenerationError when either fails.
   */
  terms(): TermsView {
    if (this.#terms !== null) return this.#terms;
    const { off, len } = this.#termsAt;
    if (crcOf(this.#buf.subarray(off, off + len)) !== this.#termsCrc) {
      throw new CorruptGenerationError(this.name, "terms section checksum");
    }
    try {
      this.#terms = new TermsView(this.#buf, { off, len, records: this.count });
    } catch (err) {
      throw this.#corrupt(err);
    }
    return this.#terms;
  }

  /** Checks every block not checked yet (CorruptGenerationError at the first mismatch). */
  verify(): void {
    this.terms();
    for (let k = 0; k < this.blockCount; k++) {
      this.#checkFolded(k);
      this.#checkPayload(k);
    }
  }

  /** Checks the payloads of record `i`'s block, so reading the record cannot fail on a crc. */
  verifyRecord(i: number): void {
    this.#checkPayload(this.blockOf(i));
  }

  #checkFolded(k: number): void {
    if (this.#foldedOk[k] === 1) return;
    const x = k * BLOCK_FIELDS;
    const bl = this.#blocks;
    const start = this.#foldedAt + bl[x + B_FOLDED_OFF]!;
    if (crcOf(this.#buf.subarray(start, start + bl[x + B_FOLDED_LEN]!)) !== bl[x + B_FOLDED_CRC]) {
      throw new CorruptGenerationError(this.name, `folded text of block ${k}: checksum`);
    }
    this.#foldedOk[k] = 1;
  }

  #checkPayload(k: number): void {
    if (this.#payloadOk[k] === 1) return;
    const x = k * BLOCK_FIELDS;
    const bl = this.#blocks;
    const start = this.#payloadAt + this.#payOff[bl[x + B_FIRST]!]!;
    const end = this.#payloadAt + this.#payOff[bl[x + B_END]!]!;
    if (crcOf(this.#buf.subarray(start, end)) !== bl[x + B_PAYLOAD_CRC]) {
      throw new CorruptGenerationError(this.name, `payload of block ${k}: checksum`);
    }
    this.#payloadOk[k] = 1;
  }

  /** Block `k`'s folded records joined by NUL (one native decode, no cache). */
  blockText(k: number): string {
    this.#checkFolded(k);
    const x = k * BLOCK_FIELDS;
    const bl = this.#blocks;
    const start = this.#foldedAt + bl[x + B_FOLDED_OFF]!;
    const end = start + bl[x + B_FOLDED_LEN]!;
    return this.#buf.toString(bl[x + B_ENCODING] === FOLD_UTF16 ? "utf16le" : "latin1", start, end);
  }

  /** The block holding record `i`. */
  blockOf(i: number): number {
    let lo = 0;
    let hi = this.blockCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.blockFirst(mid) <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Record `i`'s original text. */
  text(i: number): string {
    this.verifyRecord(i);
    const start = this.#payloadAt + this.#payOff[i]!;
    const end = start + this.#origLen[i]!;
    try {
      switch (this.flags[i]! & ORIG_MASK) {
        case ORIG_UTF16:
          return this.#buf.toString("utf16le", start, end);
        case ORIG_FOLDED:
          return this.#fromFolded(i, null);
        case ORIG_CASED:
          return this.#fromFolded(i, start);
        default:
          return decodeText(this.#buf, { start, end, wide: false });
      }
    } catch (err) {
      throw this.#corrupt(err);
    }
  }

  /** An ASCII original: its folded units, with the capitals at `bitsAt` (null: none). */
  #fromFolded(i: number, bitsAt: number | null): string {
    const k = this.blockOf(i);
    this.#checkFolded(k);
    const at = this.#foldedAt + this.#blocks[k * BLOCK_FIELDS + B_FOLDED_OFF]!;
    const start = at + this.foldStart[i]!;
    const end = at + this.foldEnd[i]!;
    if (bitsAt === null) return this.#buf.toString("latin1", start, end);
    // A copy (Buffer's subarray is a view), capitalised where the bits say.
    const out = Uint8Array.prototype.slice.call(this.#buf, start, end);
    for (let x = 0; x < (out.length + 7) >> 3; x++) {
      const bits = this.#buf[bitsAt + x]!;
      if (bits === 0) continue;
      for (let j = x << 3; j < out.length && j < (x + 1) << 3; j++) {
        if ((bits & (1 << (j & 7))) === 0) continue;
        if (out[j]! < 0x61 || out[j]! > 0x7a) fail(`capital bit on a non-letter in record ${i}`);
        out[j] = out[j]! - 0x20;
      }
    }
    return Buffer.from(out.buffer, out.byteOffset, out.length).toString("latin1");
  }

  /** Record `i`'s tail: id, locator, item id, source and session id. */
  tail(i: number): RecordTail {
    this.verifyRecord(i);
    try {
      const start = this.#payloadAt + this.#payOff[i]! + this.#origLen[i]!;
      const r = new ByteReader(this.#buf, start, this.#payloadAt + this.#payOff[i + 1]!);
      const f = this.flags[i]!;
      const id = r.blob();
      if (id.length === 0) fail("empty record id");
      const locator = readLocator(r, { id, strings: this.#strings });
      const itemId = (f & FLAG_ITEM) !== 0 ? r.blob() : undefined;
      let source = this.#source;
      let session = this.#session;
      if ((f & FLAG_FOREIGN) !== 0) {
        source = r.u8();
        session = r.varint();
      }
      const src = SOURCES[source];
      const sessionId = this.#strings[session];
      if (src === undefined || sessionId === undefined || sessionId.length === 0) {
        fail(`source of record ${i}`);
      }
      if (r.at !== r.end) fail(`trailing bytes after record ${i}`);
      return { id, locator, itemId, source: src, sessionId };
    } catch (err) {
      throw this.#corrupt(err);
    }
  }

  /** Record `i`, whole. */
  record(i: number): MessageRecord {
    const t = this.tail(i);
    const f = this.flags[i]!;
    const seq = this.seq[i]!;
    const turn = this.userTurn[i]!;
    const r: MessageRecord = {
      id: t.id,
      source: t.source,
      session_id: t.sessionId,
      role: (f & FLAG_ASSISTANT) !== 0 ? "assistant" : "user",
      ts_ms: this.ts[i]!,
      text: this.text(i),
      truncated: (f & FLAG_TRUNCATED) !== 0,
      locator: t.locator,
      order: this.order[i]!,
      generation: this.generation[i]!,
      subagent: (f & FLAG_SUBAGENT) !== 0,
    };
    if (!Number.isNaN(seq)) r.seq = seq;
    if (turn >= 0) r.user_turn = turn;
    if (t.itemId !== undefined) r.item_id = t.itemId;
    return r;
  }

  #corrupt(err: unknown): CorruptGenerationError {
    if (err instanceof CorruptGenerationError) return err;
    const detail = err instanceof FormatError ? err.message : "undecodable record";
    return new CorruptGenerationError(this.name, detail, { cause: err });
  }
}

/** The per-record strings of a record, decoded from its payload tail. */
export interface RecordTail {
  id: string;
  locator: Locator;
  itemId: string | undefined;
  source: MessageRecord["source"];
  sessionId: string;
}

function parseMarks(bytes: Uint8Array, s: Section): SupersessionMark[] {
  let raw: unknown;
  try {
    raw = JSON.parse(utf8Fatal.decode(bytes.subarray(s.off, s.off + s.len)));
  } catch {
    // Not UTF-8 JSON: the section is damaged (its crc matched a forged or buggy write).
    fail("marks are not JSON");
  }
  const marks = MARKS_SCHEMA.safeParse(raw);
  if (!marks.success) fail("marks fail their schema");
  return marks.data;
}

/** Decodes and checks segment bytes read from generation `name` (see the header). */
export function decodeSegment(
  bytes: Uint8Array,
  name: string,
  o: DecodeOptions = {},
): SegmentView {
  if (o.verify !== undefined && o.verify !== "all" && o.verify !== "lazy") {
    throw new TypeError(`Unknown verify mode "${o.verify}": expected "all" or "lazy"`);
  }
  try {
    return new SegmentView(name, bytes, o);
  } catch (err) {
    if (err instanceof CorruptGenerationError) throw err;
    const detail = err instanceof FormatError ? err.message : "undecodable";
    throw new CorruptGenerationError(name, detail, { cause: err });
  }
}

/** Every record of `view`, in segment order (for whole-shard readers, not the search path). */
export function decodeRecords(view: SegmentView): MessageRecord[] {
  view.verify();
  const out: MessageRecord[] = new Array(view.count);
  for (let i = 0; i < view.count; i++) out[i] = view.record(i);
  return out;
}
