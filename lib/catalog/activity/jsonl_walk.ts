/**
 * The one JSONL walk every activity reader uses. Complete lines only, through the shared
 * splitter (lib/durable): an unterminated last line — a writer mid-append, or the head of
 * a file cut at the read cap — is counted `torn_tail` and never parsed. A line longer
 * than ACTIVITY_MAX_LINE_BYTES is skipped unparsed (`oversized_line`); a line that is not
 * a JSON object is `malformed_line`. Blank lines carry nothing. Nothing here throws on
 * bad input: the counts go to the caller's `skipped`.
 * Lines are handed over one at a time so a 64 MiB file never exists as one parsed tree.
 */
import { lineText, splitCompleteLines } from "../../durable/mod.ts";
import { isObj, type Obj } from "./tool_text.ts";

/** Longest line parsed (a Claude row with an image, a Codex output item). */
export const ACTIVITY_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Adds one to `skipped[reason]`. */
export function countSkip(skipped: Record<string, number>, reason: string): void {
  skipped[reason] = (skipped[reason] ?? 0) + 1;
}

/** Calls `visit(line, object)` for every complete JSON-object line of `bytes`, in order. */
export function walkJsonl(
  bytes: Uint8Array,
  skipped: Record<string, number>,
  visit: (line: number, row: Obj) => void,
  o: { maxLineBytes?: number } = {},
): void {
  const max = o.maxLineBytes ?? ACTIVITY_MAX_LINE_BYTES;
  const split = splitCompleteLines(bytes);
  if (split.consumedOffset < bytes.length) countSkip(skipped, "torn_tail");
  for (const span of split.lines) {
    if (span.end - span.start > max) {
      countSkip(skipped, "oversized_line");
      continue;
    }
    const text = lineText(bytes, span);
    if (text.trim().length === 0) continue;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      // Not JSON (a torn fragment a writer later repaired mid-file): data, counted.
      countSkip(skipped, "malformed_line");
      continue;
    }
    if (!isObj(row)) {
      countSkip(skipped, "malformed_line");
      continue;
    }
    visit(span.lineNo, row);
  }
}
