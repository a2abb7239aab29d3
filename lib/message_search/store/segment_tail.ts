/**
 * The small variable-length encodings of a segment file (segment_layout.ts): unsigned
 * varints (LEB128, up to 2^53 − 1), string blobs, and each record's payload tail — its id,
 * locator and optional item id — written and read here so the encoder and the decoder
 * cannot drift apart.
 *  - A string blob is varint(byteLength × 2 + wide) then the bytes: UTF-8 when the string
 *    is well-formed, else (a lone surrogate, which UTF-8 cannot carry) UTF-16LE with
 *    wide = 1, so every JS string round-trips exactly.
 *  - A locator is its kind's index in LOCATOR_KINDS, then its fields in LocatorSchema's
 *    order: numbers as varints, `file` as an index into the shared string table, the
 *    16-hex `hash` as 8 bytes, `record_id` as 0 when it equals the record's id (the
 *    usual case) else 1 and a blob. Decoding rebuilds the object with LocatorSchema's key
 *    order, which is the order every extractor writes (so encodeLocator is unchanged).
 * Decoding errors are FormatError (the segment decoder turns them into
 * CorruptGenerationError); encoding assumes input validated by record_check.ts.
 */
import { utf8Length } from "../../text/mod.ts";
import { Buffer } from "node:buffer";
import type { Locator } from "../locator.ts";

/** A malformed encoding met while decoding (converted to CorruptGenerationError). */
export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FormatError";
  }
}

/** Locator kinds by their encoded index. */
export const LOCATOR_KINDS = [
  "native_message_id",
  "native_event",
  "native_sidecar_span",
  "external_record_id",
  "external_line",
] as const satisfies readonly Locator["kind"][];

const KIND_INDEX = new Map<string, number>(LOCATOR_KINDS.map((k, i) => [k, i]));
const enc = new TextEncoder();
// ignoreBOM: a string that begins with U+FEFF must decode to itself (a stripped BOM turned an
// id of "\uFEFF" into "" and shifted every highlight of a text that began with one).
const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A growable byte buffer the encoder appends to. */
export class ByteWriter {
  #buf: Uint8Array;
  length = 0;

  constructor(initialBytes = 4096) {
    this.#buf = new Uint8Array(initialBytes);
  }

  /** Room for `n` more bytes; returns the buffer to write at `length`. */
  reserve(n: number): Uint8Array {
    if (this.length + n > this.#buf.length) {
      const next = new Uint8Array(Math.max(this.#buf.length * 2, this.length + n));
      next.set(this.#buf.subarray(0, this.length));
      this.#buf = next;
    }
    return this.#buf;
  }

  u8(v: number): void {
    this.reserve(1)[this.length++] = v;
  }

  varint(v: number): void {
    const b = this.reserve(8);
    while (v >= 0x80) {
      b[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[this.length++] = v;
  }

  bytes(src: Uint8Array): void {
    this.reserve(src.length).set(src, this.length);
    this.length += src.length;
  }

  /** UTF-8 of a well-formed string; returns its byte length. */
  utf8(s: string): number {
    const b = this.reserve(s.length * 3);
    const { written } = enc.encodeInto(s, b.subarray(this.length));
    this.length += written;
    return written;
  }

  /** One byte a unit (every unit of `s` is below U+0100). */
  latin1(s: string, ascii: boolean): void {
    if (ascii) {
      this.utf8(s);
      return;
    }
    const b = this.reserve(s.length);
    for (let i = 0; i < s.length; i++) b[this.length++] = s.charCodeAt(i);
  }

  /** UTF-16LE, two bytes a unit. */
  utf16(s: string): void {
    const b = this.reserve(s.length * 2);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      b[this.length++] = c & 0xff;
      b[this.length++] = c >>> 8;
    }
  }

  /** A string blob (see the header). */
  blob(s: string): void {
    if (s.isWellFormed()) {
      this.varint(utf8Length(s) * 2);
      this.utf8(s);
    } else {
      this.varint(s.length * 4 + 1);
      this.utf16(s);
    }
  }

  view(): Uint8Array {
    return this.#buf.subarray(0, this.length);
  }
}

/** A cursor over `buf[at, end)` that throws FormatError on anything malformed. */
export class ByteReader {
  at: number;
  constructor(readonly buf: Buffer, at: number, readonly end: number) {
    this.at = at;
  }

  #need(n: number): void {
    if (n > this.end - this.at) throw new FormatError(`encoding runs past its section`);
  }

  u8(): number {
    this.#need(1);
    return this.buf[this.at++]!;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (!Number.isSafeInteger(v)) break;
        return v;
      }
      scale *= 0x80;
    }
    throw new FormatError("varint out of range");
  }

  blob(): string {
    const h = this.varint();
    const wide = h % 2 === 1;
    const len = wide ? (h - 1) / 2 : h / 2;
    this.#need(len);
    const start = this.at;
    this.at += len;
    return decodeText(this.buf, { start, end: this.at, wide });
  }

  hash16(): string {
    this.#need(8);
    let s = "";
    for (let i = 0; i < 8; i++) s += HEX[this.buf[this.at++]!];
    return s;
  }
}

/** Decodes `buf[start, end)`: UTF-8 (strict), or UTF-16LE when `wide`. */
export function decodeText(
  buf: Buffer,
  { start, end, wide }: { start: number; end: number; wide: boolean },
): string {
  if (wide) {
    if ((end - start) % 2 !== 0) throw new FormatError("odd UTF-16 length");
    return buf.toString("utf16le", start, end);
  }
  try {
    return utf8Fatal.decode(buf.subarray(start, end));
  } catch {
    // Only well-formed strings are written as UTF-8: invalid bytes are damage.
    throw new FormatError("invalid UTF-8");
  }
}

/** Interns strings into the segment's shared table. */
export class StringTable {
  readonly list: string[] = [];
  readonly #index = new Map<string, number>();

  ref(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.#index.set(s, i);
    }
    return i;
  }
}

function writeHash(w: ByteWriter, hex: string): void {
  const b = w.reserve(8);
  for (let i = 0; i < 16; i += 2) b[w.length++] = parseInt(hex.slice(i, i + 2), 16);
}

/** Appends `loc` (validated, see record_check.ts) for a record whose id is `id`. */
export function writeLocator(w: ByteWriter, loc: Locator, o: { id: string; strings: StringTable }) {
  w.u8(KIND_INDEX.get(loc.kind)!);
  switch (loc.kind) {
    case "native_message_id":
      w.varint(loc.message_seq);
      w.varint(loc.line);
      break;
    case "native_event":
      w.varint(loc.line);
      break;
    case "native_sidecar_span":
      w.varint(o.strings.ref(loc.file));
      w.varint(loc.offset);
      w.varint(loc.len);
      w.varint(loc.line);
      break;
    case "external_record_id":
      if (loc.record_id === o.id) w.u8(0);
      else {
        w.u8(1);
        w.blob(loc.record_id);
      }
      w.varint(o.strings.ref(loc.file));
      break;
    case "external_line":
      w.varint(o.strings.ref(loc.file));
      w.varint(loc.generation);
      w.varint(loc.line);
      break;
  }
  writeHash(w, loc.hash);
}

/** Reads a locator written by writeLocator. */
export function readLocator(r: ByteReader, o: { id: string; strings: readonly string[] }): Locator {
  const shared = () => {
    const s = o.strings[r.varint()];
    if (s === undefined) throw new FormatError("shared string index out of range");
    return s;
  };
  const kind = LOCATOR_KINDS[r.u8()];
  switch (kind) {
    case "native_message_id": {
      const message_seq = r.varint();
      const line = r.varint();
      return { v: 1, kind, message_seq, line, hash: r.hash16() };
    }
    case "native_event":
      return { v: 1, kind, line: r.varint(), hash: r.hash16() };
    case "native_sidecar_span": {
      const file = shared();
      const offset = r.varint();
      const len = r.varint();
      const line = r.varint();
      return { v: 1, kind, file, offset, len, line, hash: r.hash16() };
    }
    case "external_record_id": {
      const same = r.u8();
      if (same > 1) throw new FormatError("bad record_id marker");
      const record_id = same === 0 ? o.id : r.blob();
      const file = shared();
      return { v: 1, kind, record_id, file, hash: r.hash16() };
    }
    case "external_line": {
      const file = shared();
      const generation = r.varint();
      const line = r.varint();
      return { v: 1, kind, file, generation, line, hash: r.hash16() };
    }
    default:
      throw new FormatError("unknown locator kind");
  }
}
