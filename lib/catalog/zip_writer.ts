/**
 * A minimal ZIP writer (PKWARE APPNOTE 6.3, the subset every unzip reads): per entry a
 * local file header, the data (raw DEFLATE through node:zlib, or stored when deflate
 * does not shrink it), then one central directory and the end-of-central-directory
 * record. Names are flagged UTF-8 (general purpose bit 11); unix permission bits go in
 * the external attributes; times are DOS local times (two-second resolution, clamped to
 * 1980). No ZIP64: callers keep the archive under ZIP_MAX_BYTES and ZIP_MAX_ENTRIES, and
 * add() refuses past them (RangeError) so a corrupt archive is never produced.
 */
import { deflateRawSync } from "node:zlib";

/** Hard limits of the non-ZIP64 format (with margin for headers). */
export const ZIP_MAX_BYTES = 0xffff_ffff - 64 * 1024 * 1024;
export const ZIP_MAX_ENTRIES = 0xffff;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, reflected, as ZIP uses it). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function dosTime(ms: number): { time: number; date: number } {
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

interface Central {
  name: Uint8Array;
  method: number;
  time: number;
  date: number;
  crc: number;
  csize: number;
  usize: number;
  mode: number;
  offset: number;
}

/** Builds one archive in memory. */
export class ZipWriter {
  #parts: Uint8Array[] = [];
  #central: Central[] = [];
  #offset = 0;
  #finished = false;

  /** Adds a file entry. `mode` is the unix permission bits. */
  add(name: string, data: Uint8Array, o: { mtimeMs: number; mode?: number }): void {
    if (this.#finished) throw new TypeError("Zip archive is already finished");
    const nameBytes = new TextEncoder().encode(name);
    if (nameBytes.length === 0 || nameBytes.length > 0xffff) {
      throw new RangeError(`Invalid zip entry name "${name.slice(0, 80)}"`);
    }
    if (this.#central.length >= ZIP_MAX_ENTRIES) throw new RangeError("Too many zip entries");
    const deflated = deflateRawSync(data);
    const stored = deflated.length >= data.length;
    const body = stored
      ? data
      : new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.length);
    if (this.#offset + 30 + nameBytes.length + body.length > ZIP_MAX_BYTES) {
      throw new RangeError("Zip archive would exceed the format's 4 GiB limit");
    }
    const { time, date } = dosTime(o.mtimeMs);
    const c: Central = {
      name: nameBytes,
      method: stored ? 0 : 8,
      time,
      date,
      crc: crc32(data),
      csize: body.length,
      usize: data.length,
      mode: o.mode ?? 0o644,
      offset: this.#offset,
    };
    const h = new DataView(new ArrayBuffer(30));
    h.setUint32(0, 0x04034b50, true);
    h.setUint16(4, 20, true);
    h.setUint16(6, 0x0800, true);
    h.setUint16(8, c.method, true);
    h.setUint16(10, time, true);
    h.setUint16(12, date, true);
    h.setUint32(14, c.crc, true);
    h.setUint32(18, c.csize, true);
    h.setUint32(22, c.usize, true);
    h.setUint16(26, nameBytes.length, true);
    h.setUint16(28, 0, true);
    this.#push(new Uint8Array(h.buffer), nameBytes, body);
    this.#central.push(c);
  }

  #push(...parts: Uint8Array[]): void {
    for (const p of parts) {
      this.#parts.push(p);
      this.#offset += p.length;
    }
  }

  /** Writes the central directory and returns the whole archive. */
  finish(): Uint8Array {
    if (this.#finished) throw new TypeError("Zip archive is already finished");
    this.#finished = true;
    const cdStart = this.#offset;
    for (const c of this.#central) {
      const h = new DataView(new ArrayBuffer(46));
      h.setUint32(0, 0x02014b50, true);
      h.setUint16(4, (3 << 8) | 20, true); // made by: unix, spec 2.0
      h.setUint16(6, 20, true);
      h.setUint16(8, 0x0800, true);
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
      this.#push(new Uint8Array(h.buffer), c.name);
    }
    const e = new DataView(new ArrayBuffer(22));
    e.setUint32(0, 0x06054b50, true);
    e.setUint16(8, this.#central.length, true);
    e.setUint16(10, this.#central.length, true);
    e.setUint32(12, this.#offset - cdStart, true);
    e.setUint32(16, cdStart, true);
    this.#push(new Uint8Array(e.buffer));
    const out = new Uint8Array(this.#offset);
    let at = 0;
    for (const p of this.#parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
