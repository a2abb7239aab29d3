/**
 * An incremental decoder of the chunked transfer coding (RFC 9112 §7.1), used by the TCP
 * front both ways: to forward a chunked request body canonically (chunk extensions and
 * trailers dropped) and to find where a chunked response from Deno.serve ends (so the
 * front knows when the connection is idle again). It consumes only the bytes of its own
 * message: whatever follows the last chunk (a pipelined request) is left to the caller.
 * Size and trailer lines are capped (LINE_MAX_BYTES, TRAILERS_MAX_BYTES); a malformed
 * coding throws ChunkedError.
 */

/** Longest chunk-size line (size plus extensions) or trailer line accepted. */
export const LINE_MAX_BYTES = 4096;
/** Most trailer bytes accepted after the last chunk. */
export const TRAILERS_MAX_BYTES = 16 * 1024;

/** A malformed chunked body. */
export class ChunkedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChunkedError";
  }
}

/** What one {@link ChunkedDecoder.feed} call found. */
export interface ChunkedStep {
  /** Bytes of the input consumed. */
  used: number;
  /** Chunk data found (views into the input). */
  data: Uint8Array[];
  /** True once the last chunk and the trailers are consumed. */
  done: boolean;
}

/** Decodes one chunked body. */
export class ChunkedDecoder {
  #state: "size" | "data" | "data_end" | "trailer" | "done" = "size";
  #line: number[] = [];
  #remaining = 0;
  #trailerBytes = 0;

  /** Consumes what it can of `buf`. */
  feed(buf: Uint8Array): ChunkedStep {
    const data: Uint8Array[] = [];
    let i = 0;
    while (i < buf.length && this.#state !== "done") {
      if (this.#state === "data") {
        const n = Math.min(this.#remaining, buf.length - i);
        data.push(buf.subarray(i, i + n));
        i += n;
        this.#remaining -= n;
        if (this.#remaining === 0) this.#state = "data_end";
        continue;
      }
      const b = buf[i++]!;
      if (b !== 0x0a) {
        if (this.#line.length >= LINE_MAX_BYTES) throw new ChunkedError("Chunk line too long");
        this.#line.push(b);
        if (this.#state === "trailer" && ++this.#trailerBytes > TRAILERS_MAX_BYTES) {
          throw new ChunkedError("Chunked trailers too long");
        }
        continue;
      }
      const line = this.#takeLine();
      if (this.#state === "size") this.#sizeLine(line);
      else if (this.#state === "data_end") {
        if (line !== "") throw new ChunkedError("Chunk data longer than its size");
        this.#state = "size";
      } else if (line === "") this.#state = "done";
    }
    return { used: i, data, done: this.#state === "done" };
  }

  #takeLine(): string {
    const l = this.#line;
    if (l[l.length - 1] === 0x0d) l.pop();
    this.#line = [];
    if (l.includes(0x0d)) throw new ChunkedError("Bare CR in a chunk line");
    return String.fromCharCode(...l);
  }

  #sizeLine(line: string): void {
    const m = /^([0-9A-Fa-f]{1,13})[ \t]*(;.*)?$/.exec(line);
    if (!m) throw new ChunkedError("Malformed chunk size");
    this.#remaining = parseInt(m[1]!, 16);
    this.#state = this.#remaining === 0 ? "trailer" : "data";
  }
}

const enc = new TextEncoder();

/** The canonical chunked encoding of `data` (one chunk; empty input gives nothing). */
export function encodeChunk(data: Uint8Array): Uint8Array[] {
  if (data.length === 0) return [];
  return [enc.encode(`${data.length.toString(16)}\r\n`), data, enc.encode("\r\n")];
}

/** The last chunk, without trailers. */
export const LAST_CHUNK: Uint8Array = enc.encode("0\r\n\r\n");
