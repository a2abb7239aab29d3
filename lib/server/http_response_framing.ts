/**
 * Where each response from Deno.serve ends, read from the bytes the TCP front forwards
 * (http_front.ts) without changing them: the front must know when a connection has no
 * response in flight, because only then may its idle timeout run (a live stream or a slow
 * report is never cut). Framing per RFC 9112 §6.3: no body for a HEAD request or a 204/304;
 * 1xx are interim (the final response follows; 101 hands the connection over); then
 * chunked coding, Content-Length, or else the body runs until the server closes. A
 * malformed or oversized head throws RangeError (the front then closes the connection).
 */
import { ChunkedDecoder } from "./http_chunked.ts";
import { findHeadEnd, parseResponseHead } from "./http_head.ts";

/** Most bytes of one response head accepted. */
export const RESPONSE_HEAD_MAX_BYTES = 64 * 1024;
const EMPTY = new Uint8Array(0);

/** What the framing asks of the connection it serves. */
export interface FramingHooks {
  /** The method of the oldest request still waiting for its response. */
  method(): string | undefined;
  /** That response ended. */
  ended(): void;
  /** That response was 101: from here on the bytes are not HTTP. */
  upgraded(): void;
}

/** Follows the responses of one connection. */
export class ResponseFraming {
  #state: "head" | "length" | "chunked" | "close" = "head";
  #head: Uint8Array = EMPTY;
  #left = 0;
  #chunked: ChunkedDecoder | null = null;

  /** Reads `bytes`; true when at least one response ended in them. */
  feed(bytes: Uint8Array, hooks: FramingHooks): boolean {
    let ended = false;
    const end = () => {
      hooks.ended();
      this.#state = "head";
      this.#chunked = null;
      ended = true;
    };
    let i = 0;
    while (i < bytes.length) {
      if (this.#state === "close") return ended;
      if (this.#state === "length") {
        const n = Math.min(this.#left, bytes.length - i);
        i += n;
        this.#left -= n;
        if (this.#left === 0) end();
        continue;
      }
      if (this.#state === "chunked") {
        const step = this.#chunked!.feed(bytes.subarray(i));
        i += step.used;
        if (step.done) end();
        continue;
      }
      const before = this.#head.length;
      const joined = new Uint8Array(before + bytes.length - i);
      joined.set(this.#head);
      joined.set(bytes.subarray(i), before);
      const headEnd = findHeadEnd(joined);
      if (headEnd < 0) {
        if (joined.length > RESPONSE_HEAD_MAX_BYTES) {
          throw new RangeError("Response head too large");
        }
        this.#head = joined;
        return ended;
      }
      this.#head = EMPTY;
      i += headEnd - before;
      const h = parseResponseHead(joined.subarray(0, headEnd));
      if (!h) throw new RangeError("Malformed response head");
      if (h.status === 101) {
        hooks.upgraded();
        this.#state = "close";
      } else if (h.status < 200) {
        continue; // Interim (100 Continue): the final response follows.
      } else if (hooks.method() === "HEAD" || h.status === 204 || h.status === 304) {
        end();
      } else if (h.chunked) {
        this.#state = "chunked";
        this.#chunked = new ChunkedDecoder();
      } else if (h.length !== null && h.length > 0) {
        this.#state = "length";
        this.#left = h.length;
      } else if (h.length === 0) {
        end();
      } else {
        this.#state = "close"; // Delimited by the server closing the connection.
      }
    }
    return ended;
  }
}
