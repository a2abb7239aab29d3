/**
 * Folding for matching: needle and haystack are folded identically, per original
 * character (code point): lowercase, then Unicode canonical decomposition (NFD). Folding
 * per character keeps an exact folded→original map: every folded UTF-16 unit belongs to
 * exactly one original character, so a match in folded text maps back to whole original
 * characters, and highlight ranges are BYTE offsets into the ORIGINAL UTF-8 text (the
 * client never re-derives them). NFC and NFD spellings of the same text fold equal.
 * Speed: ASCII-only text folds with one native toLowerCase; mixed text lowercases its
 * ASCII runs natively and folds only non-ASCII runs per character (toLowerCase +
 * normalize, memoized per code point); foldWithMap fills typed arrays directly.
 */

const memo = new Map<number, string>();

/** Folds one code point. */
export function foldChar(cp: number): string {
  if (cp < 0x80) return String.fromCharCode(cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp);
  let f = memo.get(cp);
  if (f === undefined) {
    f = String.fromCodePoint(cp).toLowerCase().normalize("NFD");
    if (memo.size < 65_536) memo.set(cp, f);
  }
  return f;
}

/** Runs of non-ASCII units (the only part of mixed text folded per character). */
// deno-lint-ignore no-control-regex
const NON_ASCII_RUN = /[^\x00-\x7f]+/g;

/** Folds a whole string (no map): what the arena stores and needles are matched as. */
export function fold(text: string): string {
  // ASCII-only strings (the common case) fold with one native call.
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  // Mixed text: ASCII runs still lowercase natively (identical to per-char there); only
  // non-ASCII runs go character by character. Never lowercase a non-ASCII run as a whole:
  // context-sensitive rules (final sigma) would fold differently than per character.
  let out = "";
  let last = 0;
  NON_ASCII_RUN.lastIndex = 0;
  for (let m = NON_ASCII_RUN.exec(text); m !== null; m = NON_ASCII_RUN.exec(text)) {
    out += text.slice(last, m.index).toLowerCase();
    for (const ch of m[0]) out += foldChar(ch.codePointAt(0)!);
    last = NON_ASCII_RUN.lastIndex;
  }
  return out + text.slice(last).toLowerCase();
}

/** Folded text with, per folded UTF-16 unit, the original UTF-8 byte span of its character. */
export interface FoldMap {
  folded: string;
  /** byteStart[i] = UTF-8 offset of the original character that folded unit i came from. */
  byteStart: Uint32Array;
  /** byteEnd[i] = UTF-8 offset just after that character. */
  byteEnd: Uint32Array;
  /** Total UTF-8 length of the original. */
  byteLength: number;
}

/** Folds `text` keeping the exact map back to original byte offsets. */
export function foldWithMap(text: string): FoldMap {
  const folded = fold(text);
  const n = folded.length;
  const byteStart = new Uint32Array(n);
  const byteEnd = new Uint32Array(n);
  // ASCII: one unit, one byte, one folded unit per character (the common case for hits).
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) {
    for (let i = 0; i < n; i++) {
      byteStart[i] = i;
      byteEnd[i] = i + 1;
    }
    return { folded, byteStart, byteEnd, byteLength: n };
  }
  let k = 0;
  let byte = 0;
  for (let i = 0; i < text.length;) {
    // A lone surrogate is its own "character" (codePointAt returns it; UTF-8 writes U+FFFD, 3 bytes).
    const cp = text.codePointAt(i)!;
    const len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const units = cp < 0x80 ? 1 : foldChar(cp).length;
    for (let j = 0; j < units; j++, k++) {
      byteStart[k] = byte;
      byteEnd[k] = byte + len;
    }
    byte += len;
    i += cp > 0xffff ? 2 : 1;
  }
  return { folded, byteStart, byteEnd, byteLength: byte };
}

/**
 * Maps a match [from, to) in folded units to an original byte range covering whole
 * original characters.
 */
export function toByteRange(map: FoldMap, from: number, to: number): [number, number] {
  return [map.byteStart[from]!, map.byteEnd[to - 1]!];
}
