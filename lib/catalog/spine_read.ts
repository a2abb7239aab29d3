/**
 * Reading session.jsonl in pieces, through an already opened contained handle
 * (safe_fs.ts): `streamLines` walks complete lines from an offset in SPINE_CHUNK_BYTES
 * reads (the index build and its extensions), `LineReader` serves the few lines a page
 * needs through one reused window. A line is parsed exactly as parseEvents parses it
 * (JSON, then the LogEvent schema); anything else is skipped, like parseEvents skips it.
 *
 * Memory bounds: a line longer than DETAIL_LINE_MAX_BYTES is skipped unread (counted);
 * a line longer than one chunk is read and parsed only while holding BIG_LINES, a
 * process-wide mutex, so at most one such line (≤ 16 MiB, its string and its parse) is
 * in memory at a time whatever the number of requests.
 */
import { type LogEvent, LogEventSchema } from "../session_log/mod.ts";
import { Mutex } from "./locks.ts";
import type { SafeFile } from "./safe_fs.ts";
import { concatBytes } from "../text/mod.ts";

/** Largest part of a spine indexed (the rest is reported as `log_truncated`). */
export const SPINE_MAX_BYTES = 256 * 1024 * 1024;
/** Bytes per read of the spine. */
export const SPINE_CHUNK_BYTES = 1024 * 1024;
/** Longest spine line the detail view and replay parse (the rest are skipped). */
export const DETAIL_LINE_MAX_BYTES = 16 * 1024 * 1024;

const NL = 0x0a;
const CR = 0x0d;
const decoder = new TextDecoder("utf-8", { fatal: false });

/** Serializes big-line reads and parses across the process. */
export const BIG_LINES = new Mutex();

/** Parses one line's bytes as parseEvents does; null when it is not a LogEvent. */
export function parseLogLine(bytes: Uint8Array): LogEvent | null {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === CR) end--;
  if (end === 0) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(bytes.subarray(0, end)));
  } catch {
    // Not JSON: a malformed line is data, skipped as parseEvents skips it.
    return null;
  }
  const r = LogEventSchema.safeParse(raw);
  return r.success ? r.data : null;
}

/** One complete line as streamLines hands it over. */
export interface SpineLine {
  lineNo: number;
  /** Offset of the line's first byte. */
  offset: number;
  /** Bytes before the newline (CR kept: parseLogLine drops it). */
  length: number;
  /** The line's bytes; null when it was longer than DETAIL_LINE_MAX_BYTES. */
  bytes: Uint8Array | null;
}

/**
 * Complete lines of `file` from `from` (a line start, line `firstLineNo`) up to `end`.
 * Returns where the last complete line ended and the next line number; a torn tail is
 * left for the next call.
 */
export async function streamLines(
  file: SafeFile,
  o: { from: number; firstLineNo: number; end: number },
  visit: (line: SpineLine) => Promise<boolean | void> | boolean | void,
): Promise<{ consumed: number; nextLineNo: number; stoppedEarly: boolean }> {
  let pos = o.from;
  let lineNo = o.firstLineNo;
  let consumed = o.from;
  // A line that spans reads: its parts (or just its length once it is over the cap).
  let parts: Uint8Array[] = [];
  let partBytes = 0;
  let lineStart = o.from;
  let release: (() => void) | null = null;
  try {
    while (pos < o.end) {
      const chunk = await file.read(pos, Math.min(SPINE_CHUNK_BYTES, o.end - pos));
      if (chunk.length === 0) break;
      let at = 0;
      while (at < chunk.length) {
        const nl = chunk.indexOf(NL, at);
        const stop = nl < 0 ? chunk.length : nl;
        partBytes += stop - at;
        // Over the cap, the line is only measured: nothing of it is kept.
        if (partBytes <= DETAIL_LINE_MAX_BYTES) parts.push(chunk.subarray(at, stop));
        else parts = [];
        if (nl < 0) {
          // The line continues in the next read: from here on it is a big line.
          release ??= await BIG_LINES.lock();
          break;
        }
        const length = partBytes;
        const bytes = length > DETAIL_LINE_MAX_BYTES ? null : concatBytes(parts);
        parts = [];
        partBytes = 0;
        let cont = visit({ lineNo, offset: lineStart, length, bytes });
        if (cont instanceof Promise) cont = await cont;
        if (release) {
          release();
          release = null;
        }
        lineNo++;
        at = nl + 1;
        lineStart = pos + at;
        consumed = lineStart;
        if (cont === false) return { consumed, nextLineNo: lineNo, stoppedEarly: true };
      }
      // Parts still pointing into this chunk are copied out, so the chunk can go.
      if (parts.length) parts = [concatBytes(parts).slice()];
      pos += chunk.length;
    }
  } finally {
    release?.();
  }
  return { consumed, nextLineNo: lineNo, stoppedEarly: false };
}

/** Window of LineReader: a page's lines are mostly adjacent. */
const WINDOW_BYTES = 256 * 1024;

/** Reads a page's lines through one reused window (most lines of a page are adjacent). */
export class LineReader {
  #window = new Uint8Array(0);
  #windowAt = 0;

  constructor(readonly file: SafeFile) {}

  /** Parses the event of `length` bytes at `offset` (null: gone or not a LogEvent). */
  async event(offset: number, length: number): Promise<LogEvent | null> {
    if (length > DETAIL_LINE_MAX_BYTES) return null;
    if (length > WINDOW_BYTES) {
      const release = length > SPINE_CHUNK_BYTES ? await BIG_LINES.lock() : null;
      try {
        const bytes = await this.file.read(offset, length);
        return bytes.length === length ? parseLogLine(bytes) : null;
      } finally {
        release?.();
      }
    }
    const w = this.#window;
    if (offset < this.#windowAt || offset + length > this.#windowAt + w.length) {
      this.#window = await this.file.read(offset, WINDOW_BYTES);
      this.#windowAt = offset;
    }
    const start = offset - this.#windowAt;
    if (start + length > this.#window.length) return null;
    return parseLogLine(this.#window.subarray(start, start + length));
  }
}
