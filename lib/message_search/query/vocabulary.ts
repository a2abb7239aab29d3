/**
 * The index's vocabulary rule (issue 27): which folded UTF-16 units form tokens, how a
 * record's folded text splits into vocabulary entries, and which keys a needle is looked
 * up by. Pure, shared by the segment encoder (store/segment_terms.ts) and the query side
 * (lexicon and relevance), so both always split the same way.
 *
 * Token units: ASCII letters, digits and `_`, and every unit at or above U+0080 except the
 * separator ranges (Latin-1 punctuation U+0080–U+00BF, general punctuation and spaces
 * U+2000–U+206F, ideographic space and marks U+3000–U+3003, fullwidth punctuation
 * U+FF01–U+FF0F). Combining marks and Hangul jamo are token units, so the seed's boundary
 * rule (match.ts: a match may not end before a mark) reads the same inside an entry as in
 * the text. A token is a maximal run of token units.
 *
 * Entries: a token shorter than ENTRY_MAX units is one entry. A longer one (a hash, a
 * path glued by `_`, a CJK sentence) is stored as pieces of ENTRY_MAX units starting every
 * PIECE_STEP units, the last ending at the token's end, so the vocabulary never grows
 * with the longest token and every window of at most PIECE_STEP + 1 units of the token
 * lies inside one piece. An entry of exactly ENTRY_MAX units may be a piece: counts over
 * it are not exact, and readers that need exact counts use the text for it.
 *
 * Why this keeps the seed's substring semantics exactly: a needle occurs in a record only
 * if each maximal token run of the needle is a substring of a token of the record (a run
 * inside the needle is a whole token, the first and last may be parts). A run's first
 * KEY_MAX (= PIECE_STEP) units are then a substring of some entry of the record, so "the
 * entries containing every key" is a superset of the records holding the needle, never a
 * subset: `anemometer` still finds `anemometers`. A needle without token units (`->`) has
 * no keys and cannot be narrowed this way.
 */

/** Units of the longest entry (longer tokens are split into pieces). */
export const ENTRY_MAX = 64;
/** Distance between piece starts. */
export const PIECE_STEP = 32;
/** Units of a needle run used as its lookup key (a prefix of the run). */
export const KEY_MAX = PIECE_STEP;

/** True when UTF-16 unit `c` is part of a token. */
export function isTokenUnit(c: number): boolean {
  if (c < 0x80) {
    return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f ||
      (c >= 0x41 && c <= 0x5a);
  }
  if (c <= 0xbf) return false;
  if (c >= 0x2000 && c <= 0x206f) return false;
  if (c >= 0x3000 && c <= 0x3003) return false;
  if (c >= 0xff01 && c <= 0xff0f) return false;
  return true;
}

/** Calls `visit(start, end)` for every token of `s[from, to)`, in order. */
export function eachToken(
  s: string,
  visit: (start: number, end: number) => void,
  from = 0,
  to = s.length,
): void {
  let start = -1;
  for (let i = from; i < to; i++) {
    if (isTokenUnit(s.charCodeAt(i))) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      visit(start, i);
      start = -1;
    }
  }
  if (start >= 0) visit(start, to);
}

/** Calls `visit(start, end)` for every entry of the token `[start, end)` (see the header). */
export function eachEntry(
  start: number,
  end: number,
  visit: (start: number, end: number) => void,
): void {
  const len = end - start;
  if (len < ENTRY_MAX) {
    visit(start, end);
    return;
  }
  let s = start;
  for (; s + ENTRY_MAX < end; s += PIECE_STEP) visit(s, s + ENTRY_MAX);
  visit(end - ENTRY_MAX, end);
}

/**
 * The lookup keys of a folded needle: each maximal token run's first KEY_MAX units,
 * deduplicated, longest first (the most selective); null when the needle holds no token
 * unit (nothing to narrow by).
 */
export function needleKeys(needle: string): string[] | null {
  const keys = new Set<string>();
  eachToken(needle, (a, b) => keys.add(needle.slice(a, Math.min(b, a + KEY_MAX))));
  if (keys.size === 0) return null;
  return [...keys].sort((x, y) => y.length - x.length);
}

/**
 * True when every unit of folded `term` is a token unit and it is shorter than ENTRY_MAX:
 * its occurrences in a text are exactly its occurrences inside entries, so counts over a
 * segment's entries equal counts over its text.
 */
export function isEntryTerm(term: string): boolean {
  if (term.length === 0 || term.length >= ENTRY_MAX) return false;
  for (let i = 0; i < term.length; i++) if (!isTokenUnit(term.charCodeAt(i))) return false;
  return true;
}
