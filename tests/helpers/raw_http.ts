/**
 * A raw HTTP/1.1 client for tests that must write request lines by hand (fetch rewrites
 * Host and refuses absolute-form targets): it sends bytes as given and reads responses
 * one at a time, framed by Content-Length or chunked coding (its own small decoder, not
 * the daemon's), or by the connection closing.
 */

/** One response. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A connection with a read buffer. */
export class RawClient {
  #conn: Deno.Conn;
  #buf = "";
  #eof = false;
  #chunk = new Uint8Array(64 * 1024);
  #dec = new TextDecoder("latin1");

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Connects to 127.0.0.1:port. */
  static async open(port: number): Promise<RawClient> {
    return new RawClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Writes text (latin1) or bytes. */
  async send(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string"
      ? Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)
      : data;
    let off = 0;
    while (off < bytes.length) off += await this.#conn.write(bytes.subarray(off));
  }

  async #more(): Promise<boolean> {
    if (this.#eof) return false;
    let n: number | null = null;
    try {
      n = await this.#conn.read(this.#chunk);
    } catch {
      n = null; // A reset counts as closed.
    }
    if (n === null) {
      this.#eof = true;
      return false;
    }
    this.#buf += this.#dec.decode(this.#chunk.subarray(0, n));
    return true;
  }

  /** Reads one response; null when the connection closed first. */
  async response(o: { head?: boolean } = {}): Promise<RawResponse | null> {
    let end: number;
    while ((end = this.#buf.indexOf("\r\n\r\n")) < 0) if (!(await this.#more())) return null;
    const lines = this.#buf.slice(0, end).split("\r\n");
    this.#buf = this.#buf.slice(end + 4);
    const status = Number(lines[0]!.split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(":");
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    if (status < 200 && status !== 101) return { status, headers, body: "" };
    if (o.head || status === 204 || status === 304) return { status, headers, body: "" };
    let body = "";
    if (headers["transfer-encoding"]?.includes("chunked")) {
      for (;;) {
        let nl: number;
        while ((nl = this.#buf.indexOf("\r\n")) < 0) if (!(await this.#more())) return null;
        const size = parseInt(this.#buf.slice(0, nl), 16);
        while (this.#buf.length < nl + 2 + size + 2) if (!(await this.#more())) return null;
        body += this.#buf.slice(nl + 2, nl + 2 + size);
        this.#buf = this.#buf.slice(nl + 2 + size + 2);
        if (size === 0) break;
      }
    } else if (headers["content-length"] !== undefined) {
      const len = Number(headers["content-length"]);
      while (this.#buf.length < len) if (!(await this.#more())) return null;
      body = this.#buf.slice(0, len);
      this.#buf = this.#buf.slice(len);
    } else {
      while (await this.#more());
      body = this.#buf;
      this.#buf = "";
    }
    return { status, headers, body };
  }

  /** Reads until `text` has arrived (for streams); false if the connection closed first. */
  async until(text: string): Promise<boolean> {
    while (!this.#buf.includes(text)) if (!(await this.#more())) return false;
    return true;
  }

  /** Resolves true once the server closed the connection (EOF or reset). */
  async closedByPeer(): Promise<true> {
    while (await this.#more());
    return true;
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }
}
