/**
 * The one JSONL line splitter every reader shares. It yields only newline-terminated
 * lines and reports the offset just past the last complete one; a torn tail (a crash
 * mid-append, or a writer still going) is left for the next read. Offsets are byte
 * offsets into the file, so a cursor can resume exactly there.
 */

/** One complete line: bytes [start, end) exclude the terminating "\n" (and a "\r" before it). */
export interface LineSpan {
  /** Byte offset of the first byte of the line in the file. */
  start: number;
  /** Byte offset one past the last content byte. */
  end: number;
  /** 1-based line number within the file, when the caller supplied a starting number. */
  lineNo: number;
}

/** Result of {@link splitCompleteLines}. */
export interface SplitResult {
  lines: LineSpan[];
  /** File offset just past the last "\n"; equals `baseOffset` when no line completed. */
  consumedOffset: number;
}

const NL = 0x0a;
const CR = 0x0d;

/**
 * Splits `bytes` (which start at file offset `baseOffset`, and whose first line is
 * line `firstLineNo`) into complete lines.
 */
export function splitCompleteLines(
  bytes: Uint8Array,
  baseOffset = 0,
  firstLineNo = 1,
): SplitResult {
  const lines: LineSpan[] = [];
  let pos = 0;
  let lineNo = firstLineNo;
  while (pos < bytes.length) {
    const nl = bytes.indexOf(NL, pos);
    if (nl < 0) break;
    let end = nl;
    if (end > pos && bytes[end - 1] === CR) end--;
    lines.push({ start: baseOffset + pos, end: baseOffset + end, lineNo });
    lineNo++;
    pos = nl + 1;
  }
  return { lines, consumedOffset: baseOffset + pos };
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Decodes a line span from a buffer that starts at file offset `baseOffset`. */
export function lineText(bytes: Uint8Array, span: LineSpan, baseOffset = 0): string {
  return decoder.decode(bytes.subarray(span.start - baseOffset, span.end - baseOffset));
}

/** Parses every complete line of a small file as JSON; bad lines are returned, not thrown. */
export function parseJsonLines(
  bytes: Uint8Array,
): {
  values: { lineNo: number; start: number; value: unknown }[];
  bad: number[];
  consumedOffset: number;
} {
  const { lines, consumedOffset } = splitCompleteLines(bytes);
  const values: { lineNo: number; start: number; value: unknown }[] = [];
  const bad: number[] = [];
  for (const span of lines) {
    if (span.end === span.start) continue;
    try {
      values.push({
        lineNo: span.lineNo,
        start: span.start,
        value: JSON.parse(lineText(bytes, span)),
      });
    } catch {
      // A malformed line is data: the caller reports it by line number.
      bad.push(span.lineNo);
    }
  }
  return { values, bad, consumedOffset };
}
