/**
 * Highlights and snippets for one hit, computed only for records that are shown (never
 * for the arena as a whole): the record's original text is re-folded WITH its
 * folded→original byte map, every valid match of every needle is mapped to a UTF-8 byte
 * range of the ORIGINAL text (whole original characters), and the snippet is a window of
 * at most SNIPPET_MAX_BYTES original bytes around the earliest range, cut on character
 * boundaries and moved onto word edges when one lies near (a snippet that starts
 * `ultipart uploads` reads as garbage). Matching uses the same fold and boundary rule as the scan (match.ts), so a
 * record the scan found always yields at least one range.
 * The window never cuts a secret in half (issue 18): what leaves Intendant is masked
 * (lib/secrets), and a masker cannot recognise half a key, so a secret crossing an edge of
 * the window is left out of it when it lies beside the hit, or shown from its start when
 * the hit is inside it. The index and the ranges stay on the original text.
 */
import { findSecrets } from "../../secrets/mod.ts";
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
  /** The text continues after the snippet. */
  cutEnd: boolean;
}

/**
 * How far (in bytes) a cut snippet edge may move to land on a word edge: a start moves
 * forward past the partial word (never past the first highlight), an end moves back to
 * the last whitespace. Farther than this (one long token: a URL, a hash, CJK text without
 * spaces), the edge stays on the character boundary.
 */
const WORD_EDGE_SLACK_BYTES = 24;

/** ASCII whitespace, the only word separator a byte test can see without decoding. */
function isSpaceByte(b: number | undefined): boolean {
  return b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d;
}

/**
 * `[start, end)` moved onto word edges where one lies within WORD_EDGE_SLACK_BYTES:
 * the start only when it cuts a word (the byte before it is not a space) and only up to
 * the first highlight's start `a`; the end only when it cuts one, and never before the first
 * highlight's end `b`. Edges at the text's own ends stay.
 */
export function wordEdges(
  bytes: Uint8Array,
  [start, end]: [number, number],
  [a, b]: [number, number],
): [number, number] {
  if (start > 0 && !isSpaceByte(bytes[start - 1])) {
    const limit = Math.min(a, start + WORD_EDGE_SLACK_BYTES);
    for (let i = start; i < limit; i++) {
      if (isSpaceByte(bytes[i])) {
        start = i + 1;
        break;
      }
    }
  }
  if (end < bytes.length && !isSpaceByte(bytes[end])) {
    const limit = Math.max(start, b, end - WORD_EDGE_SLACK_BYTES);
    for (let i = end - 1; i > limit; i--) {
      if (isSpaceByte(bytes[i])) {
        end = i;
        break;
      }
    }
  }
  return [start, end];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Sorted, overlap-merged byte ranges of every needle in `text` (capped). */
export function highlightRanges(
  text: string,
  needles: readonly string[],
  loose: readonly RegExp[] = [],
): [number, number][] {
  const map = foldWithMap(text);
  const raw: [number, number][] = [];
  for (const n of needles) {
    for (const p of allMatches(map.folded, n, RANGES_PER_HIT_MAX)) {
      raw.push(toByteRange(map, p, p + n.length));
    }
  }
  // Accent-insensitive matchers (a relevance page's loose words: question.ts bareRegex).
  for (const re of loose) {
    re.lastIndex = 0;
    let k = 0;
    for (
      let m = re.exec(map.folded);
      m !== null && k < RANGES_PER_HIT_MAX;
      m = re.exec(map.folded)
    ) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      raw.push(toByteRange(map, m.index, m.index + m[0].length));
      k++;
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

/** Room kept before a secret the hit lies in, for the label some rules need (`password=`). */
const SECRET_CONTEXT_BYTES = 64;
/** Adjustment rounds before falling back to the hit alone. */
const SECRET_WINDOW_ROUNDS = 4;

/** findSecrets' spans of `text` as UTF-8 byte offsets, shifted by `base`. */
function secretBytes(text: string, base = 0): [number, number][] {
  return findSecrets(text).map((sp) => {
    const s = base + enc.encode(text.slice(0, sp.start)).length;
    return [s, s + enc.encode(text.slice(sp.start, sp.end)).length];
  });
}

/** `i` moved back to the start of the UTF-8 character it is in. */
function charStart(bytes: Uint8Array, i: number): number {
  while (i > 0 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

/**
 * `window` of `text` moved until every secret of the whole text that the window shows is
 * one the masker also finds in the window alone — whole, and with the label a rule may
 * need. A secret beside the hit [a, b) that would be cut (or lose its label) is left out
 * (the edge moves past it); one the hit lies in is shown from a little before its start.
 * If that does not settle, the window is the hit alone. A text that fits is never cut.
 */
export function secretSafeWindow(
  text: string,
  bytes: Uint8Array,
  window: [number, number],
  [a, b]: [number, number],
): [number, number] {
  let [start, end] = window;
  if (start === 0 && end === bytes.length) return window;
  const spans = secretBytes(text);
  if (spans.length === 0) return window;
  for (let round = 0; round < SECRET_WINDOW_ROUNDS; round++) {
    const shown = spans.filter(([s, e]) => s < end && e > start);
    if (shown.length === 0) return [start, end];
    const seen = secretBytes(dec.decode(bytes.subarray(start, end)), start);
    const missing = shown.filter(([s, e]) => !seen.some(([x, y]) => x <= s && y >= e));
    if (missing.length === 0) return [start, end];
    for (const [s, e] of missing) {
      if (e <= a) start = Math.max(start, e);
      else if (s >= b) end = Math.min(end, s);
      else {
        start = charStart(bytes, Math.max(0, s - SECRET_CONTEXT_BYTES));
        end = charStart(bytes, Math.min(bytes.length, start + SNIPPET_MAX_BYTES));
        if (end <= start) end = Math.min(bytes.length, start + SNIPPET_MAX_BYTES);
      }
    }
  }
  return [a, charStart(bytes, Math.min(b, a + SNIPPET_MAX_BYTES))];
}

/** Ranges and snippet of one hit. */
export function highlight(
  text: string,
  needles: readonly string[],
  loose: readonly RegExp[] = [],
): Highlight {
  const ranges = highlightRanges(text, needles, loose);
  const bytes = enc.encode(text);
  const first = ranges[0] ?? [0, 0];
  // Word edges first, the secret check last: the window the masker sees is the one shown.
  const edged = wordEdges(bytes, snippetWindow(bytes, first), first);
  const [start, end] = secretSafeWindow(text, bytes, edged, first);
  return {
    ranges,
    snippet: dec.decode(bytes.subarray(start, end)),
    snippetOffsetBytes: start,
    cutEnd: end < bytes.length,
  };
}
