import assert from "node:assert/strict";
import { ChunkedDecoder, ChunkedError } from "./http_chunked.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Feeds `text` in pieces of `size` bytes; returns the data and what was left after the end. */
function decode(text: string, size: number): { data: string; rest: string } {
  const bytes = enc.encode(text);
  const d = new ChunkedDecoder();
  let data = "";
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, Math.min(bytes.length, at + size));
    const step = d.feed(piece);
    for (const x of step.data) data += dec.decode(x);
    if (step.done) return { data, rest: dec.decode(bytes.subarray(at + step.used)) };
    assert.equal(step.used, piece.length);
  }
  throw new Error("not done");
}

Deno.test("ChunkedDecoder reads a body split anywhere and leaves what follows it", () => {
  const body = "5;ext=1\r\nhello\r\n1\n \n0\r\nTrailer: x\r\n\r\nGET /next";
  for (const size of [1, 2, 3, 7, 64]) {
    assert.deepEqual(decode(body, size), { data: "hello ", rest: "GET /next" });
  }
});

Deno.test("ChunkedDecoder refuses malformed sizes, overlong data and bare CR", () => {
  for (const bad of ["x\r\n", "5\r\nhelloX\r\n", "-1\r\n", "5\rx\r\n", `${"1".repeat(14)}\r\n`]) {
    assert.throws(() => new ChunkedDecoder().feed(enc.encode(bad)), ChunkedError, bad);
  }
});
