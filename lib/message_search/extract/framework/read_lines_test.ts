import assert from "node:assert/strict";
import { join } from "node:path";
import { readLineBytes, readLines } from "./read_lines.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function withFile(text: string, fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "s.jsonl");
    await Deno.writeFile(path, enc.encode(text));
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readLineBytes() reads past oversized lines to the end in one call", async () => {
  const big = "x".repeat(100);
  await withFile(`a\n${big}\nb\n${big}\nc\ntorn`, async (path) => {
    const r = await readLineBytes(path, null, { maxBytes: 1 << 20, maxLineBytes: 10 });
    assert.deepEqual(r.lines.map((l) => [l.lineNo, dec.decode(l.bytes)]), [
      [1, "a"],
      [3, "b"],
      [5, "c"],
    ]);
    assert.equal(r.oversized, 2);
    assert.equal(r.complete, true);
    // The torn tail waits: the cursor stops after the last complete line.
    assert.equal(r.cursor.offset, 2 + 101 + 2 + 101 + 2);
  });
});

Deno.test("readLineBytes() stops at the byte budget and the next call continues", async () => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${String(i).padStart(2, "0")}`);
  await withFile(lines.map((l) => l + "\n").join(""), async (path) => {
    const first = await readLineBytes(path, null, { maxBytes: 30, maxLineBytes: 64 });
    assert.equal(first.complete, false);
    assert.ok(first.lines.length > 0 && first.lines.length < 20);
    const rest = await readLineBytes(path, first.cursor, { maxBytes: 1 << 20, maxLineBytes: 64 });
    assert.equal(rest.complete, true);
    const all = [...first.lines, ...rest.lines].map((l) => dec.decode(l.bytes));
    assert.deepEqual(all, lines);
  });
});

Deno.test("readLines() decodes leniently and stamps the rewrite epoch on a fresh read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "s.jsonl");
    await Deno.writeFile(path, new Uint8Array([0x61, 0xff, 0x62, 0x0a]));
    const r = await readLines(path, null, { maxBytes: 64, maxLineBytes: 64, rewriteEpoch: 3 });
    assert.deepEqual(r.lines, [{ line: 1, offset: 0, text: "a\uFFFDb" }]);
    assert.equal(r.cursor.rewrite_epoch, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
