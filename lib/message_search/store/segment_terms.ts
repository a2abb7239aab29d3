/**
 * The TERMS section of a segment (segment_layout.ts, issue 27): the segment's term
 * dictionary, per-entry postings and per-record token counts, so a relevance query scores
 * records from their statistics instead of decoding their text, and the store's lexicon
 * (lexicon_pack.ts) learns which generations hold which words without reading any text.
 * Entries follow the vocabulary rule (query/vocabulary.ts); the section is a pure function
 * of the records' folded texts.
 *
 * Layout (little-endian; SEGMENT_SCHEMA 4 — schema 3 kept UTF-16 vocabularies and u32
 * offset tables, 215 B a record on the bench corpus, where this layout takes ≈ 105):
 *    0  entries e u32       4  encoding u32 (VOCAB_UTF8 | VOCAB_UTF16)
 *    8  vocabulary bytes    12  lengths bytes u32    16  postings bytes u32
 *   20  vocabulary          the entries in the order the records first hold them (no
 *                           reader needs them sorted, and sorting cost the encoder more
 *                           than building the table did), joined by NUL; UTF-8
 *                           (UTF-16LE only when an entry holds a lone surrogate, which
 *                           UTF-8 cannot carry)
 *       lengths             varint[e]: bytes of entry k's postings (≥ 1), then varint[n]:
 *                           tokens in record i (its BM25 length)
 *       postings            per entry, per record holding it, ascending: varint
 *                           ((record − previous − 1) × 2 + (tf > 1)), then varint(tf − 2)
 *                           when flagged (previous starts at −1)
 * Entry boundaries are not stored: the NULs give them when the vocabulary is first
 * decoded (a reader that never asks for the vocabulary never pays for them).
 * Checks: the lengths are decoded and checked when the view is built (sizes, every
 * posting range non-empty, the totals); the separators and UTF-8 when the vocabulary is
 * decoded; the crc of the section is checked by the segment view the first time its
 * terms are read; a posting that runs past its range or names a record past the segment
 * is a FormatError when decoded (the view turns it into CorruptGenerationError).
 *
 * Building (buildTerms, about half the encoder's time in schema 3): one pass over each
 * record's folded units hashes every token as it is scanned, and an open-addressing table
 * keyed by (hash, units) finds its entry without cutting a substring (a substring is made
 * once per distinct entry of the segment); postings are appended to flat typed arrays in
 * record order and grouped per entry by a counting sort, which keeps each entry's records
 * ascending. On 296 segments of the 4× bench store (102,865 records): 10–13 µs a record
 * against schema 3's 31–33 µs in the same run, and 104 B a record against 215.
 */
import { Buffer } from "node:buffer";
import { ENTRY_MAX, isTokenUnit, PIECE_STEP } from "../query/vocabulary.ts";
import { ByteReader, ByteWriter, decodeText, FormatError } from "./segment_tail.ts";

const HEAD = 20;
/** Vocabulary encodings. */
const VOCAB_UTF8 = 0;
const VOCAB_UTF16 = 1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fail(detail: string): never {
  throw new FormatError(`terms: ${detail}`);
}

/** FNV-1a over the units of `s[a, b)` (the hash buildTerms computes while scanning). */
function hashUnits(s: string, a: number, b: number): number {
  let h = FNV_OFFSET;
  for (let i = a; i < b; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

function grow(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const next = new Int32Array(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}

/** The entries of one segment under construction and their postings (see the header). */
class TermsBuilder {
  readonly words: string[] = [];
  #hashes = new Int32Array(256);
  #slots = new Int32Array(1024);
  /** Per entry: index of its newest posting. */
  #last = new Int32Array(256);
  /** Postings in record order: entry, record, tf. */
  pEntry = new Int32Array(1024);
  pRec = new Int32Array(1024);
  pTf = new Int32Array(1024);
  np = 0;

  /** Counts entry `f[a, b)` (hash h) once for record `rec`. */
  note(f: string, a: number, b: number, h: number, rec: number): void {
    const id = this.#find(f, a, b, h);
    const p = this.#last[id]!;
    if (p >= 0 && this.pRec[p] === rec) {
      this.pTf[p]!++;
      return;
    }
    const q = this.np++;
    if (q >= this.pRec.length) {
      this.pEntry = grow(this.pEntry, q + 1);
      this.pRec = grow(this.pRec, q + 1);
      this.pTf = grow(this.pTf, q + 1);
    }
    this.pEntry[q] = id;
    this.pRec[q] = rec;
    this.pTf[q] = 1;
    this.#last[id] = q;
  }

  #find(f: string, a: number, b: number, h: number): number {
    const words = this.words;
    const len = b - a;
    let mask = this.#slots.length - 1;
    for (let at = h & mask;; at = (at + 1) & mask) {
      const v = this.#slots[at]!;
      if (v === 0) break;
      const id = v - 1;
      if (this.#hashes[id] !== h) continue;
      const w = words[id]!;
      if (w.length !== len) continue;
      let same = true;
      for (let i = 0; i < len; i++) {
        if (w.charCodeAt(i) !== f.charCodeAt(a + i)) {
          same = false;
          break;
        }
      }
      if (same) return id;
    }
    const id = words.length;
    words.push(f.slice(a, b));
    this.#hashes = grow(this.#hashes, id + 1);
    this.#last = grow(this.#last, id + 1);
    this.#hashes[id] = h;
    this.#last[id] = -1;
    if (2 * (id + 1) > this.#slots.length) {
      this.#rehash(this.#slots.length * 2);
      mask = this.#slots.length - 1;
    }
    let at = h & mask;
    while (this.#slots[at] !== 0) at = (at + 1) & mask;
    this.#slots[at] = id + 1;
    return id;
  }

  #rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let id = 0; id < this.words.length - 1; id++) {
      let at = this.#hashes[id]! & mask;
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = id + 1;
    }
    this.#slots = slots;
  }
}

/** Builds the TERMS section of records whose folded texts are `folded` (in order). */
export function buildTerms(folded: readonly string[]): Uint8Array {
  const b = new TermsBuilder();
  const n = folded.length;
  const tokens = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const f = folded[i]!;
    let count = 0;
    let start = -1;
    let h = 0;
    for (let j = 0; j <= f.length; j++) {
      const c = j < f.length ? f.charCodeAt(j) : -1;
      if (c >= 0 && isTokenUnit(c)) {
        if (start < 0) {
          start = j;
          h = FNV_OFFSET;
        }
        h = Math.imul(h ^ c, FNV_PRIME);
        continue;
      }
      if (start < 0) continue;
      count++;
      if (j - start < ENTRY_MAX) b.note(f, start, j, h, i);
      else {
        // Pieces (vocabulary.ts eachEntry): ENTRY_MAX units every PIECE_STEP, the last
        // ending at the token's end.
        let s = start;
        for (; s + ENTRY_MAX < j; s += PIECE_STEP) {
          b.note(f, s, s + ENTRY_MAX, hashUnits(f, s, s + ENTRY_MAX), i);
        }
        b.note(f, j - ENTRY_MAX, j, hashUnits(f, j - ENTRY_MAX, j), i);
      }
      start = -1;
    }
    tokens[i] = count;
  }
  const words = b.words;
  const e = words.length;
  // Counting sort of the postings by entry (stable: records stay ascending).
  const from = new Int32Array(e + 1);
  for (let q = 0; q < b.np; q++) from[b.pEntry[q]! + 1]!++;
  for (let k = 0; k < e; k++) from[k + 1]! += from[k]!;
  const byEntry = new Int32Array(b.np);
  const fill = from.slice(0, e);
  for (let q = 0; q < b.np; q++) byEntry[fill[b.pEntry[q]!]!++] = q;
  const pw = new ByteWriter(Math.max(1024, 2 * b.np));
  const lens = new ByteWriter(Math.max(64, e + n + 8));
  for (let k = 0; k < e; k++) {
    const before = pw.length;
    let prev = -1;
    for (let z = from[k]!; z < from[k + 1]!; z++) {
      const q = byEntry[z]!;
      const rec = b.pRec[q]!;
      const tf = b.pTf[q]!;
      pw.varint((rec - prev - 1) * 2 + (tf > 1 ? 1 : 0));
      if (tf > 1) pw.varint(tf - 2);
      prev = rec;
    }
    lens.varint(pw.length - before);
  }
  for (let i = 0; i < n; i++) lens.varint(tokens[i]!);
  const vocab = words.join("\u0000");
  const utf8 = vocab.isWellFormed();
  const voc = new ByteWriter(utf8 ? vocab.length + 16 : 2 * vocab.length + 16);
  if (utf8) voc.utf8(vocab);
  else voc.utf16(vocab);
  const out = new Uint8Array(HEAD + voc.length + lens.length + pw.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, e, true);
  dv.setUint32(4, utf8 ? VOCAB_UTF8 : VOCAB_UTF16, true);
  dv.setUint32(8, voc.length, true);
  dv.setUint32(12, lens.length, true);
  dv.setUint32(16, pw.length, true);
  out.set(voc.view(), HEAD);
  out.set(lens.view(), HEAD + voc.length);
  out.set(pw.view(), HEAD + voc.length + lens.length);
  return out;
}

/** A segment's TERMS section, viewed in place (see the header). */
export class TermsView {
  /** Entries. */
  readonly size: number;
  /** Tokens per record. */
  readonly tokens: Uint32Array;
  /** Bytes of the section (what a reader touches when it uses it). */
  readonly bytes: number;
  readonly #postOff: Uint32Array;
  readonly #buf: Buffer;
  readonly #vocabAt: number;
  readonly #vocabLen: number;
  readonly #wide: boolean;
  readonly #postAt: number;
  readonly #records: number;
  #vocab: string | null = null;
  /** Per entry: the vocabulary position just past it (set when the vocabulary is decoded). */
  #entryEnd: Uint32Array | null = null;

  /** `buf[off, off + len)` is the section. */
  constructor(buf: Buffer, { off, len, records }: { off: number; len: number; records: number }) {
    if (len < HEAD) fail("shorter than its header");
    const e = buf.readUInt32LE(off);
    const enc = buf.readUInt32LE(off + 4);
    const vocabLen = buf.readUInt32LE(off + 8);
    const lensLen = buf.readUInt32LE(off + 12);
    const postLen = buf.readUInt32LE(off + 16);
    if (enc !== VOCAB_UTF8 && enc !== VOCAB_UTF16) fail("encoding");
    if (HEAD + vocabLen + lensLen + postLen !== len) fail("section length");
    if ((e === 0) !== (vocabLen === 0)) fail("vocabulary length");
    this.#vocabAt = off + HEAD;
    this.#vocabLen = vocabLen;
    this.#postAt = this.#vocabAt + vocabLen + lensLen;
    const r = new ByteReader(buf, this.#vocabAt + vocabLen, this.#postAt);
    const postOff = new Uint32Array(e + 1);
    let sum = 0;
    for (let k = 0; k < e; k++) {
      const l = r.varint();
      if (l === 0) fail(`postings of entry ${k}`);
      sum += l;
      if (sum > postLen) fail("postings length");
      postOff[k + 1] = sum;
    }
    if (sum !== postLen) fail("postings length");
    const tokens = new Uint32Array(records);
    for (let i = 0; i < records; i++) {
      const t = r.varint();
      if (t > 0xffffffff) fail(`tokens of record ${i}`);
      tokens[i] = t;
    }
    if (r.at !== this.#postAt) fail("lengths length");
    this.#postOff = postOff;
    this.tokens = tokens;
    this.#wide = enc === VOCAB_UTF16;
    this.#buf = buf;
    this.#records = records;
    this.size = e;
    this.bytes = len;
  }

  /** The entries joined by NUL (decoded and checked once, then kept). */
  vocab(): string {
    if (this.#vocab !== null) return this.#vocab;
    const at = this.#vocabAt;
    const v = decodeText(this.#buf, { start: at, end: at + this.#vocabLen, wide: this.#wide });
    // Entry boundaries from the separators: exactly e − 1 of them, no entry empty.
    const e = this.size;
    const ends = new Uint32Array(e);
    let k = 0;
    for (let p = v.indexOf("\u0000"); p >= 0; p = v.indexOf("\u0000", p + 1)) {
      if (k >= e - 1) fail("separators");
      if (p <= (k === 0 ? 0 : ends[k - 1]! + 1)) fail(`entry ${k} bounds`);
      ends[k++] = p;
    }
    if (e > 0) {
      if (k !== e - 1 || v.length <= (k === 0 ? 0 : ends[k - 1]! + 1)) fail("separators");
      ends[e - 1] = v.length;
    }
    this.#entryEnd = ends;
    this.#vocab = v;
    return v;
  }

  #ends(): Uint32Array {
    if (this.#entryEnd === null) this.vocab();
    return this.#entryEnd!;
  }

  /** Start of entry k in vocab(). */
  entryStart(k: number): number {
    return k === 0 ? 0 : this.#ends()[k - 1]! + 1;
  }

  /** End of entry k in vocab(). */
  entryEnd(k: number): number {
    return this.#ends()[k]!;
  }

  /** The entry holding vocabulary position `pos` (a separator belongs to the entry after it). */
  entryAt(pos: number): number {
    const ends = this.#ends();
    let lo = 0;
    let hi = this.size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entry k's text. */
  entry(k: number): string {
    return this.vocab().slice(this.entryStart(k), this.entryEnd(k));
  }

  /** Calls `visit(record, tf)` for each record holding entry k, ascending. */
  eachPosting(k: number, visit: (record: number, tf: number) => void): void {
    const r = new ByteReader(
      this.#buf,
      this.#postAt + this.#postOff[k]!,
      this.#postAt + this.#postOff[k + 1]!,
    );
    let rec = -1;
    while (r.at < r.end) {
      const v = r.varint();
      rec += Math.floor(v / 2) + 1;
      const tf = v % 2 === 1 ? r.varint() + 2 : 1;
      if (rec >= this.#records) fail(`postings of entry ${k} name record ${rec}`);
      visit(rec, tf);
    }
  }
}
