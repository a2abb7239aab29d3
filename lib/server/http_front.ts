/**
 * The daemon's TCP front (F7, F9 in tests/RELIABILITY.md). Deno.serve (Deno 2.9.6) has no
 * header, body or idle timeout, and node:http's headersTimeout/requestTimeout are not
 * honoured there either (verified: a client sending one header byte a second was still
 * open after 8 s with both set to 2–3 s), so a slowloris could hold sockets forever. The
 * daemon therefore listens on 127.0.0.1:P itself and reads each request head here, then
 * forwards the request to the real Deno.serve on a private unix socket in the state root.
 * Per connection, one state machine (a single piece by design: every timer depends on the
 * request and response framing it tracks):
 *  - header deadline: a request's head must be complete HEADER_TIMEOUT_MS after its first
 *    byte (after accept for a new connection, which counts as one silent head) → 408,
 *    closed;
 *  - idle timeout: a kept-alive connection with no request in flight and no byte of the
 *    next one closes after IDLE_TIMEOUT_MS (longer than the live stream's 15 s heartbeat;
 *    no timer at all runs while a response is in flight, so a live stream is never cut);
 *  - body deadline: a request body must arrive within BODY_TIMEOUT_MS of its head;
 *  - a write that makes no progress for IDLE_TIMEOUT_MS (a client that stopped reading)
 *    closes the connection;
 *  - sizes: a head over HEAD_MAX_BYTES → 431, a body over BODY_MAX_BYTES → 413;
 *  - at MAX_CONNECTIONS the longest-idle connection without a request in flight is closed
 *    to make room; when every connection is busy the new one gets 503.
 * Heads are checked and re-serialized by http_head.ts (origin-form targets only: F9) and
 * bodies re-framed canonically, so Deno.serve parses exactly what was checked. Responses
 * are forwarded byte for byte; their framing is only read to know when a connection is
 * idle again. The front never looks at Host, Origin or the token: the app checks those on
 * the original headers it forwards.
 */
import { ChunkedDecoder, encodeChunk, LAST_CHUNK } from "./http_chunked.ts";
import {
  findHeadEnd,
  frontResponse,
  parseRequestHead,
  serializeRequestHead,
  wantsClose,
} from "./http_head.ts";
import { ResponseFraming } from "./http_response_framing.ts";

/** Limits of the front (each has the default named after it). */
export interface FrontLimits {
  /** @default HEADER_TIMEOUT_MS */
  headerTimeoutMs: number;
  /** @default IDLE_TIMEOUT_MS */
  idleTimeoutMs: number;
  /** @default BODY_TIMEOUT_MS */
  bodyTimeoutMs: number;
  /** @default HEAD_MAX_BYTES */
  headMaxBytes: number;
  /** @default BODY_MAX_BYTES */
  bodyMaxBytes: number;
  /** @default MAX_CONNECTIONS */
  maxConnections: number;
}

export const HEADER_TIMEOUT_MS = 10_000;
/** Above the live stream's 15 s heartbeat with margin for a loaded machine. */
export const IDLE_TIMEOUT_MS = 20_000;
export const BODY_TIMEOUT_MS = 30_000;
export const HEAD_MAX_BYTES = 32 * 1024;
/** The largest API body is an answer or steer text of 100,000 characters (params.ts). */
export const BODY_MAX_BYTES = 4 * 1024 * 1024;
/** Two sockets each (client and unix): far below a default 1,024 open-file limit. */
export const MAX_CONNECTIONS = 256;

/** Options for {@link startHttpFront}. */
export interface HttpFrontOptions {
  listener: Deno.Listener;
  /** Opens a connection to the server behind the front. */
  connectUpstream(): Promise<Deno.Conn>;
  limits?: Partial<FrontLimits>;
}

/** A running front. */
export interface HttpFront {
  /** Stops accepting; idle connections close now, busy ones after their last response. */
  drain(): void;
  /** Closes every connection and waits for the accept loop to end. */
  close(): Promise<void>;
  /** Connections open now. */
  readonly open: number;
}

const READ_CHUNK = 64 * 1024;
/** Pause before accepting again after a failed accept (out of file descriptors). */
const ACCEPT_RETRY_MS = 100;
const EMPTY = new Uint8Array(0);

/** Starts accepting on `o.listener`. */
export function startHttpFront(o: HttpFrontOptions): HttpFront {
  const limits: FrontLimits = {
    headerTimeoutMs: HEADER_TIMEOUT_MS,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    headMaxBytes: HEAD_MAX_BYTES,
    bodyMaxBytes: BODY_MAX_BYTES,
    maxConnections: MAX_CONNECTIONS,
    ...o.limits,
  };
  const conns = new Set<FrontConnection>();
  let draining = false;
  const accepting = (async () => {
    while (!draining) {
      let client: Deno.Conn;
      try {
        client = await o.listener.accept();
      } catch (err) {
        // Closed by drain(): the loop ends. Anything else (EMFILE when out of descriptors)
        // is passing: accepting again shortly beats ending the daemon.
        if (draining || err instanceof Deno.errors.BadResource) return;
        await new Promise((r) => setTimeout(r, ACCEPT_RETRY_MS));
        continue;
      }
      if (draining) {
        client.close();
        return;
      }
      if (conns.size >= limits.maxConnections && !evictIdlest(conns)) {
        void refuse(client);
        continue;
      }
      const c = new FrontConnection(client, { limits, connect: o.connectUpstream });
      conns.add(c);
      void c.run().finally(() => conns.delete(c));
    }
  })();
  const drain = () => {
    if (draining) return;
    draining = true;
    try {
      o.listener.close();
    } catch {
      // Already closed.
    }
    for (const c of conns) c.drain();
  };
  return {
    drain,
    async close() {
      drain();
      for (const c of conns) c.destroy();
      await accepting;
    },
    get open() {
      return conns.size;
    },
  };
}

/** Closes the connection idle the longest (no request in flight); false when all are busy. */
function evictIdlest(conns: Set<FrontConnection>): boolean {
  let best: FrontConnection | null = null;
  for (const c of conns) {
    if (c.idleSince !== null && (best === null || c.idleSince < best.idleSince!)) best = c;
  }
  best?.destroy();
  return best !== null;
}

async function refuse(client: Deno.Conn): Promise<void> {
  try {
    await client.write(frontResponse(503, "too_many_connections"));
  } catch {
    // The client already left.
  } finally {
    client.close();
  }
}

type Phase = "head" | "body" | "tunnel" | "closing" | "closed";

/** One client connection and its upstream twin. */
class FrontConnection {
  #client: Deno.Conn;
  #limits: FrontLimits;
  #connect: () => Promise<Deno.Conn>;
  #up: Deno.Conn | null = null;
  #phase: Phase = "head";
  #buf: Uint8Array = EMPTY;
  #acceptedAt = Date.now();
  /** When the first byte of the request head being read arrived; null between requests. */
  #headStart: number | null = null;
  #fresh = true;
  #bodyStart = 0;
  #bodyLeft = 0;
  #bodyBytes = 0;
  #chunked: ChunkedDecoder | null = null;
  /** Methods of the requests forwarded whose response has not ended. */
  #pending: string[] = [];
  #lastResponseAt = Date.now();
  #closeWhenDone = false;
  #failure: Uint8Array | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #toClient: Promise<void> = Promise.resolve();
  #closed = Promise.withResolvers<void>();
  /** Response framing, read only to know when the connection is idle again. */
  #framing = new ResponseFraming();

  constructor(client: Deno.Conn, o: { limits: FrontLimits; connect: () => Promise<Deno.Conn> }) {
    this.#client = client;
    this.#limits = o.limits;
    this.#connect = o.connect;
    try {
      (client as Deno.TcpConn).setNoDelay?.(true);
    } catch {
      // Not a TCP socket (a test may hand a unix one): nothing to tune.
    }
  }

  /** Since when nothing is in flight on this connection, or null while a request is. */
  get idleSince(): number | null {
    if (this.#phase !== "head" || this.#pending.length > 0) return null;
    return this.#headStart ?? (this.#fresh ? this.#acceptedAt : this.#lastResponseAt);
  }

  /** Reads client bytes until the connection ends. */
  async run(): Promise<void> {
    this.#rearm();
    const chunk = new Uint8Array(READ_CHUNK);
    try {
      while (this.#phase !== "closing" && this.#phase !== "closed") {
        const n = await this.#client.read(chunk);
        if (n === null) {
          this.#clientEnded();
          break;
        }
        this.#append(chunk.subarray(0, n));
        await this.#process();
      }
    } catch {
      // A reset, or the socket closed by a timer or by destroy(): the connection is over.
      this.destroy();
    }
    // Reading stops early after `Connection: close` or a refusal: the connection lives on
    // until its responses are sent.
    await this.#closed.promise;
  }

  /** Closes now if idle, otherwise after the responses in flight. */
  drain(): void {
    if (this.idleSince !== null) this.destroy();
    else this.#closeWhenDone = true;
  }

  /** Closes both sockets. */
  destroy(): void {
    if (this.#phase === "closed") return;
    this.#phase = "closed";
    this.#closed.resolve();
    if (this.#timer !== null) clearTimeout(this.#timer);
    for (const c of [this.#client, this.#up]) {
      try {
        c?.close();
      } catch {
        // Already closed.
      }
    }
  }

  #append(bytes: Uint8Array): void {
    if (this.#phase === "head" && this.#headStart === null) {
      this.#headStart = Date.now();
      this.#rearm();
    }
    const b = new Uint8Array(this.#buf.length + bytes.length);
    b.set(this.#buf);
    b.set(bytes, this.#buf.length);
    this.#buf = b;
  }

  async #process(): Promise<void> {
    while (this.#phase === "head" || this.#phase === "body" || this.#phase === "tunnel") {
      if (this.#phase === "tunnel") {
        if (this.#buf.length > 0) await this.#toUpstream(this.#buf);
        this.#buf = EMPTY;
        return;
      }
      if (this.#phase === "body") {
        if (this.#buf.length === 0 || !(await this.#forwardBody())) return;
        continue;
      }
      // Empty lines before a request line are ignored (RFC 9112 §2.2).
      let s = 0;
      while (s < this.#buf.length && (this.#buf[s] === 0x0d || this.#buf[s] === 0x0a)) s++;
      this.#buf = this.#buf.subarray(s);
      const end = findHeadEnd(this.#buf);
      const size = end < 0 ? this.#buf.length : end;
      if (size > this.#limits.headMaxBytes) return this.#fail(431, "request_head_too_large");
      if (end < 0) return; // More of the head is needed.
      const head = parseRequestHead(this.#buf.subarray(0, end));
      if ("status" in head) return this.#fail(head.status, head.error);
      if (head.body.kind === "length" && head.body.length > this.#limits.bodyMaxBytes) {
        return this.#fail(413, "request_body_too_large");
      }
      this.#buf = this.#buf.subarray(end);
      this.#headStart = null;
      this.#fresh = false;
      // The head is complete: its deadline no longer applies (the next timer is set below).
      if (this.#timer !== null) clearTimeout(this.#timer);
      if (!this.#up) {
        try {
          this.#up = await this.#connect();
        } catch {
          return this.#fail(503, "server_unavailable");
        }
        void this.#pumpResponses(this.#up);
      }
      this.#pending.push(head.method);
      if (wantsClose(head)) this.#closeWhenDone = true;
      await this.#toUpstream(serializeRequestHead(head));
      if (head.body.kind === "none") this.#requestDone();
      else {
        this.#phase = "body";
        this.#bodyStart = Date.now();
        this.#bodyBytes = 0;
        this.#bodyLeft = head.body.kind === "length" ? head.body.length : 0;
        this.#chunked = head.body.kind === "chunked" ? new ChunkedDecoder() : null;
        this.#rearm();
      }
    }
  }

  /** Forwards buffered body bytes; false when more are needed. */
  async #forwardBody(): Promise<boolean> {
    if (this.#chunked) {
      const step = this.#chunked.feed(this.#buf); // A ChunkedError ends the connection (run()).
      this.#buf = this.#buf.subarray(step.used);
      for (const d of step.data) {
        this.#bodyBytes += d.length;
        if (this.#bodyBytes > this.#limits.bodyMaxBytes) throw new RangeError("Body too large");
        for (const part of encodeChunk(d)) await this.#toUpstream(part);
      }
      if (!step.done) return false;
      await this.#toUpstream(LAST_CHUNK);
    } else {
      const n = Math.min(this.#bodyLeft, this.#buf.length);
      await this.#toUpstream(this.#buf.subarray(0, n));
      this.#buf = this.#buf.subarray(n);
      this.#bodyLeft -= n;
      if (this.#bodyLeft > 0) return false;
    }
    this.#requestDone();
    return true;
  }

  #requestDone(): void {
    this.#chunked = null;
    // After `Connection: close` nothing more is read: the response ends the connection.
    this.#phase = this.#closeWhenDone ? "closing" : "head";
    this.#rearm();
  }

  #clientEnded(): void {
    if (this.#pending.length === 0 || this.#phase === "body") this.destroy();
    else {
      this.#closeWhenDone = true;
      if (this.#phase !== "closed") this.#phase = "closing";
    }
  }

  /** Answers `status` and closes, after the responses already in flight. */
  #fail(status: number, error: string): void {
    this.#failure = frontResponse(status, error);
    this.#phase = "closing";
    this.#rearm();
    if (this.#pending.length === 0) this.#finish();
  }

  /** Called when nothing is in flight: sends a pending failure, or closes if asked to. */
  #finish(): void {
    const failure = this.#failure;
    if (failure) {
      this.#failure = null;
      void this.#send(failure).finally(() => this.destroy());
    } else if (this.#closeWhenDone) {
      void this.#toClient.finally(() => this.destroy());
    }
  }

  /** The one timer: header, body or idle deadline, depending on where the connection is. */
  #rearm(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#phase === "closed") return;
    const l = this.#limits;
    let at: number;
    let onTimeout: () => void;
    if (this.#phase === "body") {
      at = this.#bodyStart + l.bodyTimeoutMs;
      onTimeout = () => this.destroy();
    } else if (this.#phase === "head" && this.#headStart !== null) {
      at = this.#headStart + l.headerTimeoutMs;
      onTimeout = () => this.#fail(408, "request_head_timeout");
    } else if (this.#phase === "head" && this.#pending.length === 0) {
      at = this.#fresh ? this.#acceptedAt + l.headerTimeoutMs : this.#lastResponseAt +
        l.idleTimeoutMs;
      onTimeout = () => this.destroy();
    } else {
      return; // A response is in flight (or the connection is closing after it).
    }
    this.#timer = setTimeout(onTimeout, Math.max(0, at - Date.now()));
  }

  async #pumpResponses(up: Deno.Conn): Promise<void> {
    const chunk = new Uint8Array(READ_CHUNK);
    try {
      while (this.#phase !== "closed") {
        const n = await up.read(chunk);
        if (n === null) break;
        const bytes = chunk.slice(0, n);
        const ended = this.#trackResponses(bytes);
        await this.#send(bytes);
        if (ended && this.#pending.length === 0) {
          this.#lastResponseAt = Date.now();
          this.#rearm();
          this.#finish();
        }
      }
    } catch {
      // The upstream or the client went away.
    }
    // The server closed its side (Connection: close, shutdown): everything sent, close ours.
    await this.#toClient;
    this.destroy();
  }

  /** Follows response framing over `bytes`; true when at least one response ended. */
  #trackResponses(bytes: Uint8Array): boolean {
    return this.#framing.feed(bytes, {
      method: () => this.#pending[0],
      ended: () => void this.#pending.shift(),
      upgraded: () => {
        this.#pending.shift();
        this.#phase = "tunnel";
      },
    });
  }

  #send(bytes: Uint8Array): Promise<void> {
    const next = this.#toClient.then(() => this.#writeAll(this.#client, bytes));
    this.#toClient = next.catch(() => this.destroy());
    return this.#toClient;
  }

  #toUpstream(bytes: Uint8Array): Promise<void> {
    return this.#writeAll(this.#up!, bytes);
  }

  /** Writes everything; a write that makes no progress for the idle timeout closes both sides. */
  async #writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) {
      const stall = setTimeout(() => this.destroy(), this.#limits.idleTimeoutMs);
      try {
        off += await conn.write(bytes.subarray(off));
      } finally {
        clearTimeout(stall);
      }
    }
  }
}
