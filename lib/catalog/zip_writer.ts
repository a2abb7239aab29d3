/**
 * The in-memory form of zip_stream.ts: add() entries from bytes, finish() returns the
 * whole archive (for small archives and tests; the session report streams). Also the
 * plain-JS CRC-32 the test helpers check archives with, independently of node:zlib.
 */
import { ZIP_MAX_BYTES, ZIP_MAX_ENTRIES, ZipStream } from "./zip_stream.ts";

export { ZIP_MAX_BYTES, ZIP_MAX_ENTRIES };

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

/** Builds one archive in memory. */
export class ZipWriter {
  #zip = new ZipStream();
  #parts: Uint8Array[] = [];

  /** Adds a file entry. `mode` is the unix permission bits. */
  add(name: string, data: Uint8Array, o: { mtimeMs: number; mode?: number }): void {
    for (const p of this.#zip.bytes(name, data, o)) this.#parts.push(p);
  }

  /** Writes the central directory and returns the whole archive. */
  finish(): Uint8Array {
    for (const p of this.#zip.finish()) this.#parts.push(p);
    const out = new Uint8Array(this.#zip.offset);
    let at = 0;
    for (const p of this.#parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
