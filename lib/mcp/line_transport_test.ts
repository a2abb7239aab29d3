import assert from "node:assert/strict";
import { fitMessage, LineTransport } from "./line_transport.ts";

/** A transport fed `chunks`, and what it delivered and answered. */
async function run(chunks: string[], maxLineBytes = 64) {
  const out: unknown[] = [];
  const got: unknown[] = [];
  const t = new LineTransport({
    input: ReadableStream.from(chunks.map((c) => new TextEncoder().encode(c))),
    write: (l) => void out.push(JSON.parse(l)),
    maxLineBytes,
    maxOutBytes: 1000,
  });
  const closed = new Promise<void>((r) => (t.onclose = r));
  t.onmessage = (m) => void got.push(m);
  await t.start();
  await closed;
  return { out, got };
}

Deno.test("lines split across chunks are delivered whole; oversized, non-JSON and non-RPC lines are answered", async () => {
  const ok = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  const r = await run([
    ok.slice(0, 10),
    ok.slice(10) + "\n",
    "x".repeat(50),
    "y".repeat(50) + "\n",
    "{nope\n",
    '{"id":5}\n',
    ok + "\r\n",
  ]);
  assert.deepEqual(r.got, [JSON.parse(ok), JSON.parse(ok)]);
  assert.deepEqual(r.out.map((m) => (m as { error: { code: number } }).error.code), [
    -32600,
    -32700,
    -32600,
  ]);
  assert.equal((r.out[2] as { id: unknown }).id, 5);
});

Deno.test("fitMessage cuts the longest strings of an oversized message, and leaves a fitting one alone", () => {
  const small = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hi" }] } };
  assert.equal(fitMessage(small, 1000), small);
  const big = {
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32602, message: "Tool " + "t".repeat(5000) + " not found" },
  };
  const fit = fitMessage(big, 1000);
  assert.ok(JSON.stringify(fit).length <= 1000, String(JSON.stringify(fit).length));
  assert.match(fit.error.message, /^Tool t+ … \[cut by intendant: over the output cap\]$/);
  assert.equal(big.error.message.length, 5015, "the original is untouched");
});
