/**
 * HTTP/1.x message heads as the TCP front (http_front.ts) reads them: the request head a
 * client sends, parsed strictly and re-serialized canonically, and the response head
 * Deno.serve sends back, parsed only for its framing. The front forwards the canonical
 * form, never the client's bytes, so the server behind it parses exactly what was checked
 * here (no disagreement on framing to smuggle a request through).
 *
 * Request rules (RFC 9112 unless noted; the answer is the status the front sends, then it
 * closes the connection):
 *  - request line `METHOD SP target SP HTTP/1.x`, single spaces; HTTP/1.0 and 1.1 only
 *    (505 for any other version, HTTP/2's preface included);
 *  - the target must be origin-form (`/path?query`: printable ASCII, no `#`). Absolute
 *    form (`http://host/…`), authority form (`CONNECT host:port`) and asterisk form
 *    (`OPTIONS *`) are refused with 400 whatever their authority (F9 in tests/RELIABILITY.md):
 *    this server is nobody's proxy, and a browser or our CLI never sends them to one;
 *  - lines end at CRLF or a bare LF (§2.2 allows recognizing LF); a CR anywhere else, a
 *    NUL or another control character in a value, whitespace before a field's colon, and
 *    obsolete line folding are 400;
 *  - exactly one Host on HTTP/1.1 (the app then checks it against the allowlist);
 *  - framing: Content-Length (one decimal value, repeated copies must agree) or
 *    `Transfer-Encoding: chunked` alone; both together, or TE on HTTP/1.0, is 400; any
 *    other transfer coding is 501.
 */

/** How a request's body is delimited. */
export type BodyFraming = { kind: "none" } | { kind: "length"; length: number } | {
  kind: "chunked";
};

/** A checked request head. */
export interface RequestHead {
  method: string;
  target: string;
  version: "1.0" | "1.1";
  /** Fields as received (name case kept), in order. */
  fields: [string, string][];
  body: BodyFraming;
}

/** A refused head: the status to answer and a short machine-readable reason. */
export interface HeadError {
  status: 400 | 413 | 431 | 501 | 505;
  error: string;
}

/** A response head's framing, as far as the front needs it. */
export interface ResponseHead {
  status: number;
  /** Content-Length, or null. */
  length: number | null;
  chunked: boolean;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// deno-lint-ignore no-control-regex
const BAD_VALUE_CHAR = /[\x00-\x08\x0a-\x1f\x7f]/;
const ORIGIN_FORM = /^\/[\x21-\x22\x24-\x7e]*$/;
const latin1 = new TextDecoder("latin1");

/**
 * Index just past the empty line that ends a head starting at `from`, or -1 when the
 * head is not complete yet. Accepts CRLF and bare LF line ends.
 */
export function findHeadEnd(buf: Uint8Array, from = 0): number {
  for (let i = buf.indexOf(0x0a, from); i >= 0; i = buf.indexOf(0x0a, i + 1)) {
    const next = i + 1;
    if (buf[next] === 0x0a) return next + 1;
    if (buf[next] === 0x0d && buf[next + 1] === 0x0a) return next + 2;
  }
  return -1;
}

/** Splits a complete head into lines (CRLF or LF); null when a bare CR is inside a line. */
function headLines(bytes: Uint8Array): string[] | null {
  const text = latin1.decode(bytes);
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  // The head ends with an empty line: drop it and the empty string after the last LF.
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines.some((l) => l.includes("\r")) ? null : lines;
}

/** Why a target that is not origin-form was refused. */
function targetProblem(method: string, target: string): string {
  if (target === "*") return "asterisk_form_target";
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(target)) return "absolute_form_target";
  if (method === "CONNECT" || /^[^/]+:\d*$/.test(target)) return "authority_form_target";
  return "invalid_target";
}

/** Parses the request head in `bytes` (as found by findHeadEnd). */
export function parseRequestHead(bytes: Uint8Array): RequestHead | HeadError {
  const lines = headLines(bytes);
  if (lines === null || lines.length === 0) return { status: 400, error: "malformed_head" };
  const m = /^([^ ]+) ([^ ]+) HTTP\/(\d)\.(\d)$/.exec(lines[0]!);
  if (!m) {
    return /^\S+ \S+ HTTP\/\d+(\.\d+)?$/.test(lines[0]!)
      ? { status: 505, error: "http_version_not_supported" }
      : { status: 400, error: "malformed_request_line" };
  }
  const [, method, target, major, minor] = m as unknown as [string, string, string, string, string];
  if (major !== "1" || (minor !== "0" && minor !== "1")) {
    return { status: 505, error: "http_version_not_supported" };
  }
  if (!TOKEN.test(method)) return { status: 400, error: "malformed_request_line" };
  if (!ORIGIN_FORM.test(target)) return { status: 400, error: targetProblem(method, target) };
  const version = minor === "1" ? "1.1" : "1.0";
  const fields: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(" ") || line.startsWith("\t")) {
      return { status: 400, error: "obsolete_line_folding" };
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon);
    if (!TOKEN.test(name)) return { status: 400, error: "malformed_header" };
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (BAD_VALUE_CHAR.test(value)) return { status: 400, error: "malformed_header" };
    fields.push([name, value]);
  }
  const all = (n: string) => fields.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
  const hosts = all("host");
  if (hosts.length > 1 || (version === "1.1" && hosts.length === 0)) {
    return { status: 400, error: "host_header_required_once" };
  }
  const body = framing(version, all("content-length"), all("transfer-encoding"));
  if ("status" in body) return body;
  return { method, target, version, fields, body };
}

function framing(version: string, cl: string[], te: string[]): BodyFraming | HeadError {
  if (te.length > 0) {
    if (version === "1.0" || cl.length > 0) return { status: 400, error: "ambiguous_framing" };
    const codings = te.join(",").split(",").map((c) => c.trim().toLowerCase()).filter(Boolean);
    if (codings.length !== 1 || codings[0] !== "chunked") {
      return { status: 501, error: "unsupported_transfer_coding" };
    }
    return { kind: "chunked" };
  }
  if (cl.length === 0) return { kind: "none" };
  const values = new Set(cl.join(",").split(",").map((v) => v.trim()));
  const [only] = values;
  if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) {
    return { status: 400, error: "invalid_content_length" };
  }
  const length = Number(only);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

/** The canonical bytes of a checked head (CRLF, `name: value`, one blank line). */
export function serializeRequestHead(h: RequestHead): Uint8Array {
  let s = `${h.method} ${h.target} HTTP/${h.version}\r\n`;
  for (const [k, v] of h.fields) s += `${k}: ${v}\r\n`;
  s += "\r\n";
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** True when the request asks to close the connection after its response. */
export function wantsClose(h: RequestHead): boolean {
  const tokens = h.fields.filter(([k]) => k.toLowerCase() === "connection")
    .flatMap(([, v]) => v.toLowerCase().split(",").map((t) => t.trim()));
  return h.version === "1.1" ? tokens.includes("close") : !tokens.includes("keep-alive");
}

/** Parses a response head from the server behind the front; null when malformed. */
export function parseResponseHead(bytes: Uint8Array): ResponseHead | null {
  const lines = headLines(bytes);
  const m = lines && /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!lines || !m) return null;
  let length: number | null = null;
  let chunked = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon < 0) return null;
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length") {
      if (!/^\d{1,15}$/.test(value)) return null;
      length = Number(value);
    } else if (name === "transfer-encoding") {
      chunked = value.toLowerCase().split(",").map((t) => t.trim()).includes("chunked");
    }
  }
  return { status: Number(m[1]), length, chunked };
}

/** A complete, small response the front writes itself (errors, 503 at the connection cap). */
export function frontResponse(status: number, error: string): Uint8Array {
  const reasons: Record<number, string> = {
    400: "Bad Request",
    408: "Request Timeout",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
  };
  const body = JSON.stringify({ error });
  return new TextEncoder().encode(
    `HTTP/1.1 ${status} ${reasons[status] ?? "Error"}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      "Cache-Control: no-store\r\n" +
      "X-Content-Type-Options: nosniff\r\n" +
      "Referrer-Policy: no-referrer\r\n" +
      "Connection: close\r\n" +
      `Content-Length: ${body.length}\r\n\r\n${body}`,
  );
}
