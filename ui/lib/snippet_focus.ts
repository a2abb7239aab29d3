/**
 * What a result card (and a palette option) shows of a hit's snippet: the lines around its
 * first highlight. Cards clamp a snippet to a few lines (4 in the lane, 2 in the palette);
 * the server's window is up to 280 bytes, and in a list or a code block that is a dozen
 * short lines, so a match on line 8 fell below the clamp and the card showed no highlight
 * at all. focusSnippet starts the shown text at the line before the first highlight's (or
 * at its own line when the line before is blank or long), and inside the line at a word
 * edge when even that leaves more than `leadChars` characters before the highlight: the
 * highlight then sits on the first or second visual line whatever the card's width.
 *
 * It works on the text as shown — after masking (lib/masking.ts moved the highlights onto
 * the masked text) — and only drops a prefix, so every range keeps covering exactly the
 * characters it covered: each mark's text is unchanged. A cut start is said with a leading
 * "…" (as a snippet that starts inside its message already is), and a snippet that stops
 * before its message ends (`snippet_cut_end`) gets a trailing "…". Pure; never throws.
 */
import type { IndexRange } from "./highlight.ts";
import { type ShownSnippet, shownSnippet } from "./masking.ts";

/** Characters a card keeps before the first highlight, at most (about two phone lines). */
export const CARD_LEAD_CHARS = 80;
/** The palette's snippet is two lines: at most one line of lead. */
export const PALETTE_LEAD_CHARS = 40;

/** A snippet window that starts near its first highlight. */
export interface FocusedSnippet {
  text: string;
  ranges: IndexRange[];
  /** True when a prefix was dropped (the caller shows "…"). */
  cutStart: boolean;
}

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r";

/** Where a line-internal cut may start: after whitespace near `from`, never inside a pair. */
function wordStart(text: string, from: number, limit: number): number {
  for (let i = from; i < limit; i++) if (isSpace(text[i - 1])) return i;
  // One long token (a URL, CJK text without spaces): cut on a whole code point.
  const c = text.charCodeAt(from);
  return c >= 0xdc00 && c <= 0xdfff ? from + 1 : from;
}

/** `s` starting near its first highlight (see the module header). */
export function focusSnippet(s: ShownSnippet, leadChars = CARD_LEAD_CHARS): FocusedSnippet {
  const first = s.ranges[0];
  if (!first || first[0] === 0) return { text: s.text, ranges: s.ranges, cutStart: false };
  const h = first[0];
  const { text } = s;
  const lineStart = text.lastIndexOf("\n", h - 1) + 1;
  let start = lineStart;
  if (lineStart > 0) {
    const prevStart = lineStart >= 2 ? text.lastIndexOf("\n", lineStart - 2) + 1 : 0;
    const prev = text.slice(prevStart, lineStart - 1);
    if (prev.trim() !== "" && h - prevStart <= leadChars) start = prevStart;
  }
  if (h - start > leadChars) start = wordStart(text, h - leadChars, h);
  if (start <= 0) return { text, ranges: s.ranges, cutStart: false };
  return {
    text: text.slice(start),
    ranges: s.ranges.map(([a, b]): IndexRange => [Math.max(0, a - start), b - start])
      .filter(([a, b]) => b > a),
    cutStart: true,
  };
}

/** A hit's snippet as a card shows it: masked when `mask`, focused, with its "…" edges. */
export interface CardSnippet extends FocusedSnippet {
  lead: string;
  tail: string;
}

/** The shown snippet of `hit` (see the module header). */
export function cardSnippet(
  hit: {
    snippet: string;
    snippet_offset_bytes: number;
    ranges: readonly [number, number][];
    snippet_cut_end?: boolean;
  },
  mask: boolean,
  leadChars = CARD_LEAD_CHARS,
): CardSnippet {
  const f = focusSnippet(shownSnippet(hit, mask), leadChars);
  return {
    ...f,
    lead: f.cutStart || hit.snippet_offset_bytes > 0 ? "…" : "",
    tail: hit.snippet_cut_end === true ? "…" : "",
  };
}
