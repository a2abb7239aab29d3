/**
 * The live stream of a running native session: Server-Sent Events that tail
 * session.jsonl from a line number on, one `data:` message per complete line (the torn
 * tail waits), `id:` = the line number so a reconnecting EventSource resumes exactly
 * (Last-Event-ID). Polls the file (no fs watcher: portable and bounded), sends a comment
 * heartbeat so proxies keep the connection, and stops when the client goes away. The
 * spine is opened through the catalog's contained reader (no symlink, FIFO or hardlink:
 * Deno's permissions do not contain symlinks, reliability-plan E2); a refused spine ends
 * the stream with one error event.
 */
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { SESSION_JSONL } from "../session_log/mod.ts";
import { openInside } from "../catalog/mod.ts";

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
  let timer: ReturnType<typeof setTimeout> | null = null;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = () => {
        if (timer !== null) clearTimeout(timer);
        try {
          controller.close();
        } catch {
          // Already closed by the runtime after the client left.
        }
      };
      o.signal.addEventListener("abort", stop, { once: true });
      const tick = async () => {
        if (o.signal.aborted) return;
        try {
          const opened = await openInside(o.dir, SESSION_JSONL);
          if (!opened.ok) {
            if (opened.reason !== "missing") {
              controller.enqueue(
                enc.encode(
                  `event: error\ndata: ${
                    JSON.stringify({ message: `session.jsonl refused: ${opened.reason}` })
                  }\n\n`,
                ),
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
                controller.enqueue(enc.encode(`id: ${line}\ndata: ${text}\n\n`));
              }
              offset = consumedOffset;
            }
          } finally {
            await f.close();
          }
          if (Date.now() - lastBeat > (o.heartbeatMs ?? 15_000)) {
            controller.enqueue(enc.encode(`: keepalive\n\n`));
            lastBeat = Date.now();
          }
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) {
            controller.enqueue(
              enc.encode(
                `event: error\ndata: ${JSON.stringify({ message: (err as Error).message })}\n\n`,
              ),
            );
          }
        }
        if (!o.signal.aborted) timer = setTimeout(tick, o.pollMs ?? 250);
      };
      void tick();
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
    },
  });
}
