import assert from "node:assert/strict";
import { join } from "node:path";
import { pythonZipTest, readZip, unzipTest } from "../../tests/helpers/catalog_zip.ts";
import { buildCatalogWorld } from "../../tests/helpers/catalog_world.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { sessionReportStream } from "./report_zip.ts";
import { crc32 } from "./zip_writer.ts";
import { ZIP_CHUNK_BYTES, type ZipSource, ZipStream } from "./zip_stream.ts";

const memory = (bytes: Uint8Array): ZipSource & { reads: number } => ({
  reads: 0,
  read(offset, length) {
    this.reads++;
    return Promise.resolve(bytes.slice(offset, offset + length));
  },
});

async function collect(gen: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, out: Uint8Array[]) {
  for await (const c of gen) out.push(c);
}

function join_(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("ZipStream writes big files in chunks with data descriptors; unzip, python and our reader agree", async () => {
  const text = new TextEncoder().encode("a compressible spine line\n".repeat(200_000)); // 5.2 MB
  const random = crypto.getRandomValues(new Uint8Array(65536));
  const noise = new Uint8Array(3 * ZIP_CHUNK_BYTES + 17);
  for (let i = 0; i < noise.length; i += random.length) {
    noise.set(random.subarray(0, noise.length - i), i);
  }
  const small = new TextEncoder().encode("small ✓");
  const z = new ZipStream();
  const parts: Uint8Array[] = [];
  const src = memory(text);
  await collect(z.file("s/session.jsonl", src, text.length, { mtimeMs: Date.now() }), parts);
  await collect(
    z.file("s/frames/f.jpg", memory(noise), noise.length, { mtimeMs: 0, mode: 0o600 }),
    parts,
  );
  await collect(z.file("s/small.txt", memory(small), small.length, { mtimeMs: Date.now() }), parts);
  // A file that shrank after its stat: cut where it ends, sizes say so.
  const shrunk = memory(text.subarray(0, 2 * ZIP_CHUNK_BYTES + 5));
  await collect(z.file("s/shrunk.log", shrunk, 4 * ZIP_CHUNK_BYTES, { mtimeMs: 0 }), parts);
  await collect(z.finish(), parts);
  assert.ok(src.reads >= 5, "the big file is read in pieces");
  assert.ok(
    Math.max(...parts.map((p) => p.length)) <= ZIP_CHUNK_BYTES + 64 * 1024,
    "no chunk holds a whole file",
  );
  const zip = join_(parts);
  const entries = readZip(zip);
  assert.deepEqual(entries.map((e) => [e.name, e.method, (e.flags & 0x0008) !== 0]), [
    ["s/session.jsonl", 8, true],
    ["s/frames/f.jpg", 0, true],
    ["s/small.txt", entries[2]!.method, false],
    ["s/shrunk.log", 8, true],
  ]);
  assert.deepEqual(entries[0]!.data, text);
  assert.equal(entries[0]!.crc, crc32(text));
  assert.deepEqual(entries[1]!.data, noise);
  assert.deepEqual(entries[2]!.data, small);
  assert.equal(entries[3]!.data.length, 2 * ZIP_CHUNK_BYTES + 5);
  assert.equal(entries[1]!.mode & 0o777, 0o600);
  const py = await pythonZipTest(zip);
  assert.equal(py.code, 0, py.out);
  const unzip = await unzipTest(zip);
  if (unzip) assert.equal(unzip.code, 0, unzip.out);
});

Deno.test("sessionReportStream() streams a big session lazily and closes its file when the download is cancelled", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const s = w.natives[0]!;
    const big = join(s.dir, "turns", "turn_050_stdout.txt");
    Deno.writeTextFileSync(big, "build output line\n".repeat(700_000)); // 12.6 MB
    const { stream } = await sessionReportStream(w.deps, s.id);
    const parts: Uint8Array[] = [];
    for await (const c of stream) parts.push(c);
    assert.ok(Math.max(...parts.map((p) => p.length)) <= ZIP_CHUNK_BYTES + 64 * 1024);
    const zip = join_(parts);
    const e = readZip(zip).find((x) => x.name.endsWith("turn_050_stdout.txt"))!;
    assert.deepEqual(e.data, Deno.readFileSync(big));
    const unzip = await unzipTest(zip);
    if (unzip) assert.equal(unzip.code, 0, unzip.out);
    // Cancelled mid-file (an incompressible one, stored: output follows input): the walk
    // stops and its open file is closed (counted in /proc/self/fd).
    const noise = new Uint8Array(6 * ZIP_CHUNK_BYTES);
    for (let i = 0; i < noise.length; i += 65536) {
      crypto.getRandomValues(noise.subarray(i, i + 65536));
    }
    Deno.writeFileSync(big, noise);
    // The big file's own descriptors (a count of every fd would also see whatever else the
    // test process opens or closes meanwhile).
    const fds = () =>
      [...Deno.readDirSync("/proc/self/fd")].filter((e) => {
        try {
          return Deno.readLinkSync(`/proc/self/fd/${e.name}`) === big;
        } catch {
          return false; // closed while listing
        }
      }).length;
    const before = fds();
    const again = await sessionReportStream(w.deps, s.id);
    const reader = again.stream.getReader();
    for (let got = 0; got < 3 * ZIP_CHUNK_BYTES;) got += (await reader.read()).value!.length;
    assert.equal(fds(), before + 1, "one file open while streaming");
    await reader.cancel();
    assert.equal(fds(), before, "no file left open after the cancel");
    // The same inside a deflated entry (compressed output is pulled through a pump).
    Deno.writeTextFileSync(big, "build output line\n".repeat(2_000_000));
    const third = (await sessionReportStream(w.deps, s.id)).stream.getReader();
    let inside = false;
    for (let i = 0; i < 10_000 && !inside; i++) {
      const r = await third.read();
      assert.ok(!r.done, "the big file is still open before the stream ends");
      inside = fds() === before + 1 && r.value.length > 1000;
    }
    await third.read();
    await third.cancel();
    // The pump notices the cancel at its next pending write: on a loaded machine that can
    // come a few ticks after cancel() resolves. It must come, and soon.
    for (let i = 0; i < 100 && fds() !== before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(fds(), before, "no file left open after a cancel mid-deflate");
  }));
