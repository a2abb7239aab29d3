/**
 * summaries.pack: every generation's bigram+trigram summary (the SUMMARY section of its
 * `.seg` file) in one file, so a cold process rules generations out without opening
 * them. Measured on the bench store (1,884 generations, 3.7 MiB of summaries): opening
 * each file for its header and summary costs ~1,900 contained opens per cold query,
 * while the pack is one read; without either a cold no-hit query must read every file.
 * A cache: it holds nothing the generations do not, so a missing or damaged pack only
 * costs loads (readers treat an absent summary as "may match") and the next publish
 * rebuilds it.
 * Layout: a 16-byte header ("INTDSUMP", version u32, crc32 of those 12 bytes), then
 * entries, each `len u32 | crc32 u32 | body`, body = the 16 hex digits of the generation's
 * name then its summary's u32 words (len = 16 + 4 × words, so every entry stays 4-aligned
 * and a reader views the words in place). A summary is a pure function of a generation's
 * bytes and generations are content-named, so an entry is valid for as long as its
 * generation exists, whatever the manifest's revision.
 * Invariants and durability (like every store file, only through the store's Fs):
 *  - written by publish under the writer lock, before the manifest commit (an I/O error
 *    fails the publish like any other); entries for the publish's new generations are
 *    appended (no fsync: a torn or zero-filled tail fails its crc and is ignored), and the
 *    pack is rewritten whole through writeFileAtomic when it is missing or damaged or when
 *    entries of unreferenced generations outweigh the live ones;
 *  - read through Fs.readFileCapped (contained, capped at PACK_MAX_BYTES; a refused file
 *    counts as missing); entries are taken up to the first damaged one. Other I/O errors
 *    propagate.
 */
import { join } from "node:path";
import { type Fs, type FsStat, statOrNull, writeFileAtomic } from "../../durable/mod.ts";
import { ContainmentError, NotFoundError } from "../../errors.ts";
import { CorruptGenerationError } from "./generation_error.ts";
import { crcOf, H_CRCS, H_TABLE, SUMMARY } from "./segment_layout.ts";
import { GENERATION_NAME_RE, GENERATIONS_DIR, loadSegment } from "./segments.ts";
import type { EncodedSegment } from "./types.ts";

export const SUMMARY_PACK_FILE = "summaries.pack";
/** Larger packs are not read (the bench's 530k-message store needs ~4 MiB). */
export const PACK_MAX_BYTES = 256 * 1024 * 1024;
/** Dead entries are tolerated up to the live bytes or this, whichever is larger. */
export const PACK_MIN_COMPACT_BYTES = 1024 * 1024;
const PACK_VERSION = 1;
const HEAD = 16;
const MAGIC = new TextEncoder().encode("INTDSUMP");
const NAME_BYTES = 16;
const ascii = new TextDecoder();

/** Generation name → its summary words. */
export type Summaries = Map<string, Uint32Array>;

/** What reading the pack found. */
export interface PackRead {
  summaries: Summaries;
  /** Entry bytes per name (the writer's index). */
  sizes: Map<string, number>;
  /** False when the file is missing, its header is bad, or an entry is damaged. */
  whole: boolean;
  /** The identity of the file read (null: missing). */
  id: string | null;
}

function identity(st: FsStat): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

function header(): Uint8Array {
  const h = new Uint8Array(HEAD);
  const dv = new DataView(h.buffer);
  h.set(MAGIC, 0);
  dv.setUint32(8, PACK_VERSION, true);
  dv.setUint32(12, crcOf(h.subarray(0, 12)), true);
  return h;
}

/** The pack entries of `items` (name → summary words), concatenated. */
function entries(items: Iterable<[string, Uint32Array]>): Uint8Array {
  const list = [...items];
  let total = 0;
  for (const [, w] of list) total += 8 + NAME_BYTES + w.byteLength;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  let at = 0;
  for (const [name, words] of list) {
    const len = NAME_BYTES + words.byteLength;
    out.set(new TextEncoder().encode(name.slice(0, NAME_BYTES)), at + 8);
    out.set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength), at + 8 + NAME_BYTES);
    dv.setUint32(at, len, true);
    dv.setUint32(at + 4, crcOf(out.subarray(at + 8, at + 8 + len)), true);
    at += 8 + len;
  }
  return out;
}

/** The summary words inside an encoded segment (its bytes are the encoder's, aligned). */
export function summaryOfSegment(e: EncodedSegment): Uint32Array {
  const dv = new DataView(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength);
  const off = Number(dv.getBigUint64(H_TABLE + 16 * SUMMARY, true));
  const len = Number(dv.getBigUint64(H_TABLE + 16 * SUMMARY + 8, true));
  // Checked like a load would, so a damaged buffer never reaches the pack.
  if (dv.getUint32(H_CRCS + 4 * SUMMARY, true) !== crcOf(e.bytes.subarray(off, off + len))) {
    throw new CorruptGenerationError(e.name, "summary section checksum");
  }
  return new Uint32Array(e.bytes.slice(off, off + len).buffer);
}

/** Reads the pack at `root` (see the header); a missing file is an empty, non-whole read. */
export async function readPack(fs: Fs, root: string): Promise<PackRead> {
  const out: PackRead = { summaries: new Map(), sizes: new Map(), whole: false, id: null };
  let read;
  try {
    read = await fs.readFileCapped(join(root, SUMMARY_PACK_FILE), PACK_MAX_BYTES);
  } catch (err) {
    // Missing, or refused (a symlink, FIFO or oversized file planted at its name): no
    // pack, and the next publish renames a fresh one over whatever is there.
    if (err instanceof Deno.errors.NotFound || err instanceof ContainmentError) return out;
    throw err;
  }
  out.id = identity(read.stat);
  // A fresh buffer with byteOffset 0 keeps the words 4-aligned whatever the reader returned.
  const bytes = read.bytes.byteOffset % 4 === 0 ? read.bytes : read.bytes.slice();
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < HEAD || !MAGIC.every((b, i) => bytes[i] === b)) return out;
  if (dv.getUint32(8, true) !== PACK_VERSION) return out;
  if (dv.getUint32(12, true) !== crcOf(bytes.subarray(0, 12))) return out;
  let at = HEAD;
  while (at + 8 <= bytes.length) {
    const len = dv.getUint32(at, true);
    const end = at + 8 + len;
    if (len < NAME_BYTES + 4 || len % 4 !== 0 || end > bytes.length) return out;
    const body = bytes.subarray(at + 8, end);
    if (dv.getUint32(at + 4, true) !== crcOf(body)) return out;
    const name = `${ascii.decode(body.subarray(0, NAME_BYTES))}.seg`;
    const words = (len - NAME_BYTES) / 4;
    if (!GENERATION_NAME_RE.test(name) || (words & (words - 1)) !== 0) return out;
    out.summaries.set(
      name,
      new Uint32Array(bytes.buffer, bytes.byteOffset + at + 8 + NAME_BYTES, words),
    );
    out.sizes.set(name, 8 + len);
    at = end;
  }
  out.whole = at === bytes.length;
  return out;
}

/** The writer's view of the pack on disk, valid while the file keeps this identity. */
interface Known {
  id: string;
  sizes: Map<string, number>;
  bytes: number;
}

/** Options for {@link PackWriter}. */
export interface PackWriterOptions {
  /** @default PACK_MIN_COMPACT_BYTES */
  minCompactBytes?: number;
}

/** Keeps the pack in step with publishes (one per store instance; calls are serialised). */
export class PackWriter {
  readonly #fs: Fs;
  readonly #root: string;
  readonly #minCompact: number;
  #known: Known | null = null;

  constructor(
    fs: Fs,
    root: string,
    { minCompactBytes = PACK_MIN_COMPACT_BYTES }: PackWriterOptions = {},
  ) {
    this.#fs = fs;
    this.#root = root;
    this.#minCompact = minCompactBytes;
  }

  /**
   * Adds the summaries of `written` generations that `referenced` names, and rewrites the
   * pack when it is missing, damaged, or mostly dead (see the header).
   */
  async update(referenced: ReadonlySet<string>, written: readonly EncodedSegment[]) {
    const path = join(this.#root, SUMMARY_PACK_FILE);
    const st = await statOrNull(this.#fs, path);
    let known = this.#known !== null && st !== null && identity(st) === this.#known.id
      ? this.#known
      : null;
    let old: PackRead | null = null;
    if (known === null && st !== null) {
      old = await readPack(this.#fs, this.#root);
      if (old.whole && old.id !== null) {
        let bytes = HEAD;
        for (const n of old.sizes.values()) bytes += n;
        known = { id: old.id, sizes: old.sizes, bytes };
      }
    }
    const fresh = new Map<string, Uint32Array>();
    for (const e of written) {
      if (referenced.has(e.name) && !known?.sizes.has(e.name)) {
        fresh.set(e.name, summaryOfSegment(e));
      }
    }
    let live = HEAD;
    if (known) { for (const [name, n] of known.sizes) if (referenced.has(name)) live += n; }
    if (known === null || known.bytes - live > Math.max(live, this.#minCompact)) {
      await this.#rewrite(referenced, { old: old ?? await readPack(this.#fs, this.#root), fresh });
    } else if (fresh.size > 0) {
      await this.#append(known, fresh);
    } else this.#known = known;
  }

  async #append(known: Known, fresh: Map<string, Uint32Array>): Promise<void> {
    const path = join(this.#root, SUMMARY_PACK_FILE);
    const bytes = entries(fresh);
    const h = await this.#fs.openAppend(path);
    try {
      await h.writeAll(bytes);
    } finally {
      h.close();
    }
    const sizes = new Map(known.sizes);
    for (const [name, w] of fresh) sizes.set(name, 8 + NAME_BYTES + w.byteLength);
    const st = await this.#fs.stat(path);
    // Another writer (lock "none") may have appended too: then the next call re-reads.
    this.#known = st.size === known.bytes + bytes.length
      ? { id: identity(st), sizes, bytes: st.size }
      : null;
  }

  /** Writes a new pack of every referenced generation's summary. */
  async #rewrite(
    referenced: ReadonlySet<string>,
    { old, fresh }: { old: PackRead; fresh: Map<string, Uint32Array> },
  ): Promise<void> {
    const items = new Map<string, Uint32Array>();
    for (const name of referenced) {
      const words = fresh.get(name) ?? old.summaries.get(name) ?? await this.#fromFile(name);
      if (words !== null) items.set(name, words);
    }
    const body = entries(items);
    const bytes = new Uint8Array(HEAD + body.length);
    bytes.set(header(), 0);
    bytes.set(body, HEAD);
    const path = join(this.#root, SUMMARY_PACK_FILE);
    await writeFileAtomic(path, bytes, { fs: this.#fs });
    const sizes = new Map<string, number>();
    for (const [name, w] of items) sizes.set(name, 8 + NAME_BYTES + w.byteLength);
    this.#known = { id: identity(await this.#fs.stat(path)), sizes, bytes: bytes.length };
  }

  /** A generation's summary from its file; null when it is missing or damaged. */
  async #fromFile(name: string): Promise<Uint32Array | null> {
    try {
      const v = await loadSegment(this.#fs, join(this.#root, GENERATIONS_DIR), name);
      return v.summary.slice();
    } catch (err) {
      // Readers report a damaged generation when they meet it (F8); the pack just lacks it.
      if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return null;
      throw err;
    }
  }
}
