/**
 * The live stream of a running native session: Server-Sent Events that tail
 * session.jsonl from a line number on, one `data:` message per complete line (the torn
 * tail waits), `id:` = the line number so a reconnecting EventSource resumes exactly
 * (Last-Event-ID). Polls the file (no fs watcher: portable and bounded), sends a comment
 * heartbeat so proxies keep the connection, and stops when the client goes away. Each
 * change of the meta status (and the status at connect) is sent as `event: status` with
 * no `id:` (it is not a line): a waiting or finished session writes no line when its
 * status moves, so lines alone cannot tell the dashboard. The status is read BEFORE the
 * lines of the same tick, and writers append a line before they move the status
 * (session_end, then "completed"), so a status event always follows the lines written
 * before it: a client that refetches on it never misses the last rows. The
 * spine is opened through the catalog's contained reader (no symlink, FIFO or hardlink:
 * Deno's permissions do not contain symlinks, reliability-plan E2); a refused spine ends
 * the stream with one error event.
 */
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { SESSION_JSONL } from "../session_log/mod.ts";
import { openInside, readSessionStatus } from "../catalog/mod.ts";

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
              send(
                `event: error\ndata: ${
                  JSON.stringify({ message: `session.jsonl refused: ${opened.reason}` })
                }\n\n`,
              );
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
            }
            if (f.size > offset) {
              const buf = await f.read(offset, Math.min(f.size - offset, 4 * 1024 * 1024));
              const { lines, consumedOffset } = splitCompleteLines(buf, offset, line + 1);
              for (const span of lines) {
                line = span.lineNo;
                if (line <= o.fromLine) continue;
                const text = lineText(buf, span, offset);
                send(`id: ${line}\ndata: ${text}\n\n`);
              }
              offset = consumedOffset;
            }
          } finally {
            await f.close();
          }
          if (status !== null && status !== sentStatus) {
            send(`event: status\ndata: ${JSON.stringify({ status })}\n\n`);
            sentStatus = status;
          }
          if (Date.now() - lastBeat > (o.heartbeatMs ?? 15_000)) {
            send(`: keepalive\n\n`);
            lastBeat = Date.now();
          }
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) {
            send(`event: error\ndata: ${JSON.stringify({ message: (err as Error).message })}\n\n`);
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
