/**
 * Reads the complete lines after a cursor (or from the start) through the shared cursor
 * reader, past any oversized line: `readIncrement` ends an increment at a line over the
 * cap, so this loops until the file's end (as of the first read's open) is reached. Each
 * line is decoded leniently (invalid bytes become U+FFFD, as every extractor reads), so a
 * stray byte inside a valid JSON line never costs its message. Shared by the Gemini and
 * Qwen extractors (one reader, not a copy per source).
 * Bounded: at most `maxBytes` (+ one line) are kept in memory; the caller checks the
 * returned cursor's size against its file bound.
 * Errors: CursorMismatchError when `from` no longer matches the file (treat as rewritten);
 * ContainmentError / PermissionDenied as readIncrement.
 */
import { type Increment, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";

/** One complete line. */
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

// Not fatal, as every extractor reads: bytes that are not UTF-8 inside an otherwise valid
// JSON line decode to U+FFFD and the line is still indexed (reliability B-series: a valid
// message is never lost to a stray byte); a line that no longer parses is counted by the
// parser as malformed.
const lenient = new TextDecoder("utf-8");

function decode(inc: Increment, start: number, end: number): string | null {
  return lenient.decode(inc.bytes.subarray(start - inc.baseOffset, end - inc.baseOffset));
}

/** Reads every complete line after `from` (see the header). */
export async function readLines(
  path: string,
  from: FileCursor | null,
  o: { maxBytes: number; maxLineBytes: number; rewriteEpoch?: number },
): Promise<LinesRead> {
  const lines: SourceLine[] = [];
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
      lines.push({ line: s.lineNo, offset: s.start, text: decode(inc, s.start, s.end) });
    }
    oversized += inc.oversizedLines.length;
    read += inc.bytes.length;
    cursor = inc.cursor;
    // Done at the end of the file, or once the byte budget is spent (the caller's bound).
    if (inc.complete || read >= o.maxBytes || inc.cursor.offset === before) {
      return { lines, cursor: inc.cursor, oversized };
    }
  }
}
