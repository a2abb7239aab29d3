/**
 * Highlights and snippets for one hit, computed only for records that are shown (never
 * for the arena as a whole): the record's original text is re-folded WITH its
 * folded→original byte map, every valid match of every needle is mapped to a UTF-8 byte
 * range of the ORIGINAL text (whole original characters), and the snippet is a window of
 * at most SNIPPET_MAX_BYTES original bytes around the earliest range, cut on character
 * boundaries. Matching uses the same fold and boundary rule as the scan (match.ts), so a
 * record the scan found always yields at least one range.
 */
import { foldWithMap, toByteRange } from "./fold.ts";
import { allMatches } from "./match.ts";
import { RANGES_PER_HIT_MAX, SNIPPET_MAX_BYTES } from "./types.ts";

/** Of the snippet context, the share placed before the first highlight. */
const CONTEXT_BEFORE_SHARE = 1 / 3;

/** What a hit shows. */
export interface Highlight {
  ranges: [number, number][];
  snippet: string;
  snippetOffsetBytes: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Sorted, overlap-merged byte ranges of every needle in `text` (capped). */
export function highlightRanges(text: string, needles: readonly string[]): [number, number][] {
  const map = foldWithMap(text);
  const raw: [number, number][] = [];
  for (const n of needles) {
    for (const p of allMatches(map.folded, n, RANGES_PER_HIT_MAX)) {
      raw.push(toByteRange(map, p, p + n.length));
    }
  }
  raw.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  for (const r of raw) {
    const last = out.at(-1);
    if (last && r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out.length > RANGES_PER_HIT_MAX ? out.slice(0, RANGES_PER_HIT_MAX) : out;
}

/** The snippet window [start, end) of `bytes` around [a, b), on UTF-8 character boundaries. */
export function snippetWindow(bytes: Uint8Array, [a, b]: [number, number]): [number, number] {
  const len = bytes.length;
  let start: number;
  let end: number;
  if (len <= SNIPPET_MAX_BYTES) return [0, len];
  if (b - a >= SNIPPET_MAX_BYTES) {
    start = a;
    end = a + SNIPPET_MAX_BYTES;
  } else {
    start = Math.max(0, a - Math.floor((SNIPPET_MAX_BYTES - (b - a)) * CONTEXT_BEFORE_SHARE));
    end = Math.min(len, start + SNIPPET_MAX_BYTES);
    start = Math.max(0, end - SNIPPET_MAX_BYTES);
  }
  // 10xxxxxx bytes continue a character: move the start forward and the end back.
  while (start < len && (bytes[start]! & 0xc0) === 0x80) start++;
  while (end < len && end > start && (bytes[end]! & 0xc0) === 0x80) end--;
  return [start, end];
}

/** Ranges and snippet of one hit. */
export function highlight(text: string, needles: readonly string[]): Highlight {
  const ranges = highlightRanges(text, needles);
  const bytes = enc.encode(text);
  const [start, end] = snippetWindow(bytes, ranges[0] ?? [0, 0]);
  return { ranges, snippet: dec.decode(bytes.subarray(start, end)), snippetOffsetBytes: start };
}
