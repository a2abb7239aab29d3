/**
 * Pins readIncrement's chunk scan against an in-memory oracle. The scan takes a chunk whole
 * up to its last "\n" when no line in it can pass `maxLineBytes` and the `maxBytes`
 * boundary cannot fall inside it, and walks it line by line otherwise; line numbers come
 * from the split, not from the scan. Whatever the chunk path, reading a file to the end
 * must yield every complete line once, in order, with its number, each oversized line
 * counted with its number and length, and a final cursor just past the last "\n".
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { lineText } from "../durable/mod.ts";
import { READ_CHUNK_BYTES, readIncrement, type ReadIncrementOptions } from "./cursor.ts";
import type { FileCursor } from "./cursor_types.ts";

/** Deterministic LCG: the same files on every run. */
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** A file of mixed line lengths: short, chunk-sized and longer than a chunk. */
function makeFile(rand: () => number, torn: boolean): { bytes: Uint8Array; lines: string[] } {
  const lines: string[] = [];
  let size = 0;
  const target = Math.floor(rand() * 3.5 * READ_CHUNK_BYTES);
  while (size < target) {
    const r = rand();
    const len = r < 0.8
      ? Math.floor(rand() * 1500)
      : r < 0.97
      ? Math.floor(rand() * 150_000)
      : Math.floor(rand() * 1.6 * READ_CHUNK_BYTES);
    const ch = String.fromCharCode(97 + (lines.length % 26));
    lines.push(ch.repeat(len) + (rand() < 0.1 ? "\r" : ""));
    size += len + 1;
  }
  const text = lines.join("\n") + "\n" + (torn ? "torn tail without newline" : "");
  return { bytes: new TextEncoder().encode(text), lines };
}

interface Seen {
  kept: { lineNo: number; text: string }[];
  oversized: { lineNo: number; bytes: number }[];
  cursor: FileCursor | null;
}

async function readToEnd(path: string, options: ReadIncrementOptions): Promise<Seen> {
  const seen: Seen = { kept: [], oversized: [], cursor: null };
  for (let step = 0; step < 10_000; step++) {
    const inc = await readIncrement(path, seen.cursor, options);
    const maxBytes = options.maxBytes ?? Infinity;
    // A stop at the budget happens on the first line boundary at or past it.
    const lastLen = inc.lines.length ? inc.lines.at(-1)!.end - inc.lines.at(-1)!.start + 2 : 0;
    assert(inc.bytes.length < maxBytes + lastLen, "an increment overran its byte budget");
    for (const span of inc.lines) {
      seen.kept.push({ lineNo: span.lineNo, text: lineText(inc.bytes, span, inc.baseOffset) });
    }
    seen.oversized.push(...inc.oversizedLines);
    const moved = seen.cursor === null || inc.cursor.offset > seen.cursor.offset;
    seen.cursor = inc.cursor;
    if (inc.complete || !moved) break;
  }
  return seen;
}

Deno.test("readIncrement yields every line once with its number, whichever chunk path it takes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const rand = rng(20260901);
    const optionSets: ReadIncrementOptions[] = [
      {},
      { maxBytes: 5000 },
      { maxLineBytes: 100_000 },
      { maxLineBytes: 1500, maxBytes: 300_000 },
      { maxLineBytes: READ_CHUNK_BYTES },
      { maxLineBytes: READ_CHUNK_BYTES + 1, maxBytes: 2 * READ_CHUNK_BYTES },
      { maxLineBytes: 300, maxBytes: 100 },
    ];
    for (let i = 0; i < 6; i++) {
      const torn = i % 2 === 1;
      const { bytes, lines } = makeFile(rand, torn);
      const path = join(dir, `f${i}.jsonl`);
      await Deno.writeFile(path, bytes);
      const consumed = torn ? bytes.lastIndexOf(0x0a) + 1 : bytes.length;
      for (const options of optionSets) {
        const cap = options.maxLineBytes ?? Infinity;
        const want: Seen = { kept: [], oversized: [], cursor: null };
        lines.forEach((line, k) => {
          const text = line.endsWith("\r") ? line.slice(0, -1) : line;
          // The cap applies to the line without its "\n" but with a "\r" before it.
          if (line.length > cap) want.oversized.push({ lineNo: k + 1, bytes: line.length });
          else want.kept.push({ lineNo: k + 1, text });
        });
        const got = await readToEnd(path, options);
        const what = `file ${i}, options ${JSON.stringify(options)}`;
        assert.deepEqual(got.oversized, want.oversized, what);
        assert.deepEqual(got.kept.length, want.kept.length, what);
        got.kept.forEach((g, k) => {
          const w = want.kept[k]!;
          if (g.lineNo !== w.lineNo || g.text !== w.text) {
            throw new Error(`${what}: line ${k} is ${g.lineNo}:${g.text.length}, want ${w.lineNo}`);
          }
        });
        assert.deepEqual(got.cursor?.offset, consumed, what);
        assert.deepEqual(got.cursor?.next_line, lines.length + 1, what);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
