/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC, as the SDK's stdio
 * transport speaks it, but bounded both ways (H7). The SDK's own transport buffers a
 * request line up to 10 MiB and then CLOSES the server (the client sees a broken pipe),
 * answers nothing to a line that is not JSON, and sends whatever a handler returns (an
 * unknown tool's name echoed back whole). Here:
 *  - a request line over `maxLineBytes` is never buffered: its bytes are dropped as they
 *    arrive until its newline, and the client gets a JSON-RPC error (-32600, id null)
 *    saying so; the server keeps serving;
 *  - a line that is not JSON gets -32700 (parse error), JSON that is not a JSON-RPC
 *    message -32600 (invalid request, with its id when it has one); never a crash;
 *  - an outgoing message over `maxOutBytes` has its long strings (error messages, result
 *    texts) cut, with a note, until it fits — the text an agent reads stays within the
 *    server's output cap whatever a handler put in it.
 * Reads a byte stream (Deno.stdin.readable); writes through `write` (one message a call).
 * End of input closes the transport (the client exited).
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** Longest request line accepted: MCP requests are small (tool arguments are capped far below). */
export const MCP_MAX_LINE_BYTES = 1024 * 1024;

/** Options of {@link LineTransport}. */
export interface LineTransportOptions {
  input: ReadableStream<Uint8Array>;
  /** Writes one serialized message (with its newline). */
  write: (line: string) => Promise<void> | void;
  /** @default MCP_MAX_LINE_BYTES */
  maxLineBytes?: number;
  /** Largest message sent, in UTF-8 bytes. */
  maxOutBytes: number;
}

const NEWLINE = 0x0a;
const enc = new TextEncoder();

/** A JSON-RPC error without a request to answer (id null), as the spec says for these. */
function rpcError(code: number, message: string, id: string | number | null = null) {
  return { jsonrpc: "2.0" as const, id, error: { code, message } };
}

/** The MCP SDK's Transport over a bounded line stream (see the header). */
export class LineTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  readonly #o: Required<LineTransportOptions>;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #closed = false;

  constructor(o: LineTransportOptions) {
    this.#o = { maxLineBytes: MCP_MAX_LINE_BYTES, ...o };
  }

  start(): Promise<void> {
    this.#reader = this.#o.input.getReader();
    void this.#pump();
    return Promise.resolve();
  }

  async #pump(): Promise<void> {
    const dec = new TextDecoder();
    let parts: Uint8Array[] = [];
    let size = 0;
    let dropping = false;
    try {
      for (;;) {
        const { value, done } = await this.#reader!.read();
        if (done) break;
        let at = 0;
        while (at < value.length) {
          const nl = value.indexOf(NEWLINE, at);
          const end = nl < 0 ? value.length : nl;
          if (!dropping) {
            size += end - at;
            if (size > this.#o.maxLineBytes) {
              // Dropped as it arrives: the oversized line is never held in memory.
              dropping = true;
              parts = [];
            } else parts.push(value.subarray(at, end));
          }
          if (nl < 0) break;
          if (dropping) {
            await this.#sendRaw(rpcError(
              -32600,
              `Request too large: a request line may hold at most ${this.#o.maxLineBytes} bytes; ` +
                "the server is still serving",
            ));
          } else this.#line(dec.decode(concat(parts, size)));
          parts = [];
          size = 0;
          dropping = false;
          at = nl + 1;
        }
      }
    } catch (err) {
      if (!this.#closed) this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
    await this.close();
  }

  #line(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      void this.#sendRaw(rpcError(-32700, "Parse error: the request line is not JSON"));
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      const id = (json as { id?: unknown } | null)?.id;
      void this.#sendRaw(rpcError(
        -32600,
        "Invalid request: not a JSON-RPC 2.0 message",
        typeof id === "string" || typeof id === "number" ? id : null,
      ));
      return;
    }
    this.onmessage?.(parsed.data);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#sendRaw(fitMessage(message, this.#o.maxOutBytes));
  }

  async #sendRaw(message: unknown): Promise<void> {
    if (this.#closed) return;
    await this.#o.write(JSON.stringify(message) + "\n");
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#reader?.cancel();
    } catch (err) {
      // The input already failed or ended: nothing is left to release.
      if (!(err instanceof Error)) throw err;
    }
    this.onclose?.();
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Strings cut to fit a message, longest first, to this many characters at least. */
const CUT_MIN_CHARS = 200;
const CUT_NOTE = " … [cut by intendant: over the output cap]";

/**
 * `message` with its longest strings cut until its JSON fits `maxBytes` (a handler's error
 * message that quotes a 2 MB tool name, say). Messages that fit are returned as they are.
 */
export function fitMessage<T>(message: T, maxBytes: number): T {
  if (enc.encode(JSON.stringify(message)).length <= maxBytes) return message;
  const copy = structuredClone(message) as unknown;
  for (let round = 0; round < 8; round++) {
    const strings: {
      obj: Record<string, unknown> | unknown[];
      key: string | number;
      len: number;
    }[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) {
        v.forEach((x, i) =>
          typeof x === "string" ? strings.push({ obj: v, key: i, len: x.length }) : walk(x)
        );
      } else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (typeof x === "string") {
            strings.push({ obj: v as Record<string, unknown>, key: k, len: x.length });
          } else walk(x);
        }
      }
    };
    walk(copy);
    const over = enc.encode(JSON.stringify(copy)).length - maxBytes;
    if (over <= 0) break;
    strings.sort((a, b) => b.len - a.len);
    const s = strings[0];
    if (!s || s.len <= CUT_MIN_CHARS) break;
    const keep = Math.max(CUT_MIN_CHARS, s.len - over - CUT_NOTE.length - 16);
    const text = (s.obj as Record<string | number, string>)[s.key]!;
    let head = text.slice(0, keep);
    // Never half a surrogate pair.
    if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
    (s.obj as Record<string | number, string>)[s.key] = head + CUT_NOTE;
  }
  return copy as T;
}
