/**
 * Deep Search matching over one piece of a file (a line, or a window of an over-long
 * line): the folded needle against the folded text, exactly like message search
 * (fold(): per-character lowercase + NFD), with highlight ranges mapped back to byte
 * offsets of the ORIGINAL text through foldWithMap. One hit per piece: a snippet of at
 * most SNIPPET_MAX_BYTES around the first reportable match, cut on character
 * boundaries, with every match inside it as a range. `reportBefore` limits reported
 * matches to those STARTING before that byte (the rest of a window is re-scanned by the
 * next window, which overlaps by more than any match can span).
 * Bytes are decoded leniently: invalid UTF-8 becomes U+FFFD, which can shift the
 * reported file offset of a later match on that line (the snippet stays exact).
 * Snippets leave here masked (maskSnippet: lib/secrets' one masker, then the cut-edge
 * rule, as every surface showing cut text does): a deep hit quotes raw tool output.
 */
import { fold, foldWithMap } from "../message_search/mod.ts";
import { maskCutEdges, maskWithRanges } from "../secrets/mod.ts";

/** Longest snippet, in UTF-8 bytes. */
export const SNIPPET_MAX_BYTES = 280;
/** Bytes of context kept before the match when the snippet has room. */
const LEAD_BYTES = 100;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A piece's hit. `at` is the first match's byte offset in the piece. */
export interface PieceHit {
  at: number;
  snippet: string;
  ranges: [number, number][];
  /** The snippet starts after / ends before the piece's first / last byte. */
  cutHead: boolean;
  cutTail: boolean;
}

/** The longest a match of `needle` can be in original bytes (each unit ≤ one 4-byte char). */
export function maxMatchBytes(needle: string): number {
  return needle.length * 4 + 4;
}

/** True when `text` (decoded from `byteLength` bytes) was all ASCII. */
function isAscii(text: string, byteLength: number): boolean {
  return text.length === byteLength && !text.includes("\ufffd");
}

/** Finds the hit of folded `needle` in `bytes`, or null. */
export function matchPiece(
  bytes: Uint8Array,
  needle: string,
  reportBefore = Infinity,
): PieceHit | null {
  const text = decoder.decode(bytes);
  const folded = fold(text);
  const first = folded.indexOf(needle);
  if (first < 0) return null;
  let enc: Uint8Array;
  const ranges: [number, number][] = [];
  if (isAscii(text, bytes.length)) {
    // ASCII folds one unit per byte: folded indexes are byte offsets.
    enc = bytes;
    for (let i = first; i >= 0; i = folded.indexOf(needle, i + 1)) {
      ranges.push([i, i + needle.length]);
    }
  } else {
    const map = foldWithMap(text);
    enc = encoder.encode(text);
    for (let i = map.folded.indexOf(needle); i >= 0; i = map.folded.indexOf(needle, i + 1)) {
      ranges.push([map.byteStart[i]!, map.byteEnd[i + needle.length - 1]!]);
    }
  }
  const reportable = ranges.filter(([a]) => a < reportBefore);
  if (reportable.length === 0) return null;
  const [a, b] = reportable[0]!;
  let start = Math.max(0, a - LEAD_BYTES);
  if (b - start > SNIPPET_MAX_BYTES) start = a;
  while (start > 0 && (enc[start]! & 0xc0) === 0x80) start--;
  let end = Math.min(enc.length, start + SNIPPET_MAX_BYTES);
  while (end > start && end < enc.length && (enc[end]! & 0xc0) === 0x80) end--;
  // Matches wholly inside the snippet; the anchoring match always (clipped only when it
  // is itself longer than a snippet).
  const inSnippet = ranges
    .filter(([x, y]) => (x >= start && y <= end) || x === a)
    .map(([x, y]): [number, number] => [x - start, Math.min(y, end) - start]);
  return {
    at: a,
    snippet: decoder.decode(enc.subarray(start, end)),
    ranges: inSnippet,
    cutHead: start > 0,
    cutTail: end < enc.length,
  };
}

/** `h`'s snippet with secrets masked and its ranges moved onto the masked text. */
export function maskSnippet(h: PieceHit): { snippet: string; ranges: [number, number][] } {
  const m = maskWithRanges(h.snippet, h.ranges);
  const e = maskCutEdges(m.text, m.ranges, { head: h.cutHead, tail: h.cutTail });
  return { snippet: e.text, ranges: e.ranges };
}

/**
 * Cheap prefilter for a run of complete lines: folding the whole run is one native call
 * for ASCII text, and most runs hold no match at all.
 */
export function mayMatch(bytes: Uint8Array, needle: string): boolean {
  return fold(decoder.decode(bytes)).includes(needle);
}
