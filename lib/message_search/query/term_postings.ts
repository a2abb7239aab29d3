/**
 * Term counts from a segment's term dictionary (store TERMS, issue 27): how often a term
 * occurs in each record, computed from the vocabulary and postings alone, equal to what
 * matching the record's folded text would count (findValid, non-overlapping, the boundary
 * rule). Exact because a term made only of token units never crosses an entry's edge
 * (vocabulary.ts isEntryTerm): its occurrences in a record are its occurrences inside the
 * record's entries, times each entry's tf. The exception is an entry of ENTRY_MAX units,
 * which may be a piece of a longer token (pieces overlap): a term found in one is not
 * counted here (null), and the caller matches the text instead.
 * Also the accent-insensitive form: the same walk with a regex (question.ts bareRegex)
 * over the entries that hold a mark, and a plain substring search over the others.
 */
import type { TermsView } from "../store/mod.ts";
import { continuesCharacter, isMarkAt } from "./match.ts";
import { ENTRY_MAX } from "./vocabulary.ts";

/** Per record: occurrences (records without any are absent). */
export type RecordCounts = Map<number, number>;

const MARK = /\p{M}/u;

/** Adds entry k's postings × `times` into `into`; false when k may be a piece. */
function addEntry(t: TermsView, k: number, times: number, into: RecordCounts): boolean {
  if (t.entryEnd(k) - t.entryStart(k) >= ENTRY_MAX) return false;
  t.eachPosting(k, (rec, tf) => into.set(rec, (into.get(rec) ?? 0) + tf * times));
  return true;
}

/**
 * Occurrences of folded `term` (an entry term: vocabulary.ts isEntryTerm) per record, or
 * null when some entry holding it may be a piece (count it over the text instead).
 */
export function termCounts(t: TermsView, term: string): RecordCounts | null {
  const v = t.vocab();
  const out: RecordCounts = new Map();
  let k = -1;
  let times = 0;
  const flush = () => {
    if (k >= 0 && times > 0 && !addEntry(t, k, times, out)) return false;
    return true;
  };
  for (let p = v.indexOf(term); p >= 0;) {
    const end = p + term.length;
    const e = t.entryAt(p);
    if (e !== k) {
      if (!flush()) return null;
      k = e;
      times = 0;
    }
    if (!continuesCharacter(v, end)) {
      times++;
      p = v.indexOf(term, end);
    } else p = v.indexOf(term, p + 1);
  }
  return flush() ? out : null;
}

/**
 * The entries of a segment's vocabulary that hold a combining mark, found once per view
 * (the view is resident in the arena, so a query pays this once, not per term): their
 * indices, and their texts joined by NUL with where each starts, so an accent-insensitive
 * regex runs over them only. Outside them a bare form is a plain substring (below).
 */
interface MarkedEntries {
  ids: Uint32Array;
  /** Start of ids[m] in `text`. */
  starts: Uint32Array;
  text: string;
  /** Per entry of the view: 1 when it is marked. */
  isMarked: Uint8Array;
}

const markedCache = new WeakMap<TermsView, MarkedEntries>();

function markedOf(t: TermsView): MarkedEntries {
  let m = markedCache.get(t);
  if (m) return m;
  const v = t.vocab();
  const isMarked = new Uint8Array(t.size);
  const ids: number[] = [];
  // A unit loop with the mark table (a \p{M} regex over the vocabulary cost a sixth of a
  // broad relevance query).
  for (let i = 0; i < v.length; i++) {
    if (v.charCodeAt(i) < 0x300 || !isMarkAt(v, i)) continue;
    const k = t.entryAt(i);
    isMarked[k] = 1;
    ids.push(k);
    i = t.entryEnd(k); // the rest of this entry cannot add anything
  }
  const parts: string[] = [];
  const starts = new Uint32Array(ids.length);
  let at = 0;
  for (let j = 0; j < ids.length; j++) {
    starts[j] = at;
    const e = t.entry(ids[j]!);
    parts.push(e);
    at += e.length + 1;
  }
  m = { ids: Uint32Array.from(ids), starts, text: parts.join("\u0000"), isMarked };
  markedCache.set(t, m);
  return m;
}

/** True when some entry of the view holds a combining mark. */
export function hasMarkedEntries(t: TermsView): boolean {
  return markedOf(t).ids.length > 0;
}

/**
 * Accent-insensitive occurrences (`re` from bareRegex, global) per record, with the same
 * rule as the text matcher: a match may not end inside a character unless what follows
 * is a mark. Null as termCounts.
 *
 * The regex runs over the marked entries only. In an entry without a mark the regex is
 * the literal `literal` (the bare text: it has no mark either), so there its matches are
 * found with indexOf, resuming where the regex would (after a match, counted or not);
 * `literal` null — the caller knows those matches are counted as exact ones already (an
 * unaccented query word) — skips the unmarked entries.
 */
export function bareCounts(t: TermsView, re: RegExp, literal: string | null): RecordCounts | null {
  const mk = markedOf(t);
  const out: RecordCounts = new Map();
  const tally = new Map<number, number>(); // entry → matches
  const text = mk.text;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const end = m.index + m[0].length;
    if (m[0].length === 0) {
      // Past the whole code point: a /u regex resumed inside a pair restarts at its start.
      re.lastIndex += (text.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1;
      continue;
    }
    if (continuesCharacter(text, end) && !MARK.test(text[end] ?? "")) continue;
    const k = mk.ids[upperBound(mk.starts, m.index) - 1]!;
    tally.set(k, (tally.get(k) ?? 0) + 1);
  }
  if (literal !== null && literal.length > 0) {
    const v = t.vocab();
    let p = v.indexOf(literal);
    while (p >= 0) {
      const end = p + literal.length;
      const k = t.entryAt(p);
      if (mk.isMarked[k] === 1) {
        p = v.indexOf(literal, t.entryEnd(k)); // counted by the regex: on past this entry
        continue;
      }
      // A /u regex never starts or ends a match inside a surrogate pair: it looks on from
      // the next position; any other match is taken and it resumes at its end.
      if (
        (p > 0 && isLow(v.charCodeAt(p)) && isHigh(v.charCodeAt(p - 1))) ||
        (isHigh(v.charCodeAt(end - 1)) && isLow(v.charCodeAt(end)))
      ) {
        p = v.indexOf(literal, p + 1);
        continue;
      }
      if (!continuesCharacter(v, end)) tally.set(k, (tally.get(k) ?? 0) + 1);
      p = v.indexOf(literal, end);
    }
  }
  for (const [k, times] of tally) if (!addEntry(t, k, times, out)) return null;
  return out;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** First index whose value is greater than `x` (`a` ascending). */
function upperBound(a: Uint32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
