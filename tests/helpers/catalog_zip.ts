/**
 * Reading our own ZIP archives back, independently of the writer: the end-of-central-
 * directory record, every central directory header, each local header it points at,
 * and the data (inflated with node:zlib) checked against the recorded CRC-32 and sizes.
 * An entry written with a data descriptor (general purpose bit 3, the streamed form) must
 * have zero CRC/sizes in its local header and a descriptor after its data that agrees
 * with the central directory; any other entry's local header must carry them itself.
 * Plus `python3 -m zipfile -t`, a second, unrelated reader.
 */
import { inflateRawSync } from "node:zlib";
import { crc32 } from "../../lib/catalog/zip_writer.ts";

/** One entry as the central directory describes it, with its verified data. */
export interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  data: Uint8Array;
  mode: number;
  flags: number;
}

/** Parses `zip` strictly; throws on any inconsistency. */
export function readZip(zip: Uint8Array): ZipEntry[] {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const eocd = zip.length - 22;
  if (v.getUint32(eocd, true) !== 0x06054b50) throw new Error("no end-of-central-directory record");
  const count = v.getUint16(eocd + 10, true);
  const cdSize = v.getUint32(eocd + 12, true);
  let at = v.getUint32(eocd + 16, true);
  if (at + cdSize !== eocd) throw new Error("central directory does not end at the EOCD");
  const dec = new TextDecoder("utf-8", { fatal: true });
  const out: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (v.getUint32(at, true) !== 0x02014b50) throw new Error(`bad central header ${i}`);
    const flags = v.getUint16(at + 8, true);
    const method = v.getUint16(at + 10, true);
    const crc = v.getUint32(at + 16, true);
    const csize = v.getUint32(at + 20, true);
    const usize = v.getUint32(at + 24, true);
    const nlen = v.getUint16(at + 28, true);
    const xlen = v.getUint16(at + 30, true);
    const clen = v.getUint16(at + 32, true);
    const mode = v.getUint32(at + 38, true) >>> 16;
    const local = v.getUint32(at + 42, true);
    const name = dec.decode(zip.subarray(at + 46, at + 46 + nlen));
    if (v.getUint32(local, true) !== 0x04034b50) throw new Error(`bad local header for "${name}"`);
    if (v.getUint16(local + 6, true) !== flags) {
      throw new Error(`local/central flags differ for "${name}"`);
    }
    const lnlen = v.getUint16(local + 26, true);
    const lxlen = v.getUint16(local + 28, true);
    const start = local + 30 + lnlen + lxlen;
    const local3 = [
      v.getUint32(local + 14, true),
      v.getUint32(local + 18, true),
      v.getUint32(local + 22, true),
    ];
    if (flags & 0x0008) {
      if (local3.some((x) => x !== 0)) {
        throw new Error(`descriptor entry "${name}" has local sizes`);
      }
      let at2 = start + csize;
      if (v.getUint32(at2, true) === 0x08074b50) at2 += 4;
      const desc = [v.getUint32(at2, true), v.getUint32(at2 + 4, true), v.getUint32(at2 + 8, true)];
      if (desc.join() !== [crc, csize, usize].join()) {
        throw new Error(`data descriptor of "${name}" disagrees with the central directory`);
      }
    } else if (local3.join() !== [crc, csize, usize].join()) {
      throw new Error(`local/central CRC or sizes differ for "${name}"`);
    }
    const body = zip.subarray(start, start + csize);
    const data = method === 0 ? body : new Uint8Array(inflateRawSync(body));
    if (data.length !== usize) throw new Error(`size mismatch for "${name}"`);
    if (crc32(data) !== crc) throw new Error(`CRC mismatch for "${name}"`);
    out.push({ name, method, crc, data, mode, flags });
    at += 46 + nlen + xlen + clen;
  }
  return out;
}

/** Runs `unzip -t` on the archive (null when unzip is not installed). */
export async function unzipTest(zip: Uint8Array): Promise<{ code: number; out: string } | null> {
  const path = await Deno.makeTempFile({ suffix: ".zip" });
  try {
    await Deno.writeFile(path, zip);
    const r = await new Deno.Command("unzip", {
      args: ["-t", path],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    const dec = new TextDecoder();
    return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  } finally {
    await Deno.remove(path);
  }
}

/** Runs `python3 -m zipfile -t` on the archive; returns its exit code and output. */
export async function pythonZipTest(zip: Uint8Array): Promise<{ code: number; out: string }> {
  const path = await Deno.makeTempFile({ suffix: ".zip" });
  try {
    await Deno.writeFile(path, zip);
    const r = await new Deno.Command("python3", { args: ["-m", "zipfile", "-t", path] }).output();
    const dec = new TextDecoder();
    return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
  } finally {
    await Deno.remove(path);
  }
}
