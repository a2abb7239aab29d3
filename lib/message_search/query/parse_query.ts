/**
 * Query syntax: whitespace-separated words are ANDed within ONE message; `"a quoted
 * phrase"` is one needle, spaces included (an unterminated quote runs to the end). Every
 * needle is folded with fold(), exactly like the haystack, so a single word behaves as
 * the spec's folded substring. Words shorter than MIN_NEEDLE_CHARS characters are dropped
 * when a longer one remains (a one-letter AND term would match nearly every message and
 * the dashboard only queries from two characters); a query with no usable needle is a
 * RangeError the route answers with 400. Error messages never quote the query (q is never
 * logged, and an error message can reach a log). NUL never reaches a needle: the arena separates
 * records with it, so a needle containing it could match across two records.
 */
import { fold } from "./fold.ts";

/** Shortest needle, in characters (code points of the NFC form); one CJK character is enough. */
export const MIN_NEEDLE_CHARS = 2;

/** Han, kana and Hangul: scripts where one character carries a word's meaning. */
const CJK_CHAR_RE = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]$/u;

/** True when `token` (raw) is long enough to be a needle. */
export function isSearchableToken(token: string): boolean {
  const chars = [...token.normalize("NFC")];
  return chars.length >= MIN_NEEDLE_CHARS || (chars.length === 1 && CJK_CHAR_RE.test(chars[0]!));
}
/** Longest raw query accepted, in UTF-16 units. */
export const QUERY_MAX_CHARS = 1000;
/** Most needles one query may AND. */
export const NEEDLES_MAX = 16;

/** A parsed query. */
export interface ParsedQuery {
  /** Folded needles, duplicates removed, in query order. Never empty. */
  needles: string[];
}

/** Splits `q` into words and quoted phrases (raw, unfolded, non-empty). */
export function tokenize(q: string): string[] {
  const s = q.replaceAll("\u0000", " ");
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      const close = s.indexOf('"', i + 1);
      const end = close < 0 ? s.length : close;
      const phrase = s.slice(i + 1, end).trim();
      if (phrase !== "") out.push(phrase);
      i = end + 1;
      continue;
    }
    let j = i;
    while (j < s.length && s[j] !== '"' && !/\s/.test(s[j]!)) j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

/** Parses and folds a raw query; RangeError when nothing searchable remains. */
export function parseQuery(q: string): ParsedQuery {
  if (typeof q !== "string") throw new TypeError(`Query must be a string: got "${typeof q}"`);
  if (q.length > QUERY_MAX_CHARS) {
    throw new RangeError(
      `Query is too long: ${q.length} characters; shorten it to at most ${QUERY_MAX_CHARS}`,
    );
  }
  const tokens = tokenize(q);
  if (tokens.length === 0) throw new RangeError("Query is empty: type a word to search for");
  const needles: string[] = [];
  for (const t of tokens) {
    if (!isSearchableToken(t)) continue;
    const n = fold(t);
    if (!needles.includes(n)) needles.push(n);
  }
  if (needles.length === 0) {
    throw new RangeError(
      `Query has no searchable word: type at least ${MIN_NEEDLE_CHARS} characters ` +
        `(one is enough for a Chinese, Japanese or Korean character)`,
    );
  }
  if (needles.length > NEEDLES_MAX) {
    throw new RangeError(
      `Query has ${needles.length} terms, at most ${NEEDLES_MAX}: drop some words, or quote a phrase`,
    );
  }
  return { needles };
}
