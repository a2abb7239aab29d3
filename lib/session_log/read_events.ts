/**
 * Reading session.jsonl back. Uses the shared line splitter (complete lines only; a torn
 * tail is reported, not parsed) and never throws for a bad line: each one is counted with
 * its line number so callers can report it. The spine is opened through the contained
 * reader (a symlink, FIFO, swap or hard link is refused with a ContainedReadError): replay
 * must never serve a file from outside the session.
 */
import { join } from "node:path";
import { lineText, readInside, refusalError, splitCompleteLines } from "../durable/mod.ts";
import { type LogEvent, LogEventSchema } from "./events.ts";
import { SESSION_JSONL } from "./paths.ts";

/** One parsed line with its position. */
export interface ReadEvent {
  lineNo: number;
  offset: number;
  event: LogEvent;
}

/** Everything read from a spine. */
export interface ReadEventsResult {
  events: ReadEvent[];
  malformed: { lineNo: number; reason: string }[];
  /** Bytes after the last newline (a torn or in-progress line). */
  tornTailBytes: number;
}

/** Parses spine bytes. */
export function parseEvents(bytes: Uint8Array): ReadEventsResult {
  const { lines, consumedOffset } = splitCompleteLines(bytes);
  const events: ReadEvent[] = [];
  const malformed: { lineNo: number; reason: string }[] = [];
  for (const span of lines) {
    if (span.end === span.start) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(lineText(bytes, span));
    } catch (err) {
      malformed.push({ lineNo: span.lineNo, reason: `not JSON: ${(err as Error).message}` });
      continue;
    }
    const r = LogEventSchema.safeParse(raw);
    if (!r.success) {
      malformed.push({ lineNo: span.lineNo, reason: "not a LogEvent" });
      continue;
    }
    events.push({ lineNo: span.lineNo, offset: span.start, event: r.data });
  }
  return { events, malformed, tornTailBytes: bytes.length - consumedOffset };
}

/** Reads and parses `<dir>/session.jsonl`; a missing file reads as empty. */
export async function readSessionEvents(dir: string): Promise<ReadEventsResult> {
  // No cap beyond the fstat size (replay wants the whole spine), as before the reader.
  const r = await readInside(dir, SESSION_JSONL, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    overflow: "truncate",
  });
  if (!r.ok && r.reason === "missing") return { events: [], malformed: [], tornTailBytes: 0 };
  if (!r.ok) throw refusalError(join(dir, SESSION_JSONL), r.reason);
  return parseEvents(r.bytes);
}
