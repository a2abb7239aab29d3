/**
 * The one budgeted line reader of the extractors: the complete lines after a cursor (or
 * from the start) through the shared cursor reader, past any oversized line.
 * `readIncrement` ends an increment at a line over the cap (the cursor resumes after it),
 * so {@link readLineBytes} loops until the end of the file (as of the first read's open)
 * or until the byte budget is spent: the valid lines behind an oversized one never wait a
 * sweep for it, and a huge file is read in budget-sized steps, never dropped.
 * Two views of the same read: {@link readLineBytes} keeps each line's raw bytes (sources
 * that hash line bytes or decode them in their own line parser: Copilot, Cursor, Droid);
 * {@link readLines} decodes each line leniently (invalid bytes become U+FFFD, as every
 * extractor reads), so a stray byte inside a valid JSON line never costs its message
 * (Gemini, Qwen).
 * Bounded: at most `maxBytes` (+ one line) are kept in memory; the caller checks the
 * returned cursor's size against its file bound. {@link assertLineLimit} is the one check
 * that a source's line cap fits the cursor reader's own ({@link MAX_LINE_BYTES}).
 * Errors: CursorMismatchError when `from` no longer matches the file (treat as rewritten);
 * ContainmentError / PermissionDenied as readIncrement.
 */
import { MAX_LINE_BYTES, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";

/** One complete line, as bytes. */
export interface SourceLineBytes {
  /** 1-based line number. */
  lineNo: number;
  /** Byte offset of its first byte. */
  offset: number;
  /** The line without its "\n" (a view into the read buffer). */
  bytes: Uint8Array;
}

/** What {@link readLineBytes} consumed. */
export interface LineBytesRead {
  lines: SourceLineBytes[];
  cursor: FileCursor;
  /** Lines skipped for exceeding `maxLineBytes`. */
  oversized: number;
  /** False when the byte budget stopped the read before the end of the file. */
  complete: boolean;
}

/** One complete line, decoded. */
export interface SourceLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset of its first byte. */
  offset: number;
  /** Decoded text; null when the bytes are not valid UTF-8. */
  text: string | null;
}

/** What {@link readLines} consumed. */
export interface LinesRead {
  lines: SourceLine[];
  cursor: FileCursor;
  /** Lines skipped for exceeding `maxLineBytes`. */
  oversized: number;
}

/** Options of both readers. */
export interface ReadLinesOptions {
  /** Bytes read at most (the sweep's or the file's budget; one more line may be kept). */
  maxBytes: number;
  /** Longer lines are skipped and counted, never buffered. */
  maxLineBytes: number;
  /** The epoch a read from the start stamps on its cursor. @default 0 */
  rewriteEpoch?: number;
}

// Not fatal, as every extractor reads: bytes that are not UTF-8 inside an otherwise valid
// JSON line decode to U+FFFD and the line is still indexed (reliability B-series: a valid
// message is never lost to a stray byte); a line that no longer parses is counted by the
// parser as malformed.
const lenient = new TextDecoder("utf-8");

/** Reads every complete line after `from` as bytes (see the header). */
export async function readLineBytes(
  path: string,
  from: FileCursor | null,
  o: ReadLinesOptions,
): Promise<LineBytesRead> {
  const lines: SourceLineBytes[] = [];
  let oversized = 0;
  let cursor = from;
  let read = 0;
  for (;;) {
    const before = cursor?.offset ?? 0;
    const inc = await readIncrement(path, cursor, {
      maxBytes: Math.max(1, o.maxBytes - read),
      maxLineBytes: o.maxLineBytes,
      ...(cursor === null ? { rewriteEpoch: o.rewriteEpoch ?? 0 } : {}),
    });
    for (const s of inc.lines) {
      const bytes = inc.bytes.subarray(s.start - inc.baseOffset, s.end - inc.baseOffset);
      lines.push({ lineNo: s.lineNo, offset: s.start, bytes });
    }
    oversized += inc.oversizedLines.length;
    read += inc.bytes.length;
    cursor = inc.cursor;
    // Done at the end of the file, or once the byte budget is spent (the caller's bound);
    // a read that did not move the cursor cannot make progress by repeating.
    if (inc.complete || read >= o.maxBytes || inc.cursor.offset === before) {
      return { lines, cursor: inc.cursor, oversized, complete: inc.complete };
    }
  }
}

/**
 * One line of {@link readLineBytes}, decoded as {@link readLines} decodes it: for a reader
 * that decodes lines one at a time as it parses them, so only the read's bytes stay
 * resident, not every line's text as well.
 */
export function decodeLine(l: SourceLineBytes): string {
  return lenient.decode(l.bytes);
}

/** Reads every complete line after `from`, decoded leniently (see the header). */
export async function readLines(
  path: string,
  from: FileCursor | null,
  o: ReadLinesOptions,
): Promise<LinesRead> {
  const r = await readLineBytes(path, from, o);
  const lines = r.lines.map((l) => ({ line: l.lineNo, offset: l.offset, text: decodeLine(l) }));
  return { lines, cursor: r.cursor, oversized: r.oversized };
}

/**
 * Throws when a source's line cap `value` (its limit `name`) exceeds what the cursor
 * reader can hold ({@link MAX_LINE_BYTES}): a larger cap would be silently lowered.
 */
export function assertLineLimit(label: string, name: string, value: number): void {
  if (value > MAX_LINE_BYTES) {
    throw new RangeError(`${label} limit "${name}" must be at most ${MAX_LINE_BYTES}`);
  }
}
