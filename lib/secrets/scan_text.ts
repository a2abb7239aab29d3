/**
 * The text the rules scan: the original with terminal escapes taken out, and the map
 * back to the original's offsets. A key wrapped in colour codes (`\x1b[32msk-proj-…\x1b[0m`,
 * or the same JSON-escaped in a transcript line: `\u001b[32m…`) was invisible to the
 * rules (the `m` before the key is a word character, so no rule's left edge matched) while
 * every surface that strips escapes for display then showed it whole (H3). So escapes are
 * removed BEFORE matching, everywhere the masker runs.
 * What counts as an escape: the real ones (ESC/CSI/OSC/… sequences and stray C0/C1
 * controls but TAB/LF/CR, as lib/text strips them for the terminal) and their textual
 * spellings in JSON and source code (`\u001b[…m`, `\x1b[…m`, `\033[…m`, `\e[…m`, and the
 * `\u009b` 8-bit CSI). `latin1`: the text is bytes read one char per byte (the report
 * zip's streaming masker), where 0x80–0x9F are UTF-8 continuation bytes, not C1 controls:
 * only 7-bit escapes and C0 controls are taken out then (an "8-bit OSC" there would be
 * the middle of `ŝ` and would swallow the rest of its line).
 * Invariant: `toOriginal(i)` maps an offset of `clean` to the offset of the same
 * character in the original; a span [a, b) of `clean` maps to [toOriginal(a),
 * toOriginalEnd(b)), which covers every escape inside it. Clean text (the common case)
 * costs one regex test and no copy.
 */

// Real escapes: CSI (7- and 8-bit), control strings (OSC, DCS, … to BEL or ST), other
// ESC sequences; then C0/C1 controls but TAB, LF and CR (kept: they separate words).
// Textual escapes: the JSON/JS/shell spellings of ESC or CSI followed by a CSI body.
const ESCAPE_RE =
  // deno-lint-ignore no-control-regex
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|(?:\\u001[bB]|\\x1[bB]|\\033|\\e)\[[0-9;?]*[ -\/]*[@-~]|\\u009[bB][0-9;?]*[ -\/]*[@-~]/g;
// The same without the 8-bit forms, for bytes read as latin1 (see the header).
const ESCAPE_RE_LATIN1 =
  // deno-lint-ignore no-control-regex
  /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|\x1b[\]PX^_][^\x00-\x1f\x7f]*(?:\x07|\x1b\\)?|\x1b[\x20-\x2f]*[\x30-\x7e]?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|(?:\\u001[bB]|\\x1[bB]|\\033|\\e)\[[0-9;?]*[ -\/]*[@-~]/g;
// deno-lint-ignore no-control-regex
const MAYBE_ESCAPE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\\(?:u00|x1|033|e\[)/i;

/** A text prepared for the rules. */
export interface ScanText {
  clean: string;
  /** Original offset of `clean[i]` (i = clean.length: the original's length). */
  toOriginal(i: number): number;
  /** Original offset just after `clean[i - 1]` (the end of a span ending at i). */
  toOriginalEnd(i: number): number;
}

const IDENTITY = (i: number) => i;

/** `text` without escapes, with the offset map (see the header). */
export function scanTextOf(text: string, o: { latin1?: boolean } = {}): ScanText {
  if (!MAYBE_ESCAPE.test(text)) {
    return { clean: text, toOriginal: IDENTITY, toOriginalEnd: IDENTITY };
  }
  const re = o.latin1 ? ESCAPE_RE_LATIN1 : ESCAPE_RE;
  // Each cut: the clean offset where a removal happened, and the characters removed so far.
  const cuts: { at: number; shift: number }[] = [];
  let clean = "";
  let last = 0;
  let shift = 0;
  re.lastIndex = 0;
  for (const m of text.matchAll(re)) {
    if (m[0].length === 0) continue;
    clean += text.slice(last, m.index);
    shift += m[0].length;
    cuts.push({ at: clean.length, shift });
    last = m.index! + m[0].length;
  }
  if (cuts.length === 0) return { clean: text, toOriginal: IDENTITY, toOriginalEnd: IDENTITY };
  clean += text.slice(last);
  /** Characters removed before clean offset i (removals AT i count when `atToo`). */
  const removedBefore = (i: number, atToo: boolean): number => {
    let lo = 0, hi = cuts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (atToo ? cuts[mid]!.at <= i : cuts[mid]!.at < i) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : cuts[lo - 1]!.shift;
  };
  return {
    clean,
    // A character at clean offset i comes after every removal made at or before i.
    toOriginal: (i) => i + removedBefore(i, true),
    // A span ending at i ends after the character i - 1: removals at i are outside it.
    toOriginalEnd: (i) => i + removedBefore(i, false),
  };
}
