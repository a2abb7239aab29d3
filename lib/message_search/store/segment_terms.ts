/**
 * The TERMS section of a segment (segment_layout.ts, issue 27): the segment's term
 * dictionary, per-entry postings and per-record token counts, so a relevance query scores
 * records from their statistics instead of decoding their text, and the store's lexicon
 * (lexicon_pack.ts) learns which generations hold which words without reading any text.
 * Entries follow the vocabulary rule (query/vocabulary.ts); the section is a pure function
 * of the records' folded texts.
 *
 * Layout (little-endian, every array 4-aligned from the section's start):
 *    0  entries e u32       4  encoding u32 (FOLD_LATIN1 | FOLD_UTF16)
 *    8  vocabulary units u32 (the entries, sorted by UTF-16 units, joined by NUL)
 *   12  postings bytes u32
 *   16  entryEnd u32[e]     the unit offset just past entry k (entry k+1 starts one later)
 *       postOff u32[e + 1]  entry k's postings are bytes [postOff[k], postOff[k+1])
 *       tokens u32[n]       tokens in record i (its BM25 length)
 *       vocabulary          one byte a unit (ISO-8859-1) or UTF-16LE, zero-padded to 4
 *       postings            per entry, per record holding it, ascending: varint
 *                           ((record − previous − 1) × 2 + (tf > 1)), then varint(tf − 2)
 *                           when flagged (previous starts at −1)
 * Checks: the structure is checked when the view is built (lengths, monotone offsets,
 * separators); the crc of the section is checked by the segment view the first time its
 * terms are read; a posting that runs past its range or names a record past the segment
 * is a FormatError when decoded (the view turns it into CorruptGenerationError).
 */
import { Buffer } from "node:buffer";
import { eachEntry, eachToken } from "../query/vocabulary.ts";
import { FOLD_LATIN1, FOLD_UTF16 } from "./segment_layout.ts";
import { ByteReader, ByteWriter, FormatError } from "./segment_tail.ts";

const HEAD = 16;
// deno-lint-ignore no-control-regex
const TWO_BYTE = /[^\x00-\xff]/;

function fail(detail: string): never {
  throw new FormatError(`terms: ${detail}`);
}

/** Builds the TERMS section of records whose folded texts are `folded` (in order). */
export function buildTerms(folded: readonly string[]): Uint8Array {
  const ids = new Map<string, number>();
  const words: string[] = [];
  // Per entry: its postings so far (record, tf pairs flattened), the record being counted.
  const post: number[][] = [];
  const last: number[] = [];
  const tokens = new Uint32Array(folded.length);
  for (let i = 0; i < folded.length; i++) {
    const f = folded[i]!;
    let count = 0;
    eachToken(f, (a, b) => {
      count++;
      eachEntry(a, b, (s, e) => {
        const w = f.slice(s, e);
        let id = ids.get(w);
        if (id === undefined) {
          id = words.length;
          ids.set(w, id);
          words.push(w);
          post.push([]);
          last.push(-1);
        }
        const p = post[id]!;
        if (last[id] === i) p[p.length - 1]!++;
        else {
          p.push(i, 1);
          last[id] = i;
        }
      });
    });
    tokens[i] = count;
  }
  const order = words.map((_, k) => k).sort((a, b) => {
    const x = words[a]!;
    const y = words[b]!;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const e = order.length;
  const vocab = order.map((k) => words[k]!).join("\u0000");
  const wide = TWO_BYTE.test(vocab);
  const entryEnd = new Uint32Array(e);
  const postOff = new Uint32Array(e + 1);
  const pw = new ByteWriter(1024);
  let at = 0;
  for (let r = 0; r < e; r++) {
    const k = order[r]!;
    at += words[k]!.length;
    entryEnd[r] = at;
    at++;
    postOff[r] = pw.length;
    const p = post[k]!;
    let prev = -1;
    for (let j = 0; j < p.length; j += 2) {
      const rec = p[j]!;
      const tf = p[j + 1]!;
      pw.varint((rec - prev - 1) * 2 + (tf > 1 ? 1 : 0));
      if (tf > 1) pw.varint(tf - 2);
      prev = rec;
    }
  }
  postOff[e] = pw.length;
  const vocabBytes = wide ? vocab.length * 2 : vocab.length;
  const vocabPadded = (vocabBytes + 3) & ~3;
  const total = HEAD + 4 * (e + e + 1 + folded.length) + vocabPadded + pw.length;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, e, true);
  dv.setUint32(4, wide ? FOLD_UTF16 : FOLD_LATIN1, true);
  dv.setUint32(8, vocab.length, true);
  dv.setUint32(12, pw.length, true);
  let o = HEAD;
  const put = (a: Uint32Array) => {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), o);
    o += a.byteLength;
  };
  put(entryEnd);
  put(postOff);
  put(tokens);
  Buffer.from(out.buffer, o, vocabBytes).write(vocab, 0, wide ? "utf16le" : "latin1");
  o += vocabPadded;
  out.set(pw.view(), o);
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
  readonly #entryEnd: Uint32Array;
  readonly #postOff: Uint32Array;
  readonly #buf: Buffer;
  readonly #vocabAt: number;
  readonly #vocabUnits: number;
  readonly #wide: boolean;
  readonly #postAt: number;
  readonly #records: number;
  #vocab: string | null = null;

  /** `buf[off, off + len)` is the section (off 4-aligned in the buffer's memory). */
  constructor(buf: Buffer, { off, len, records }: { off: number; len: number; records: number }) {
    if (len < HEAD) fail("shorter than its header");
    const dv = new DataView(buf.buffer, buf.byteOffset + off, len);
    const e = dv.getUint32(0, true);
    const enc = dv.getUint32(4, true);
    const units = dv.getUint32(8, true);
    const postBytes = dv.getUint32(12, true);
    if (enc !== FOLD_LATIN1 && enc !== FOLD_UTF16) fail("encoding");
    const wide = enc === FOLD_UTF16;
    const vocabBytes = wide ? units * 2 : units;
    const arrays = 4 * (e + e + 1 + records);
    if (HEAD + arrays + ((vocabBytes + 3) & ~3) + postBytes !== len) fail("section length");
    const base = buf.byteOffset + off + HEAD;
    this.#entryEnd = new Uint32Array(buf.buffer, base, e);
    this.#postOff = new Uint32Array(buf.buffer, base + 4 * e, e + 1);
    this.tokens = new Uint32Array(buf.buffer, base + 4 * (2 * e + 1), records);
    this.#vocabAt = off + HEAD + arrays;
    this.#postAt = this.#vocabAt + ((vocabBytes + 3) & ~3);
    this.#vocabUnits = units;
    this.#wide = wide;
    this.#buf = buf;
    this.#records = records;
    this.size = e;
    this.bytes = len;
    // Entries tile the vocabulary (one separator between two), postings tile theirs.
    let prev = -1;
    for (let k = 0; k < e; k++) {
      const end = this.#entryEnd[k]!;
      if (end <= prev + 1 || end > units) fail(`entry ${k} bounds`);
      if (this.#postOff[k + 1]! <= this.#postOff[k]!) fail(`postings of entry ${k}`);
      prev = end;
    }
    if (e > 0 ? prev !== units : units !== 0) fail("vocabulary length");
    if (this.#postOff[0] !== 0 || this.#postOff[e] !== postBytes) fail("postings length");
  }

  /** The entries joined by NUL (decoded once, then kept). */
  vocab(): string {
    if (this.#vocab !== null) return this.#vocab;
    const at = this.#vocabAt;
    const end = at + (this.#wide ? 2 * this.#vocabUnits : this.#vocabUnits);
    const v = this.#buf.toString(this.#wide ? "utf16le" : "latin1", at, end);
    // Every separator is a NUL: a damaged vocabulary would misname entries.
    for (let k = 0; k + 1 < this.size; k++) {
      if (v.charCodeAt(this.#entryEnd[k]!) !== 0) fail(`separator after entry ${k}`);
    }
    this.#vocab = v;
    return v;
  }

  /** Units of the decoded vocabulary (what keeping it resident costs, 1 or 2 bytes each). */
  get vocabBytes(): number {
    return this.#wide ? 2 * this.#vocabUnits : this.#vocabUnits;
  }

  /** Start of entry k in vocab(). */
  entryStart(k: number): number {
    return k === 0 ? 0 : this.#entryEnd[k - 1]! + 1;
  }

  /** End of entry k in vocab(). */
  entryEnd(k: number): number {
    return this.#entryEnd[k]!;
  }

  /** The entry holding vocabulary position `pos` (a separator belongs to the entry after it). */
  entryAt(pos: number): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#entryEnd[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entry k's text. */
  entry(k: number): string {
    return this.vocab().slice(this.entryStart(k), this.entryEnd(k));
  }

  /**
   * Entry k's text decoded afresh from the section's bytes: a flat string that does not
   * keep this segment's vocabulary alive (a slice of vocab() would), for a caller that
   * keeps entries of many segments (the lexicon build). No separator check: build only
   * from a view whose vocab() was read (which checks them).
   */
  entryCopy(k: number): string {
    const w = this.#wide ? 2 : 1;
    const at = this.#vocabAt;
    return this.#buf.toString(
      this.#wide ? "utf16le" : "latin1",
      at + w * this.entryStart(k),
      at + w * this.entryEnd(k),
    );
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
