/**
 * Server highlight ranges → JS string indices. The message-search API answers `ranges`
 * as UTF-8 BYTE offsets into the ORIGINAL record text and `snippet` as the original
 * bytes [snippet_offset_bytes, +len) cut on character boundaries. A JS string indexes
 * UTF-16 code units, so a range is translated by walking code points: each adds 1–4
 * bytes and 1–2 units. Ranges are clamped to the snippet (a match may start before it
 * or run past its end), a byte offset that falls inside a character widens to the
 * whole character (start snaps down, end snaps up), and a surrogate pair is never
 * split because whole code points are the unit of the walk. Pure; never throws.
 */

/** A half-open [start, end) range of UTF-16 indices into a string. */
export type IndexRange = [number, number];

function utf8Len(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Boundaries of `text`: bytes[k] is the UTF-8 offset where the k-th code point starts
 * and units[k] its UTF-16 index; the final element of each is the total length.
 */
function boundaries(text: string): { bytes: number[]; units: number[] } {
  const bytes: number[] = [];
  const units: number[] = [];
  let b = 0;
  let u = 0;
  for (const ch of text) {
    bytes.push(b);
    units.push(u);
    b += utf8Len(ch.codePointAt(0)!);
    u += ch.length;
  }
  bytes.push(b);
  units.push(u);
  return { bytes, units };
}

/** Largest k with arr[k] <= x (arr ascending, arr[0] === 0, x >= 0). */
function floorIndex(arr: number[], x: number): number {
  let lo = 0;
  let hi = arr.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (arr[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Byte length of `text` in UTF-8 (the one helper the server measures with too). */
export { utf8Length } from "../../lib/text/mod.ts";

/**
 * Translates server byte ranges (into the original text) to UTF-16 ranges into
 * `snippet`, which starts at byte `snippetOffsetBytes` of the original. Ranges outside
 * the snippet are dropped, crossing ones clamped; the result is sorted and merged.
 */
export function snippetRanges(
  snippet: string,
  snippetOffsetBytes: number,
  ranges: readonly (readonly [number, number])[],
): IndexRange[] {
  const { bytes, units } = boundaries(snippet);
  const total = bytes[bytes.length - 1]!;
  const out: IndexRange[] = [];
  for (const [a, b] of ranges) {
    const s = Math.max(0, Math.min(total, a - snippetOffsetBytes));
    const e = Math.max(0, Math.min(total, b - snippetOffsetBytes));
    if (!(e > s)) continue;
    const ks = floorIndex(bytes, s);
    let ke = floorIndex(bytes, e);
    if (bytes[ke]! < e) ke++; // inside a character: include all of it
    out.push([units[ks]!, units[ke]!]);
  }
  return mergeRanges(out);
}

/** Sorts and merges overlapping or touching ranges; drops empty ones. */
export function mergeRanges(ranges: readonly IndexRange[]): IndexRange[] {
  const sorted = ranges.filter(([s, e]) => e > s).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: IndexRange[] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Splits `text` into alternating plain and marked pieces along `ranges`. */
export function splitMarked(
  text: string,
  ranges: readonly IndexRange[],
): { text: string; marked: boolean }[] {
  const out: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const [s0, e0] of mergeRanges(ranges)) {
    const s = Math.max(at, Math.min(text.length, s0));
    const e = Math.max(s, Math.min(text.length, e0));
    if (s > at) out.push({ text: text.slice(at, s), marked: false });
    if (e > s) out.push({ text: text.slice(s, e), marked: true });
    at = e;
  }
  if (at < text.length) out.push({ text: text.slice(at), marked: false });
  return out;
}
