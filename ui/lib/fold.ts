/**
 * Client-side folded matching, the server's rules in miniature: per character, simple
 * lowercase then canonical decomposition (NFD), so "café" typed (NFC) matches "cafe\u0301"
 * (NFD) and "CAFÉ". Used where the client matches on its own: the metadata lane (names,
 * titles, projects, ids of loaded sessions) and in-entry highlighting after jump-to-hit,
 * where the server gave an anchor but no ranges. Each folded unit remembers the original
 * character it came from, so a folded match maps back to whole original characters.
 * Pure; never throws.
 */
import type { IndexRange } from "./highlight.ts";
import { mergeRanges } from "./highlight.ts";

/** A folded string and, per folded UTF-16 unit, the original character's [start, end). */
export interface Folded {
  text: string;
  starts: number[];
  ends: number[];
}

/** Folds one string (see the module header). */
export function foldText(s: string): string {
  let out = "";
  for (const ch of s) out += ch.toLowerCase().normalize("NFD");
  return out;
}

/** Folds `s` keeping the map back to original indices. */
export function foldWithMap(s: string): Folded {
  let text = "";
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  for (const ch of s) {
    const f = ch.toLowerCase().normalize("NFD");
    for (let k = 0; k < f.length; k++) {
      starts.push(i);
      ends.push(i + ch.length);
    }
    text += f;
    i += ch.length;
  }
  return { text, starts, ends };
}

/** Shortest needle the server searches for, in code points (its MIN_NEEDLE_CHARS). */
export const MIN_TERM_CHARS = 2;

/**
 * The one-character needles the server accepts all the same: a single Han, Hiragana,
 * Katakana or Hangul character (in NFC) is a word in Chinese, Japanese or Korean (龍,
 * 猫, 한), not the noise a lone Latin letter is. Mirrors the server's rule.
 */
const CJK_CHAR = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]$/u;

/** True when `term` is long enough to search for (MIN_TERM_CHARS, or one CJK character). */
export function searchableTerm(term: string, minChars = MIN_TERM_CHARS): boolean {
  const cps = [...term.normalize("NFC")];
  return cps.length >= minChars || (cps.length === 1 && CJK_CHAR.test(cps[0]!));
}

/**
 * The needles of a query as the server reads it: `"…"` is one phrase (an unterminated
 * quote runs to the end), every other whitespace-separated word is its own needle
 * (ANDed); terms shorter than `minChars` are dropped unless they are one CJK character
 * (the server drops other one-character terms; the metadata lane, matching client-side,
 * keeps them with minChars 1).
 */
export function queryTerms(q: string, minChars = MIN_TERM_CHARS): string[] {
  const out: string[] = [];
  for (const m of q.matchAll(/"([^"]*)"?|([^\s"]+)/g)) {
    const t = (m[1] ?? m[2] ?? "").trim();
    if (t && searchableTerm(t, minChars)) out.push(t);
  }
  return out;
}

/** Every occurrence of every term in `text`, as merged UTF-16 ranges of the original. */
export function findTerms(text: string, terms: readonly string[]): IndexRange[] {
  if (!terms.length || !text) return [];
  const f = foldWithMap(text);
  const out: IndexRange[] = [];
  for (const term of terms) {
    const needle = foldText(term);
    if (!needle) continue;
    for (let at = f.text.indexOf(needle); at >= 0; at = f.text.indexOf(needle, at + 1)) {
      out.push([f.starts[at]!, f.ends[at + needle.length - 1]!]);
    }
  }
  return mergeRanges(out);
}

/** True when every term occurs (folded) in `haystackFolded` (already folded). */
export function matchesAll(haystackFolded: string, terms: readonly string[]): boolean {
  return terms.every((t) => haystackFolded.includes(foldText(t)));
}
