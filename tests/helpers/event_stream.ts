/**
 * A spec-conformant event-stream parser for tests (WHATWG HTML, "Server-sent events",
 * §9.2.6 "Interpreting an event stream"): UTF-8 decoding with one leading BOM dropped;
 * lines end at CRLF, a lone LF or a lone CR (also across chunk boundaries); an empty line
 * dispatches; `:` starts a comment; `field: value` loses one leading space; `event` sets
 * the type, `data` appends value + LF, `id` sets the last-event-id buffer unless the value
 * holds NUL, `retry` with only ASCII digits sets the reconnection time, anything else is
 * ignored. Dispatch sets the last event ID even when the data buffer is empty (then no
 * event fires). Fed the bytes of a real stream, it sees exactly what a browser would.
 */

/** One dispatched event. */
export interface ParsedEvent {
  type: string;
  data: string;
  lastEventId: string;
}

/** An incremental parser. */
export interface EventStreamParser {
  push(chunk: Uint8Array | string): void;
  events: ParsedEvent[];
  /** Every `retry:` value accepted. */
  retries: number[];
  comments: string[];
  /** The last event ID string now (what a reconnect would send as Last-Event-ID). */
  readonly lastEventId: string;
}

/** A fresh parser. */
export function eventStreamParser(): EventStreamParser {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: false });
  let pending = "";
  let lastWasCr = false;
  let data = "";
  let type = "";
  let idBuffer = "";
  let lastEventId = "";
  const p: EventStreamParser = {
    events: [],
    retries: [],
    comments: [],
    get lastEventId() {
      return lastEventId;
    },
    push(chunk) {
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      for (const ch of text) {
        if (ch === "\n" && lastWasCr) {
          lastWasCr = false; // The LF of a CRLF: the line already ended at the CR.
          continue;
        }
        lastWasCr = ch === "\r";
        if (ch === "\r" || ch === "\n") {
          line(pending);
          pending = "";
        } else {
          pending += ch;
        }
      }
    },
  };
  const line = (l: string) => {
    if (l === "") return dispatch();
    if (l.startsWith(":")) return void p.comments.push(l.slice(1));
    const colon = l.indexOf(":");
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? "" : l.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data += value + "\n";
    else if (field === "id") {
      if (!value.includes("\0")) idBuffer = value;
    } else if (field === "retry") {
      if (/^[0-9]+$/.test(value)) p.retries.push(Number(value));
    }
  };
  const dispatch = () => {
    lastEventId = idBuffer;
    if (data === "") {
      type = "";
      return;
    }
    if (data.endsWith("\n")) data = data.slice(0, -1);
    p.events.push({ type: type || "message", data, lastEventId });
    data = "";
    type = "";
  };
  return p;
}
