/**
 * Needle matching over folded text. A match is a folded substring that does not end in
 * the middle of a decomposed character: the folded unit right after it must not be a
 * combining mark (\p{M}) or a Hangul medial/final jamo (U+1160–U+11FF, what NFD splits a
 * syllable into). So "cafe" never matches "café" (folded "cafe\u0301") in either spelling
 * while "café" matches both, and "가" does not match inside "각". A rejected position is
 * skipped by one unit and the search goes on, so a later valid match is still found.
 * Everything here is synchronous; the inner loop is indexOf plus one table lookup per
 * candidate position, and the only allocation is one result array per block.
 * findValid/allMatches take a third positional argument on purpose: they are
 * String.prototype.indexOf(needle, from) with the boundary rule.
 */

/** First Hangul medial vowel jamo; everything up to HANGUL_JAMO_LAST continues a syllable. */
const HANGUL_JAMO_FIRST = 0x1160;
const HANGUL_JAMO_LAST = 0x11ff;
/** Below U+0300 (the first combining mark) no BMP unit is a mark. */
const FIRST_MARK = 0x300;

let bmpMarks: Uint8Array | null = null;

/** 1 per BMP code unit that is \p{M}; built once on first non-ASCII use (~65k tests). */
function marksTable(): Uint8Array {
  if (bmpMarks) return bmpMarks;
  const t = new Uint8Array(0x10000);
  const re = /^\p{M}$/u;
  for (let c = FIRST_MARK; c < 0x10000; c++) {
    // Lone surrogates are not marks; astral marks are checked by code point below.
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (re.test(String.fromCharCode(c))) t[c] = 1;
  }
  bmpMarks = t;
  return t;
}

/** True when the code point starting at `at` is a combining mark (\p{M}). */
export function isMarkAt(s: string, at: number): boolean {
  const c = s.charCodeAt(at);
  if (c < FIRST_MARK) return false;
  if (c >= 0xd800 && c <= 0xdbff) return /^\p{M}$/u.test(String.fromCodePoint(s.codePointAt(at)!));
  return marksTable()[c] === 1;
}

/** True when the unit at `at` continues the character before it (mark or medial/final jamo). */
export function continuesCharacter(s: string, at: number): boolean {
  if (at >= s.length) return false;
  const c = s.charCodeAt(at);
  if (c < FIRST_MARK) return false;
  if (c >= HANGUL_JAMO_FIRST && c <= HANGUL_JAMO_LAST) return true;
  if (c >= 0xd800 && c <= 0xdbff) return /^\p{M}$/u.test(String.fromCodePoint(s.codePointAt(at)!));
  return marksTable()[c] === 1;
}

/** Start of the first valid match of `needle` in `s` at or after `from`, or -1. */
export function findValid(s: string, needle: string, from: number): number {
  const len = needle.length;
  let p = s.indexOf(needle, from);
  while (p >= 0 && continuesCharacter(s, p + len)) p = s.indexOf(needle, p + 1);
  return p;
}

/** Every valid match start of `needle` in `s`, non-overlapping, at most `max`. */
export function allMatches(s: string, needle: string, max: number): number[] {
  const out: number[] = [];
  for (let p = findValid(s, needle, 0); p >= 0 && out.length < max;) {
    out.push(p);
    p = findValid(s, needle, p + needle.length);
  }
  return out;
}

/** The records of one block: folded text plus each record's [start, end) within it. */
export interface BlockView {
  text: string;
  /** Absolute index of the block's first record and one past its last. */
  first: number;
  last: number;
  recStart: Uint32Array;
  recEnd: Uint32Array;
}

/** Index of the record (in [first, last)) whose span contains `pos`. */
export function recordAt(b: Pick<BlockView, "first" | "last" | "recStart">, pos: number): number {
  let lo = b.first;
  let hi = b.last - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (b.recStart[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Every record of the block containing ALL needles (each once, ascending). A leapfrog
 * join: each needle keeps its next known position, and whenever one needle's next
 * occurrence lies past the candidate record, the candidate jumps to the record holding
 * it: records in between lack that needle, so no other needle is searched there. Every
 * needle's text is scanned at most once per block, and for needles that rarely meet
 * (an AND of two 1% words) most of the block is scanned by only one of them.
 */
export function matchBlock(b: BlockView, needles: readonly string[]): number[] {
  const out: number[] = [];
  const s = b.text;
  const k = needles.length;
  // next[j]: next valid position of needles[j] at or after the last search start; -2 =
  // not searched yet.
  const next = new Array<number>(k).fill(-2);
  // Candidate record: the first one not yet ruled out starts at or after `from`.
  let from = 0;
  for (;;) {
    let r = -1;
    let start = 0;
    let end = 0;
    let j = 0;
    // Round-robin over the needles until all of them land in one record (`agree` of
    // them in a row) or one runs out.
    for (let agree = 0; agree < k; j = (j + 1) % k) {
      let p = next[j]!;
      if (p === -2 || (p >= 0 && p < from)) next[j] = p = findValid(s, needles[j]!, from);
      // This needle does not occur again in the block: no later record can match.
      if (p < 0) return out;
      if (r >= 0 && p + needles[j]!.length <= end) {
        agree++;
        continue;
      }
      // Past the candidate (or the first needle looked at): its record is the new one.
      r = recordAt(b, p);
      start = b.recStart[r]!;
      end = b.recEnd[r]!;
      if (p + needles[j]!.length > end) {
        // Cannot happen for valid positions (needles hold no NUL), kept as a guard: the
        // match would span the separator, so move past this record.
        from = end + 1;
        r = -1;
        agree = 0;
        continue;
      }
      from = start;
      agree = 1;
    }
    out.push(r);
    // The separator after `end` cannot start a needle (needles never contain NUL).
    from = end + 1;
  }
}
