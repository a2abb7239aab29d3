/**
 * Reading session.jsonl back. Uses the shared line splitter (complete lines only; a torn
 * tail is reported, not parsed) and never throws for a bad line: each one is counted with
 * its line number so callers can report it. The spine is opened without following a
 * symlink (ContainmentError): replay must never serve a file from outside the session.
 */
import { join } from "node:path";
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { type LogEvent, LogEventSchema } from "./events.ts";
import { SESSION_JSONL } from "./paths.ts";
import { readRegularFile } from "./_contained_read.ts";

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
  let bytes: Uint8Array;
  try {
    bytes = await readRegularFile(join(dir, SESSION_JSONL));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { events: [], malformed: [], tornTailBytes: 0 };
    throw err;
  }
  return parseEvents(bytes);
}
