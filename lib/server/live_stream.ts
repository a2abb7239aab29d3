/**
 * The live stream of a running native session: Server-Sent Events that tail
 * session.jsonl from a line number on, one event per complete line (the torn tail
 * waits), `id:` = the server's own line counter so a reconnecting EventSource resumes
 * exactly (Last-Event-ID). Every event goes through the one serializer (sse_event.ts):
 * nothing from the file reaches the wire as is (F2 in tests/RELIABILITY.md). A line that parses
 * as JSON is sent as its re-serialized JSON (JSON.stringify escapes every control
 * character, so a raw CR — legal JSON whitespace between tokens — cannot end a field;
 * numbers beyond 2^53 lose precision, which nothing reading the stream relies on: the
 * dashboard uses lines as refresh triggers and their number). Any other line (not JSON,
 * empty, or longer than LIVE_LINE_MAX_BYTES) is sent as `event: skipped` with the same
 * id and server-made data only: `{"line", "reason", "skipped"}` (the count so far on this
 * connection). Polls the file (no fs watcher: portable and bounded), sends a comment
 * heartbeat so proxies keep the connection, and stops when the client goes away. Each
 * change of the meta status (and the status at connect) is sent as `event: status` with
 * no `id:` (it is not a line): a waiting or finished session writes no line when its
 * status moves, so lines alone cannot tell the dashboard. The status is read BEFORE the
 * lines of the same tick, and writers append a line before they move the status
 * (session_end, then "completed"), so a status event always follows the lines written
 * before it: a client that refetches on it never misses the last rows. The
 * spine is opened through the catalog's contained reader (no symlink, FIFO or hardlink:
 * Deno's permissions do not contain symlinks, E2 in tests/RELIABILITY.md); a refused spine ends
 * the stream with one error event.
 */
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { SESSION_JSONL } from "../session_log/mod.ts";
import { openInside, readSessionStatus } from "../catalog/mod.ts";
import { sseEvent } from "./sse_event.ts";

/**
 * Longest line sent: also the most read per poll. A longer line (a runaway tool output
 * written whole) is skipped to its newline and announced, never held whole, so it can
 * neither stall the stream (it used to wait forever for a newline inside one read) nor
 * take the daemon's memory.
 */
export const LIVE_LINE_MAX_BYTES = 4 * 1024 * 1024;

/** Why a line was sent as `event: skipped`. */
export type SkipReason = "not_json" | "too_long";

/** The event for line `line` of the spine. */
export function lineEvent(line: number, text: string, skipped: () => number): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return skippedEvent(line, "not_json", skipped());
  }
  return sseEvent({ id: line, data: JSON.stringify(value) });
}

function skippedEvent(line: number, reason: SkipReason, count: number): string {
  return sseEvent({
    event: "skipped",
    id: line,
    data: JSON.stringify({ line, reason, skipped: count }),
  });
}

/** Options for {@link liveStream}. */
export interface LiveStreamOptions {
  dir: string;
  /** Number of lines already seen by the client (stream starts at line fromLine + 1). */
  fromLine: number;
  signal: AbortSignal;
  pollMs?: number;
  heartbeatMs?: number;
}

/** A ReadableStream of SSE bytes. */
export function liveStream(o: LiveStreamOptions): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let offset = 0;
  let line = 0;
  let lastBeat = Date.now();
  let sentStatus: string | null = null;
  let skipped = 0;
  // Inside a line longer than LIVE_LINE_MAX_BYTES: its bytes are passed over up to the newline.
  let overlong = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  // Set once the stream is closed or cancelled: a tick already in flight (awaiting a read)
  // must neither enqueue nor reschedule — enqueueing into a cancelled stream throws, and an
  // error thrown from the detached tick would be an unhandled rejection in the daemon.
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = () => {
        if (timer !== null) clearTimeout(timer);
        if (closed) return;
        closed = true;
        try {
          controller.close();
        } catch {
          // Already closed by the runtime after the client left.
        }
      };
      const send = (text: string) => {
        if (closed) return;
        try {
          controller.enqueue(enc.encode(text));
        } catch {
          // The client left between the check and the write: the stream is over.
          closed = true;
        }
      };
      o.signal.addEventListener("abort", stop, { once: true });
      const tick = async () => {
        if (o.signal.aborted || closed) return;
        try {
          const status = await readSessionStatus(o.dir);
          const opened = await openInside(o.dir, SESSION_JSONL);
          if (!opened.ok) {
            if (opened.reason !== "missing") {
              send(sseEvent({
                event: "error",
                data: JSON.stringify({ message: `session.jsonl refused: ${opened.reason}` }),
              }));
              stop();
              return;
            }
            throw new Deno.errors.NotFound("session.jsonl is missing");
          }
          const f = opened.file;
          try {
            if (f.size < offset) {
              offset = 0; // Replaced: restart counting.
              line = 0;
              overlong = false;
            }
            if (f.size > offset) {
              const buf = await f.read(offset, Math.min(f.size - offset, LIVE_LINE_MAX_BYTES));
              let from = 0;
              if (overlong) {
                const nl = buf.indexOf(0x0a);
                if (nl < 0) {
                  offset += buf.length;
                } else {
                  overlong = false;
                  line++;
                  if (line > o.fromLine) send(skippedEvent(line, "too_long", ++skipped));
                  from = nl + 1;
                }
              }
              if (!overlong) {
                const { lines, consumedOffset } = splitCompleteLines(
                  buf.subarray(from),
                  offset + from,
                  line + 1,
                );
                for (const span of lines) {
                  line = span.lineNo;
                  if (line <= o.fromLine) continue;
                  send(lineEvent(line, lineText(buf, span, offset), () => ++skipped));
                }
                // A full read that is one partial line: that line is longer than the cap.
                if (buf.length === LIVE_LINE_MAX_BYTES && consumedOffset === offset) {
                  overlong = true;
                  offset += buf.length;
                } else {
                  offset = consumedOffset;
                }
              }
            }
          } finally {
            await f.close();
          }
          if (status !== null && status !== sentStatus) {
            send(sseEvent({ event: "status", data: JSON.stringify({ status }) }));
            sentStatus = status;
          }
          if (Date.now() - lastBeat > (o.heartbeatMs ?? 15_000)) {
            send(sseEvent({ comment: "keepalive" }));
            lastBeat = Date.now();
          }
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) {
            send(sseEvent({
              event: "error",
              data: JSON.stringify({ message: (err as Error).message }),
            }));
          }
        }
        if (!o.signal.aborted && !closed) timer = setTimeout(tick, o.pollMs ?? 250);
      };
      void tick();
    },
    cancel() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
    },
  });
}
