/**
 * lexicon.pack (issue 27 item 5): one sorted vocabulary over every generation it covers,
 * with, per entry, the generations whose TERMS section holds it, so an exact search asks
 * "which generations can hold this needle at all" with one substring search over the
 * vocabulary (far smaller than the text) instead of loading every generation a trigram
 * summary cannot rule out. A rare word then costs what its hits cost; `anemometer` still
 * finds `anemometers`, because the vocabulary is searched for the needle's keys as
 * substrings (query/vocabulary.ts says why that is a superset of the records holding it).
 *
 * A cache, like summaries.pack: it holds nothing the generations do not, it names the
 * generations it covers, and a generation it does not name is searched as before (its
 * summary, then its text) — so a missing, stale or damaged lexicon costs speed, never a
 * result. Built off the query path (lexicon_build.ts), written whole through
 * writeFileAtomic, read through Fs.readFileCapped (contained, capped).
 *
 * Layout (little-endian; every array 4-aligned):
 *    0  "INTDLEXP"            8  version u32        12  generations g u32
 *   16  entries e u32        20  encoding u32 (FOLD_LATIN1 | FOLD_UTF16)
 *   24  vocabulary units u32 28  postings bytes u32  32  crc32 of bytes [40, end)
 *   36  zero
 *   40  names                g × 16 ASCII hex digits (the generation's name without `.seg`)
 *       entryEnd u32[e]      unit offset just past entry k (entries joined by NUL)
 *       postOff u32[e + 1]   entry k's postings are bytes [postOff[k], postOff[k + 1])
 *       dense bits           ceil(e / 8) bytes, zero-padded to 4: bit k set = entry k is in
 *                            too many generations to be worth listing (its list is empty,
 *                            and a key that hits it cannot narrow anything)
 *       vocabulary           one byte a unit (ISO-8859-1) or UTF-16LE, zero-padded to 4
 *       postings             per entry, its generations ascending: varint(index − previous − 1)
 *                            (previous starts at −1)
 * Checks: magic, version, lengths and the crc when read (a failure reads as "no lexicon");
 * the structure (monotone offsets, separators, generation indices in range) when viewed.
 */
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { type Fs, type FsStat, writeFileAtomic } from "../../durable/mod.ts";
import { ContainmentError } from "../../errors.ts";
import { crcOf, FOLD_LATIN1, FOLD_UTF16 } from "./segment_layout.ts";
import { ByteReader, ByteWriter, FormatError } from "./segment_tail.ts";

export const LEXICON_FILE = "lexicon.pack";
/** Larger lexicons are not read. */
export const LEXICON_MAX_BYTES = 512 * 1024 * 1024;
const VERSION = 1;
const HEAD = 40;
const NAME_BYTES = 16;
const MAGIC = new TextEncoder().encode("INTDLEXP");
// deno-lint-ignore no-control-regex
const TWO_BYTE = /[^\x00-\xff]/;
const HEX16 = /^[0-9a-f]{16}$/;

/** An entry's generations (indices into the covered list, ascending), or DENSE. */
export type Postings = readonly number[] | typeof DENSE;
export const DENSE = "dense" as const;

/** What encodeLexicon takes. */
export interface LexiconParts {
  /** Generation names covered (`<16 hex>.seg`), in index order. */
  gens: readonly string[];
  /** Entries sorted by UTF-16 units, unique, none empty and none holding NUL. */
  entries: readonly string[];
  postings: readonly Postings[];
}

const pad4 = (n: number) => (n + 3) & ~3;

/** The bytes of lexicon.pack for `p` (see the header). */
export function encodeLexicon(p: LexiconParts): Uint8Array {
  const g = p.gens.length;
  const e = p.entries.length;
  const vocab = p.entries.join("\0");
  const wide = TWO_BYTE.test(vocab);
  const vocabBytes = wide ? 2 * vocab.length : vocab.length;
  // Postings are written first: the layout needs their length.
  const pw = new ByteWriter(1024);
  const postOff = new Uint32Array(e + 1);
  for (let k = 0; k < e; k++) {
    postOff[k] = pw.length;
    const list = p.postings[k]!;
    if (list === DENSE) continue;
    let prev = -1;
    for (const x of list) {
      pw.varint(x - prev - 1);
      prev = x;
    }
  }
  postOff[e] = pw.length;
  const postBytes = pw.length;
  const denseAt = HEAD + NAME_BYTES * g + 4 * (2 * e + 1);
  const vocabAt = denseAt + pad4(Math.ceil(e / 8));
  const postAt = vocabAt + pad4(vocabBytes);
  const out = new Uint8Array(postAt + postBytes);
  const dv = new DataView(out.buffer);
  out.set(MAGIC, 0);
  dv.setUint32(8, VERSION, true);
  dv.setUint32(12, g, true);
  dv.setUint32(16, e, true);
  dv.setUint32(20, wide ? FOLD_UTF16 : FOLD_LATIN1, true);
  dv.setUint32(24, vocab.length, true);
  dv.setUint32(28, postBytes, true);
  const ascii = new TextEncoder();
  for (const [i, name] of p.gens.entries()) {
    out.set(ascii.encode(name.slice(0, NAME_BYTES)), HEAD + NAME_BYTES * i);
  }
  const endAt = HEAD + NAME_BYTES * g;
  const offAt = endAt + 4 * e;
  let unit = 0;
  for (let k = 0; k < e; k++) {
    unit += p.entries[k]!.length;
    dv.setUint32(endAt + 4 * k, unit, true);
    unit++; // the NUL
    if (p.postings[k] === DENSE) out[denseAt + (k >> 3)]! |= 1 << (k & 7);
  }
  out.set(new Uint8Array(postOff.buffer), offAt);
  out.set(pw.view(), postAt);
  out.set(Buffer.from(vocab, wide ? "utf16le" : "latin1"), vocabAt);
  dv.setUint32(32, crcOf(out.subarray(HEAD)), true);
  return out;
}

function fail(detail: string): never {
  throw new FormatError(`lexicon: ${detail}`);
}

/** lexicon.pack viewed in place (see the header). */
export class LexiconView {
  /** Covered generation names (`<16 hex>.seg`), by index. */
  readonly gens: readonly string[];
  /** Covered generation name → index. */
  readonly index: ReadonlyMap<string, number>;
  /** Entries. */
  readonly size: number;
  /** Bytes of the file (what keeping it resident costs, plus the decoded vocabulary). */
  readonly bytes: number;
  /** The entries joined by NUL. */
  readonly vocab: string;
  readonly #entryEnd: Uint32Array;
  readonly #postOff: Uint32Array;
  readonly #dense: Uint8Array;
  readonly #post: Buffer;

  /** Views `bytes` (a whole file; FormatError when it is not a valid lexicon). */
  constructor(bytes: Uint8Array) {
    // A fresh buffer with byteOffset 0 keeps the arrays 4-aligned.
    const b = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    if (b.length < HEAD || !MAGIC.every((m, i) => b[i] === m)) fail("magic");
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (dv.getUint32(8, true) !== VERSION) fail("version");
    const g = dv.getUint32(12, true);
    const e = dv.getUint32(16, true);
    const enc = dv.getUint32(20, true);
    const units = dv.getUint32(24, true);
    const postBytes = dv.getUint32(28, true);
    if (enc !== FOLD_LATIN1 && enc !== FOLD_UTF16) fail("encoding");
    if (dv.getUint32(36, true) !== 0) fail("header padding");
    const wide = enc === FOLD_UTF16;
    const denseAt = HEAD + NAME_BYTES * g + 4 * (2 * e + 1);
    const vocabAt = denseAt + pad4(Math.ceil(e / 8));
    const postAt = vocabAt + pad4(wide ? 2 * units : units);
    if (postAt + postBytes !== b.length) fail("length");
    if (dv.getUint32(32, true) !== crcOf(b.subarray(HEAD))) fail("checksum");
    const names = new TextDecoder().decode(b.subarray(HEAD, HEAD + NAME_BYTES * g));
    const gens: string[] = [];
    const index = new Map<string, number>();
    for (let i = 0; i < g; i++) {
      const hex = names.slice(NAME_BYTES * i, NAME_BYTES * (i + 1));
      if (!HEX16.test(hex)) fail(`generation ${i} name`);
      gens.push(`${hex}.seg`);
      index.set(`${hex}.seg`, i);
    }
    this.gens = gens;
    this.index = index;
    this.size = e;
    this.bytes = b.length;
    const endAt = b.byteOffset + HEAD + NAME_BYTES * g;
    this.#entryEnd = new Uint32Array(b.buffer, endAt, e);
    this.#postOff = new Uint32Array(b.buffer, endAt + 4 * e, e + 1);
    this.#dense = b.subarray(denseAt, vocabAt);
    this.#post = Buffer.from(b.buffer, b.byteOffset + postAt, postBytes);
    let prev = -1;
    for (let k = 0; k < e; k++) {
      const end = this.#entryEnd[k]!;
      if (end <= prev + 1 || end > units) fail(`entry ${k} bounds`);
      if (this.#postOff[k + 1]! < this.#postOff[k]!) fail(`postings of entry ${k}`);
      prev = end;
    }
    if (e > 0 ? prev !== units : units !== 0) fail("vocabulary length");
    if (this.#postOff[0] !== 0 || this.#postOff[e] !== postBytes) fail("postings length");
    const v = Buffer.from(b.buffer, b.byteOffset + vocabAt, wide ? 2 * units : units)
      .toString(wide ? "utf16le" : "latin1");
    for (let k = 0; k + 1 < e; k++) {
      if (v.charCodeAt(this.#entryEnd[k]!) !== 0) fail(`separator after entry ${k}`);
    }
    this.vocab = v;
  }

  /** Entry k's text. */
  entry(k: number): string {
    const start = k === 0 ? 0 : this.#entryEnd[k - 1]! + 1;
    return this.vocab.slice(start, this.#entryEnd[k]!);
  }

  /** True when entry k is dense (see the header). */
  isDense(k: number): boolean {
    return (this.#dense[k >> 3]! & (1 << (k & 7))) !== 0;
  }

  /** Calls `visit(generation index)` for each generation holding entry k (not dense). */
  eachGen(k: number, visit: (g: number) => void): void {
    const r = new ByteReader(this.#post, this.#postOff[k]!, this.#postOff[k + 1]!);
    let g = -1;
    while (r.at < r.end) {
      g += r.varint() + 1;
      if (g >= this.gens.length) fail(`postings of entry ${k} name generation ${g}`);
      visit(g);
    }
  }

  /** The entry holding vocabulary position `pos`. */
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

  /**
   * The generations holding an entry that contains `key` as a substring, as one mark per
   * covered generation; null when that cannot narrow anything: a dense entry matches, or
   * more than `maxEntries` entries do (a short key inside much of the vocabulary costs
   * more to collect than the summaries it would save). `key` holds token units only, so
   * a match never spans two entries.
   */
  holders(key: string, maxEntries: number): Uint8Array | null {
    const marks = new Uint8Array(this.gens.length);
    const v = this.vocab;
    let from = 0;
    let n = 0;
    for (;;) {
      const p = v.indexOf(key, from);
      if (p < 0) return marks;
      const k = this.entryAt(p);
      if (this.isDense(k) || ++n > maxEntries) return null;
      this.eachGen(k, (g) => (marks[g] = 1));
      from = this.#entryEnd[k]! + 1;
    }
  }
}

/** A lexicon read from disk and the identity of the file it came from. */
export interface LexiconRead {
  view: LexiconView;
  id: string;
}

/** Identity of a file: a rename over it changes it. */
export function fileIdentity(st: FsStat): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/**
 * The identity of lexicon.pack at `root` now, or null when it is missing (a stat: what a
 * reader checks before re-reading it).
 */
export async function lexiconIdentity(fs: Fs, root: string): Promise<string | null> {
  try {
    return fileIdentity(await fs.stat(join(root, LEXICON_FILE)));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Reads lexicon.pack at `root`: null when it is missing, refused by the contained reader
 * (a symlink, FIFO or oversized file planted at its name) or not a valid lexicon — all
 * mean "no lexicon", and the next build renames a fresh one over it. Other I/O errors
 * propagate.
 */
export async function readLexicon(fs: Fs, root: string): Promise<LexiconRead | null> {
  let read;
  try {
    read = await fs.readFileCapped(join(root, LEXICON_FILE), LEXICON_MAX_BYTES);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof ContainmentError) return null;
    throw err;
  }
  try {
    return { view: new LexiconView(read.bytes), id: fileIdentity(read.stat) };
  } catch (err) {
    if (err instanceof FormatError) return null;
    throw err;
  }
}

/** Writes `bytes` as lexicon.pack at `root` (temp, fsync, rename, fsync the directory). */
export async function writeLexicon(fs: Fs, root: string, bytes: Uint8Array): Promise<void> {
  await writeFileAtomic(join(root, LEXICON_FILE), bytes, { fs });
}
