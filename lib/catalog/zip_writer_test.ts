import assert from "node:assert/strict";
import { crc32, ZipWriter } from "./zip_writer.ts";
import { pythonZipTest, readZip } from "../../tests/helpers/catalog_zip.ts";

const enc = new TextEncoder();

Deno.test("crc32() matches the IEEE check values", () => {
  assert.equal(crc32(enc.encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(enc.encode("The quick brown fox jumps over the lazy dog")), 0x414fa339);
});

Deno.test("ZipWriter archives read back by our parser and by python's zipfile", async () => {
  const z = new ZipWriter();
  const big = enc.encode("compressible line\n".repeat(5000));
  const random = crypto.getRandomValues(new Uint8Array(4096));
  z.add("s/session.jsonl", big, { mtimeMs: Date.UTC(2026, 4, 24, 10, 30, 0) });
  z.add("s/turns/turn_001_model.txt", random, { mtimeMs: Date.now(), mode: 0o600 });
  z.add("s/empty.txt", new Uint8Array(0), { mtimeMs: 0 });
  z.add("s/ünïcode ✓.txt", enc.encode("héllo"), { mtimeMs: Date.now() });
  const zip = z.finish();
  const entries = readZip(zip);
  assert.deepEqual(entries.map((e) => e.name), [
    "s/session.jsonl",
    "s/turns/turn_001_model.txt",
    "s/empty.txt",
    "s/ünïcode ✓.txt",
  ]);
  assert.equal(entries[0]!.method, 8, "text deflates");
  assert.equal(entries[1]!.method, 0, "random bytes are stored");
  assert.deepEqual(entries[0]!.data, big);
  assert.deepEqual(entries[1]!.data, random);
  assert.equal(entries[1]!.mode & 0o777, 0o600);
  assert.ok(entries.every((e) => (e.flags & 0x0800) !== 0), "names flagged UTF-8");
  const py = await pythonZipTest(zip);
  assert.equal(py.code, 0, py.out);
  assert.throws(() => z.finish(), TypeError);
});
