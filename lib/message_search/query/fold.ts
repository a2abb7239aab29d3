/**
 * Folding for matching: needle and haystack are folded identically, per original
 * character (code point): lowercase, then Unicode canonical decomposition (NFD). Folding
 * per character keeps an exact folded→original map: every folded UTF-16 unit belongs to
 * exactly one original character, so a match in folded text maps back to whole original
 * characters, and highlight ranges are BYTE offsets into the ORIGINAL UTF-8 text (the
 * client never re-derives them). NFC and NFD spellings of the same text fold equal.
 * The fast path (ASCII) is a table lookup; only non-ASCII characters pay for
 * toLowerCase + normalize, and their folds are memoized.
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

/** Folds a whole string (no map): what the arena stores and needles are matched as. */
export function fold(text: string): string {
  // ASCII-only strings (the common case) fold with one native call.
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  let out = "";
  for (const ch of text) out += foldChar(ch.codePointAt(0)!);
  return out;
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
  const starts: number[] = [];
  const ends: number[] = [];
  let folded = "";
  let byte = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const f = foldChar(cp);
    folded += f;
    for (let i = 0; i < f.length; i++) {
      starts.push(byte);
      ends.push(byte + len);
    }
    byte += len;
  }
  return {
    folded,
    byteStart: Uint32Array.from(starts),
    byteEnd: Uint32Array.from(ends),
    byteLength: byte,
  };
}

/**
 * Maps a match [from, to) in folded units to an original byte range covering whole
 * original characters.
 */
export function toByteRange(map: FoldMap, from: number, to: number): [number, number] {
  return [map.byteStart[from]!, map.byteEnd[to - 1]!];
}
