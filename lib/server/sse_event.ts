/**
 * The one Server-Sent Events serializer (F2 in tests/RELIABILITY.md): every event the daemon
 * writes to an event stream — log lines, status changes, errors, skipped-line notices,
 * keepalive comments — is built here, so no CR or LF can reach the wire inside a field.
 * The WHATWG event-stream parser ends a line at CRLF, LF or a bare CR, so a raw CR inside
 * a `data:` value would start a new field: a log line could forge `id:`, `event:` or
 * `retry:` and silence a live view. Invariants of the output, whatever the input:
 *  - the event name is a server-chosen identifier (EVENT_NAME), never caller text;
 *  - the id is a non-negative safe integer (the server's own line counter), in decimal;
 *  - data and comment text are split at every CRLF, LF and CR into one field line each
 *    (the parser rejoins data lines with LF, so multi-line data arrives with LF breaks);
 *    callers send JSON.stringify output, which has no raw line break at all;
 *  - the event ends with one empty line, and no other empty line appears inside it.
 * A name or id outside these rules is a programming error (RangeError), not data.
 */

/** One event. An event with only `comment` is a comment (ignored by EventSource). */
export interface SseEvent {
  /** The event type; absent means the default `message`. */
  event?: string;
  /** The event id: the server's line counter (Last-Event-ID resumes after it). */
  id?: number;
  /** The data (any text: line breaks become separate `data:` lines). */
  data?: string;
  /** A comment line (keepalive). */
  comment?: string;
}

/** Event names the server may use: an identifier, never text from a file. */
const EVENT_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** Every line break the event-stream parser recognizes. */
const LINE_BREAK = /\r\n|\r|\n/;

/** The wire form of `e`; throws RangeError on a bad name or id. */
export function sseEvent(e: SseEvent): string {
  let out = "";
  if (e.comment !== undefined) {
    for (const part of e.comment.split(LINE_BREAK)) out += `: ${part}\n`;
  }
  if (e.event !== undefined) {
    if (!EVENT_NAME.test(e.event)) throw new RangeError(`Invalid event name "${e.event}"`);
    out += `event: ${e.event}\n`;
  }
  if (e.id !== undefined) {
    if (!Number.isSafeInteger(e.id) || e.id < 0) {
      throw new RangeError(`Invalid event id "${e.id}": expected a non-negative integer`);
    }
    out += `id: ${e.id}\n`;
  }
  if (e.data !== undefined) {
    for (const part of e.data.split(LINE_BREAK)) out += `data: ${part}\n`;
  }
  if (out === "") throw new RangeError("An event needs data, an id, a name or a comment");
  return out + "\n";
}
