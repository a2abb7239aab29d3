/**
 * Term counts from a segment's term dictionary (store TERMS, issue 27): how often a term
 * occurs in each record, computed from the vocabulary and postings alone, equal to what
 * matching the record's folded text would count (findValid, non-overlapping, the boundary
 * rule). Exact because a term made only of token units never crosses an entry's edge
 * (vocabulary.ts isEntryTerm): its occurrences in a record are its occurrences inside the
 * record's entries, times each entry's tf. The exception is an entry of ENTRY_MAX units,
 * which may be a piece of a longer token (pieces overlap): a term found in one is not
 * counted here (null), and the caller matches the text instead.
 * Also the accent-insensitive form: the same walk with a regex (question.ts bareRegex).
 */
import type { TermsView } from "../store/mod.ts";
import { continuesCharacter } from "./match.ts";
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
 * Accent-insensitive occurrences (`re` from bareRegex, global) per record, with the same
 * rule as the text matcher: a match may not end inside a character unless what follows
 * is a mark. Null as termCounts.
 */
export function bareCounts(t: TermsView, re: RegExp): RecordCounts | null {
  const v = t.vocab();
  const out: RecordCounts = new Map();
  let k = -1;
  let times = 0;
  re.lastIndex = 0;
  for (let m = re.exec(v); m !== null; m = re.exec(v)) {
    const end = m.index + m[0].length;
    if (m[0].length === 0) {
      // Past the whole code point: a /u regex resumed inside a pair restarts at its start.
      re.lastIndex += (v.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1;
      continue;
    }
    if (continuesCharacter(v, end) && !MARK.test(v[end] ?? "")) continue;
    const e = t.entryAt(m.index);
    if (e !== k) {
      if (k >= 0 && times > 0 && !addEntry(t, k, times, out)) return null;
      k = e;
      times = 0;
    }
    times++;
  }
  if (k >= 0 && times > 0 && !addEntry(t, k, times, out)) return null;
  return out;
}
