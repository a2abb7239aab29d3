/**
 * Reliability-plan H7: hostile input on `intendant mcp`'s stdio, written raw to the real
 * server (launched as a client would: `mcp --locked`). Request lines over the size limit
 * (12 MiB, and one just over the limit), lines that are not JSON, JSON that is not
 * JSON-RPC, an unknown tool whose name is 2 MiB — each answered with a JSON-RPC error or
 * an isError result, every response within the cap, and the server still answering
 * tools/list after each one. Negative control: the SDK's own stdio buffer given the same
 * 12 MiB line throws, which closes the SDK's transport (the server ended there before).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { MAIN } from "./helpers/cli.ts";
import { figure } from "./helpers/figures.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { MCP_MAX_LINE_BYTES } from "../lib/mcp/mod.ts";

const enc = new TextEncoder();
const CAP = 20_000;

Deno.test("H7: oversized, malformed and unknown requests get a JSON-RPC error and the server keeps serving", () =>
  withTempDir(async (root) => {
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root),
    };
    Deno.mkdirSync(join(root, "tmp"), { recursive: true });
    const child = new Deno.Command(DENO, {
      args: [
        "run",
        "--quiet",
        `--config=${join(REPO_ROOT, "deno.json")}`,
        "-P=launch",
        MAIN,
        "mcp",
        "--locked",
      ],
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const lines = readLines(child.stdout);
    const stderr = new Response(child.stderr).text();
    const send = async (s: string | Uint8Array) =>
      await writer.write(typeof s === "string" ? enc.encode(s) : s);
    let id = 0;
    const request = async (method: string, params: unknown = {}) => {
      const my = ++id;
      await send(JSON.stringify({ jsonrpc: "2.0", id: my, method, params }) + "\n");
      return my;
    };
    /** The next message (skipping notifications), its byte size noted. */
    const sizes: number[] = [];
    const next = async () => {
      for (;;) {
        const l = await lines.next();
        assert.ok(!l.done, `the server ended; stderr: ${await Promise.race([stderr, "…"])}`);
        sizes.push(enc.encode(l.value).length);
        const m = JSON.parse(l.value);
        if (m.id !== undefined) return m;
      }
    };
    const alive = async () => {
      const my = await request("tools/list");
      const r = await next();
      assert.equal(r.id, my);
      assert.equal(r.result.tools.length, 4);
    };
    try {
      await request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "h7", version: "0" },
      });
      assert.ok((await next()).result.serverInfo);
      await send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
      await alive();
      const probes: [string, () => Promise<void>, (m: { error?: { code: number } }) => void][] = [
        ["12 MiB line", async () => {
          const chunk = new Uint8Array(1024 * 1024).fill(0x61);
          for (let i = 0; i < 12; i++) await send(chunk);
          await send("\n");
        }, (m) => assert.equal(m.error?.code, -32600)],
        ["one byte over the limit", async () => {
          const body = `{"jsonrpc":"2.0","id":99,"method":"tools/list","pad":"`;
          await send(body + "x".repeat(MCP_MAX_LINE_BYTES - body.length - 1) + '"}\n');
        }, (m) => assert.equal(m.error?.code, -32600)],
        ["not JSON", () => send("{this is not json\n"), (m) => assert.equal(m.error?.code, -32700)],
        [
          "not JSON-RPC",
          () => send('{"hello": "world", "id": 7}\n'),
          (m) => assert.equal(m.error?.code, -32600),
        ],
        ["2 MiB tool name", async () => {
          await request("tools/call", { name: "t".repeat(512 * 1024), arguments: {} });
        }, (m) => assert.ok(m.error || (m as { result?: { isError?: boolean } }).result?.isError)],
      ];
      for (const [name, probe, check] of probes) {
        await probe();
        const m = await next();
        check(m);
        assert.ok(sizes.at(-1)! <= CAP + 4096, `${name}: a ${sizes.at(-1)}-byte response`);
        await alive();
      }
      const over = sizes.filter((s) => s > CAP + 4096).length;
      // Negative control: the SDK's stdio buffer refuses the 12 MiB line by throwing, which
      // closes its transport.
      let sdkClosed = false;
      try {
        const rb = new ReadBuffer();
        for (let i = 0; i < 12; i++) rb.append(new Uint8Array(1024 * 1024).fill(0x61) as never);
      } catch {
        sdkClosed = true;
      }
      assert.ok(sdkClosed, "the SDK's buffer throws on the oversized line");
      figure(
        "H7",
        `server exits: 0 over ${probes.length} hostile requests (each followed by a served ` +
          `tools/list), responses over the cap: ${over}, largest response: ${Math.max(...sizes)} ` +
          `bytes; control (the SDK's stdio buffer, 12 MiB line): ${
            sdkClosed ? "throws, transport closed" : "accepted"
          }`,
      );
    } finally {
      await writer.close().catch(() => {});
      await child.status;
      await stderr;
    }
  }));

/** Lines of `stream`, one at a time. */
async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      yield buf.slice(0, nl);
      buf = buf.slice(nl + 1);
    }
  }
}
