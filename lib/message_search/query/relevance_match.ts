/**
 * Matching for the relevance scan (relevance_scan.ts): a question's terms, each with its
 * matchable forms (exact, suffix-folded, accent-insensitive), counted per record of a
 * session's resident segments — from each segment's term dictionary where the form is
 * made of token units (term_postings.ts: the vocabulary and postings, no record
 * decoded), from the text of the blocks the trigram filters let through otherwise. The
 * rules of what matches are in relevance_scan.ts's header; this module only counts.
 */
import type { SegmentView } from "../store/mod.ts";
import { continuesCharacter, findValid, recordAt } from "./match.ts";
import { bareRegex, type Question } from "./question.ts";
import { bareCounts, hasMarkedEntries, type RecordCounts, termCounts } from "./term_postings.ts";
import { needleTrigrams } from "./trigram.ts";
import { isEntryTerm } from "./vocabulary.ts";

/** One matched record, waiting for the corpus statistics. */
export interface MatchedRecord {
  entry: SegmentView;
  seg: number;
  i: number;
  ts: number;
  superseded: boolean;
  len: number;
  /** Per term: exact occurrences; loose occurrences (only counted when no exact one). */
  exact: Uint16Array;
  loose: Uint16Array;
}

/** A record's key in an accumulator: segment s of the session, record i of the segment. */
export function recordKey(s: number, i: number): number {
  return s * 0x4000_0000 + i;
}

/** One term's matchable forms. */
export interface TermForms {
  exact: string;
  exactTri: Uint32Array | null;
  stem: string | null;
  stemTri: Uint32Array | null;
  /** Accent-insensitive matcher (marks skipped), or null for a phrase. */
  bare: RegExp | null;
  /** The accent-insensitive form's text (marks removed), or null for a phrase. */
  bareText: string | null;
  /** The bare form's trigrams when it is also matchable by the filter (no marks in it). */
  bareTri: Uint32Array | null;
  /** The query word itself had accents (its bare form differs from its exact one). */
  bareDiffers: boolean;
  /** Each form is an entry term (vocabulary.ts): the term dictionary counts it. */
  exactEntry: boolean;
  stemEntry: boolean;
  bareEntry: boolean;
}

const MARK = /\p{M}/u;

export function formsOf(q: Question): TermForms[] {
  return q.terms.map((t) => {
    const bareText = t.phrase ? null : (t.bare ?? t.text);
    const bare = bareText === null ? null : bareRegex(bareText);
    return {
      exact: t.text,
      exactTri: needleTrigrams(t.text),
      stem: t.stem,
      stemTri: t.stem ? needleTrigrams(t.stem) : null,
      bare,
      bareText,
      bareTri: bareText !== null && !MARK.test(bareText) ? needleTrigrams(bareText) : null,
      bareDiffers: t.bare !== null,
      exactEntry: isEntryTerm(t.text),
      stemEntry: t.stem !== null && isEntryTerm(t.stem),
      bareEntry: bareText !== null && isEntryTerm(bareText),
    };
  });
}

/** Counts matches of `needle` per record of a block into `into[record - first]`. */
function countExact(
  text: string,
  needle: string,
  b: { first: number; last: number; recStart: Uint32Array },
  bump: (rec: number) => void,
): void {
  for (let p = findValid(text, needle, 0); p >= 0; p = findValid(text, needle, p + needle.length)) {
    bump(recordAt(b, p));
  }
}

/** Counts accent-insensitive matches (a match may not end inside a character). */
function countBare(
  text: string,
  re: RegExp,
  b: { first: number; last: number; recStart: Uint32Array },
  bump: (rec: number) => void,
): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const end = m.index + m[0].length;
    if (!continuesCharacter(text, end) || MARK.test(text[end] ?? "")) {
      bump(recordAt(b, m.index));
    }
    // Past the whole code point: a /u regex resumed inside a pair restarts at its start.
    if (m[0].length === 0) re.lastIndex += (text.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1;
  }
}

function mayContain(e: SegmentView, b: number, tri: Uint32Array | null): boolean {
  return tri === null || e.blockMayContain(b, tri);
}

/** Which forms of each term still need the text (the dictionary could not count them). */
interface TextNeeds {
  exact: boolean[];
  stem: boolean[];
  bare: boolean[];
  any: boolean;
}

/**
 * Counts what segment `e`'s term dictionary can count (store TERMS, term_postings.ts):
 * every form that is an entry term, unless an entry holding it may be a piece. The rest is
 * returned as text needs. `bareToo` false: the bare forms were counted by the main pass.
 */
function countFromDictionary(
  e: SegmentView,
  o: { forms: TermForms[]; only?: ReadonlySet<number>; bareToo: boolean },
  add: (kind: "exact" | "loose", j: number, counts: RecordCounts) => void,
): TextNeeds {
  const n = o.forms.length;
  const need: TextNeeds = {
    exact: new Array(n).fill(false),
    stem: new Array(n).fill(false),
    bare: new Array(n).fill(false),
    any: false,
  };
  const t = e.terms();
  for (let j = 0; j < n; j++) {
    if (o.only !== undefined && !o.only.has(j)) continue;
    const f = o.forms[j]!;
    if (o.only === undefined) {
      const ex = f.exactEntry ? termCounts(t, f.exact) : null;
      if (ex !== null) add("exact", j, ex);
      else need.exact[j] = need.any = true;
      if (f.stem !== null) {
        const st = f.stemEntry ? termCounts(t, f.stem) : null;
        if (st !== null) add("loose", j, st);
        else need.stem[j] = need.any = true;
      }
    }
    // Without a mark in the vocabulary, an unaccented word's bare matches are its exact ones.
    if (f.bare === null || (!f.bareDiffers && !hasMarkedEntries(t))) continue;
    // An unaccented word's bare matches outside the marked entries are its exact ones
    // (counted above): bareCounts looks only inside them (literal null).
    const bare = f.bareEntry ? bareCounts(t, f.bare, f.bareDiffers ? f.bareText : null) : null;
    // Counted by the main pass already (bareToo false): only a text need is news.
    if (bare !== null) {
      if (o.bareToo) add("loose", j, bare);
    } else need.bare[j] = need.any = true;
  }
  return need;
}

/**
 * Matches one session's resident segments against the terms: from each segment's term
 * dictionary where it can, from the text of the blocks that may hold a form otherwise;
 * `only` (the accent-insensitive fallback pass) looks for those terms' bare forms, in
 * every block. Records are accumulated into `acc` keyed by segment and index.
 */
export function matchSessionTerms(
  entries: readonly SegmentView[],
  active: Uint8Array[] | null,
  o: {
    forms: TermForms[];
    from: number;
    to: number;
    roleMask: number;
    includeSuperseded: boolean;
    /** Keyed by recordKey(segment, index). */
    acc: Map<number, MatchedRecord>;
    only?: ReadonlySet<number>;
    /** What the main pass did (`seg:block`, `seg:dict`): recorded there, skipped by a fallback. */
    done: Set<string>;
  },
): void {
  const n = o.forms.length;
  for (let s = 0; s < entries.length; s++) {
    const e = entries[s]!;
    if (e.count === 0 || e.maxTs < o.from || e.minTs > o.to) continue;
    if ((e.roleMask & o.roleMask) === 0) continue;
    const act = active?.[s];
    const recOf = (i: number): MatchedRecord | null => {
      const ts = e.ts[i]!;
      if ((e.flags[i]! & o.roleMask) === 0 || ts < o.from || ts > o.to) return null;
      const superseded = act !== undefined && act[i] === 0;
      if (superseded && !o.includeSuperseded) return null;
      const k = recordKey(s, i);
      let r = o.acc.get(k);
      if (!r) {
        r = {
          entry: e,
          seg: s,
          i,
          ts,
          superseded,
          len: e.terms().tokens[i]!,
          exact: new Uint16Array(n),
          loose: new Uint16Array(n),
        };
        o.acc.set(k, r);
      }
      return r;
    };
    const dictKey = `${s}:dict`;
    const need = countFromDictionary(
      e,
      { forms: o.forms, only: o.only, bareToo: o.only === undefined || !o.done.has(dictKey) },
      (kind, j, counts) => {
        for (const [i, c] of counts) {
          const r = recOf(i);
          if (!r) continue;
          const into = kind === "exact" ? r.exact : r.loose;
          into[j] = Math.min(0xffff, into[j]! + c);
        }
      },
    );
    if (o.only === undefined) o.done.add(dictKey);
    if (!need.any) continue;
    for (let b = 0; b < e.blockCount; b++) {
      // Which text-path forms may occur in this block (filters), per term.
      const exactMay: boolean[] = [];
      const stemMay: boolean[] = [];
      let any = false;
      for (let j = 0; j < n; j++) {
        const f = o.forms[j]!;
        exactMay[j] = need.exact[j]! && mayContain(e, b, f.exactTri);
        stemMay[j] = need.stem[j]! && mayContain(e, b, f.stemTri);
        const bareMay = need.bare[j]! &&
          (o.only !== undefined || (f.bareTri !== null && mayContain(e, b, f.bareTri)));
        if (exactMay[j] || stemMay[j] || bareMay) any = true;
      }
      if (!any) continue;
      const blockKey = `${s}:${b}`;
      if (o.only === undefined) o.done.add(blockKey);
      else if (o.done.has(blockKey)) continue; // its bare matches were counted already
      const text = e.blockText(b);
      const view = { first: e.blockFirst(b), last: e.blockEnd(b), recStart: e.foldStart };
      for (let j = 0; j < n; j++) {
        const f = o.forms[j]!;
        if (exactMay[j]) {
          countExact(text, f.exact, view, (i) => {
            const r = recOf(i);
            if (r && r.exact[j]! < 0xffff) r.exact[j]!++;
          });
        }
        const loose = (i: number) => {
          const r = recOf(i);
          if (r && r.loose[j]! < 0xffff) r.loose[j]!++;
        };
        if (stemMay[j]) countExact(text, f.stem!, view, loose);
        // The accent-insensitive form: in every decoded block (no filter can rule it out
        // when the text has a mark inside the word).
        if (need.bare[j]) countBare(text, f.bare!, view, loose);
      }
    }
  }
}
