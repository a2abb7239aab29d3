/**
 * A streaming ZIP writer (PKWARE APPNOTE 6.3, the subset every unzip reads): entries are
 * produced as chunks, in order, and never held whole. A file up to ZIP_SMALL_BYTES is
 * read at once and written as zip_writer.ts writes it (sizes and CRC-32 in the local
 * header; raw DEFLATE, or stored when deflate does not shrink it). A larger file is read
 * in ZIP_CHUNK_BYTES pieces: its local header has general purpose bit 3 set and zero
 * CRC/sizes, the data follows (stored when deflating its first chunk does not shrink
 * it — JPEG frames, archives — else raw DEFLATE through CompressionStream), then a data
 * descriptor (signature, CRC-32, compressed and uncompressed sizes) and the central
 * directory carry the real values. A file that shrinks while read is cut where it ends;
 * bytes appended meanwhile are not read (`size` is the caller's stat). Names are flagged
 * UTF-8 (bit 11), unix mode bits go in the external attributes, times are DOS local times.
 * `pieces()` writes the same descriptor framing from any async source of pieces whose total
 * is known only at the end (the report's masked text files).
 * No ZIP64: `fits()` tells the caller whether an entry can still be added under
 * ZIP_MAX_BYTES / ZIP_MAX_ENTRIES, and adding past them is a RangeError.
 */
import { crc32 as zlibCrc32, deflateRawSync } from "node:zlib";

/** Hard limits of the non-ZIP64 format (with margin for headers). */
export const ZIP_MAX_BYTES = 0xffff_ffff - 64 * 1024 * 1024;
export const ZIP_MAX_ENTRIES = 0xffff;

/** Files up to this size are read and compressed in one piece. */
export const ZIP_SMALL_BYTES = 1024 * 1024;
/** Read size of larger files. */
export const ZIP_CHUNK_BYTES = 1024 * 1024;

const FLAG_UTF8 = 0x0800;

/** A DOS date and time (two-second resolution, local time, clamped to 1980-2107). */
export function dosTime(ms: number): { time: number; date: number } {
  const d = new Date(ms);
  if (!Number.isFinite(d.getTime()) || d.getFullYear() < 1980) {
    return { time: 0, date: (1 << 5) | 1 };
  }
  const year = Math.min(d.getFullYear(), 2107) - 1980;
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: (year << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}
const FLAG_DESCRIPTOR = 0x0008;

interface Central {
  name: Uint8Array;
  flags: number;
  method: number;
  time: number;
  date: number;
  crc: number;
  csize: number;
  usize: number;
  mode: number;
  offset: number;
}

/** Where an entry's bytes come from. */
export interface ZipSource {
  /** Reads up to `length` bytes at `offset` (fewer at the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Entry metadata. */
export interface ZipEntryOptions {
  mtimeMs: number;
  /** Unix permission bits. @default 0o644 */
  mode?: number;
}

/** Builds one archive as a sequence of chunks. */
export class ZipStream {
  #central: Central[] = [];
  #offset = 0;
  #finished = false;

  /** Bytes produced so far. */
  get offset(): number {
    return this.#offset;
  }

  /** True when an entry of `size` bytes (stored, at worst) still fits the format. */
  fits(name: string, size: number): boolean {
    const worst = 30 + 46 + 2 * new TextEncoder().encode(name).length + size + 16 + 64 * 1024;
    return this.#central.length + 1 < ZIP_MAX_ENTRIES && this.#offset + worst <= ZIP_MAX_BYTES;
  }

  /** An entry from bytes in memory. */
  *bytes(name: string, data: Uint8Array, o: ZipEntryOptions): Generator<Uint8Array> {
    const c = this.#begin(name, data.length, o);
    const deflated = deflateRawSync(data);
    const stored = deflated.length >= data.length;
    const body = stored
      ? data
      : new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.length);
    Object.assign(c, {
      method: stored ? 0 : 8,
      crc: zlibCrc32(data),
      csize: body.length,
      usize: data.length,
    });
    yield* this.#emit(localHeader(c), body);
    this.#central.push(c);
  }

  /** An entry read from `src` (its first `size` bytes); returns the bytes read. */
  async *file(
    name: string,
    src: ZipSource,
    size: number,
    o: ZipEntryOptions,
  ): AsyncGenerator<Uint8Array, number> {
    if (size <= ZIP_SMALL_BYTES) {
      const data = await src.read(0, size);
      yield* this.bytes(name, data, o);
      return data.length;
    }
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < size;) {
        const piece = await src.read(at, Math.min(ZIP_CHUNK_BYTES, size - at));
        if (piece.length === 0) return;
        at += piece.length;
        yield piece;
      }
    };
    return yield* this.pieces(name, chunks(), size, o);
  }

  /**
   * An entry from pieces whose total is known only at the end (a file, or a transform of
   * one such as secret masking): data-descriptor framing; `sizeHint` is what fits()
   * checks. Stored when deflating the first piece does not shrink it. Returns the bytes.
   */
  async *pieces(
    name: string,
    src: AsyncIterable<Uint8Array>,
    sizeHint: number,
    o: ZipEntryOptions,
  ): AsyncGenerator<Uint8Array, number> {
    const c = this.#begin(name, sizeHint, o);
    c.flags |= FLAG_DESCRIPTOR;
    const it = src[Symbol.asyncIterator]();
    const head = await it.next();
    const first = head.done ? new Uint8Array(0) : head.value;
    c.method = first.length > 0 && deflateRawSync(first).length < first.length ? 8 : 0;
    yield* this.#emit(localHeader(c));
    // `first` is handed over first, then the rest in order.
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      if (head.done) return;
      let ended = false;
      try {
        yield first;
        for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
        ended = true;
      } finally {
        // A consumer that stops early (an aborted download) closes the source too.
        if (!ended) await it.return?.();
      }
    };
    let crc = 0, usize = 0, csize = 0;
    const plain = async function* (): AsyncGenerator<Uint8Array> {
      for await (const piece of chunks()) {
        crc = zlibCrc32(piece, crc);
        usize += piece.length;
        yield piece;
      }
    };
    const body = c.method === 0 ? plain() : deflate(plain());
    for await (const piece of body) {
      csize += piece.length;
      yield* this.#emit(piece);
    }
    Object.assign(c, { crc, csize, usize });
    const d = new DataView(new ArrayBuffer(16));
    d.setUint32(0, 0x08074b50, true);
    d.setUint32(4, crc, true);
    d.setUint32(8, csize, true);
    d.setUint32(12, usize, true);
    yield* this.#emit(new Uint8Array(d.buffer));
    this.#central.push(c);
    return usize;
  }

  /** The central directory and the end record. */
  *finish(): Generator<Uint8Array> {
    if (this.#finished) throw new TypeError("Zip archive is already finished");
    this.#finished = true;
    const cdStart = this.#offset;
    for (const c of this.#central) {
      const h = new DataView(new ArrayBuffer(46));
      h.setUint32(0, 0x02014b50, true);
      h.setUint16(4, (3 << 8) | 20, true); // made by: unix, spec 2.0
      h.setUint16(6, 20, true);
      h.setUint16(8, c.flags, true);
      h.setUint16(10, c.method, true);
      h.setUint16(12, c.time, true);
      h.setUint16(14, c.date, true);
      h.setUint32(16, c.crc, true);
      h.setUint32(20, c.csize, true);
      h.setUint32(24, c.usize, true);
      h.setUint16(28, c.name.length, true);
      // extra, comment, disk start, internal attributes: all zero (offsets 30-37).
      h.setUint32(38, ((0o100000 | (c.mode & 0o7777)) << 16) >>> 0, true);
      h.setUint32(42, c.offset, true);
      yield* this.#emit(new Uint8Array(h.buffer), c.name);
    }
    const e = new DataView(new ArrayBuffer(22));
    e.setUint32(0, 0x06054b50, true);
    e.setUint16(8, this.#central.length, true);
    e.setUint16(10, this.#central.length, true);
    e.setUint32(12, this.#offset - cdStart, true);
    e.setUint32(16, cdStart, true);
    yield* this.#emit(new Uint8Array(e.buffer));
  }

  #begin(name: string, size: number, o: ZipEntryOptions): Central {
    if (this.#finished) throw new TypeError("Zip archive is already finished");
    const nameBytes = new TextEncoder().encode(name);
    if (nameBytes.length === 0 || nameBytes.length > 0xffff) {
      throw new RangeError(`Invalid zip entry name "${name.slice(0, 80)}"`);
    }
    if (!this.fits(name, size)) {
      throw new RangeError("Zip archive would exceed the format's limits");
    }
    const { time, date } = dosTime(o.mtimeMs);
    return {
      name: nameBytes,
      flags: FLAG_UTF8,
      method: 0,
      time,
      date,
      crc: 0,
      csize: 0,
      usize: 0,
      mode: o.mode ?? 0o644,
      offset: this.#offset,
    };
  }

  *#emit(...parts: Uint8Array[]): Generator<Uint8Array> {
    for (const p of parts) {
      this.#offset += p.length;
      yield p;
    }
  }
}

function localHeader(c: Central): Uint8Array {
  const h = new Uint8Array(30 + c.name.length);
  const v = new DataView(h.buffer);
  v.setUint32(0, 0x04034b50, true);
  v.setUint16(4, 20, true);
  v.setUint16(6, c.flags, true);
  v.setUint16(8, c.method, true);
  v.setUint16(10, c.time, true);
  v.setUint16(12, c.date, true);
  // With a data descriptor (bit 3) CRC and sizes are zero here: they follow the data.
  const known = (c.flags & FLAG_DESCRIPTOR) === 0;
  v.setUint32(14, known ? c.crc : 0, true);
  v.setUint32(18, known ? c.csize : 0, true);
  v.setUint32(22, known ? c.usize : 0, true);
  v.setUint16(26, c.name.length, true);
  h.set(c.name, 30);
  return h;
}

/**
 * Raw DEFLATE of `input` as it is pulled: one CompressionStream per entry, fed by a pump
 * that reads only as fast as the compressed side is consumed (its writes wait on the
 * stream's queue). Stopping early cancels the stream and the pump.
 */
async function* deflate(input: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const cs = new CompressionStream("deflate-raw");
  const writer = cs.writable.getWriter();
  const reader = cs.readable.getReader();
  const pumped = (async () => {
    try {
      for await (const piece of input) await writer.write(piece as Uint8Array<ArrayBuffer>);
      await writer.close();
      return null;
    } catch (err) {
      // A failed read errors the compressed side too, so the reader below stops.
      await writer.abort(err).catch(() => {/* already errored by a cancel */});
      return err;
    }
  })();
  let done = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      yield r.value;
    }
    done = true;
  } finally {
    // Stopped early: cancelling errors the writable, so the pump's pending write rejects
    // and its for-await closes the input (and the file read behind it).
    if (!done) await reader.cancel().catch(() => {/* already errored */});
    await pumped;
  }
  // A read error aborts the stream, so the loop above has thrown it already; this is the
  // one left: the input failed after the compressed side had ended.
  const err = await pumped;
  if (err) throw err;
}
