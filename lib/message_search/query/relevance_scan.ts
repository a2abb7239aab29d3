/**
 * The relevance scan (issue 27): every session in the request's scope is scored against
 * a question's terms (question.ts) and ranked, instead of walked newest-first.
 *
 * Matching. A record matches a term EXACTLY when the term occurs in its folded text as
 * the seed matches a needle (match.ts findValid: substring, boundary rule), and LOOSELY
 * when only a loose form occurs: the suffix-folded form (same rule), or the word without
 * accents matched accent-insensitively (combining marks skipped on both sides). Counts
 * come from each segment's term dictionary (store TERMS, term_postings.ts) for every form
 * made of token units — the vocabulary and postings alone, no record decoded, equal to
 * what the text would give (the property test in segment_terms_test.ts holds them
 * equal); the other forms (a quoted phrase, `node.js`, a form found in a piece of a very
 * long token) are matched in the text of the blocks whose trigram filters let them
 * through. When a term has no match at all after the pass, one more pass looks for its
 * accent-insensitive form where the summaries ruled the session out (so `zurich` finds
 * `Zürich` even when nothing else does).
 *
 * Scoring, per record (BM25, k1 = 1.2, b = 0.75, over folded tokens; a record's length is
 * its token count from the term dictionary): for each term present,
 * idf · tf(k1+1) / (tf + k1(1 − b + b·len/avglen)), with N the records in scope and df the
 * records holding the term (either form); a loose-only occurrence weighs LOOSE_WEIGHT.
 * The record's sum is multiplied by its role (user ROLE_USER_WEIGHT, assistant
 * ROLE_ASSISTANT_WEIGHT), by SUBAGENT_WEIGHT for a subagent's message and
 * SUPERSEDED_WEIGHT for a superseded one (only with include_superseded), and by
 * ALL_TERMS_BONUS when it holds every term (EXACT_ALL_BONUS more when all exactly).
 * A session's score is its best three records (1, 0.4, 0.2) plus COVERAGE_WEIGHT · Σ idf
 * of the terms present anywhere in it — words spread over several messages still count —
 * times a recency prior 1 + RECENCY_WEIGHT · e^(−age/RECENCY_DAYS), at most +8%: fused,
 * never dominant.
 *
 * Tiers. `exact`: one record holds every term exactly (a quoted phrase is one term, so a
 * phrase is matched exactly or not at all). Everything else is `related` and ranks after
 * every exact session: all terms but spread over messages (`spread`), some term only
 * loosely (`loose`), or k of n terms carrying at least RELATED_MIN_COVERAGE of the
 * question's idf weight (one common word of three is no match; one rare word can be). Within a tier by score,
 * ties by the newest hit, then key: a total order, so pages by rank never repeat or skip.
 *
 * Budgets: the time budget as a newest scan has (a `complete` request has none): a scan
 * cut by it is `timeout`, ranked over what it reached. Loads go through the arena
 * (run_scan.ts loadSession) and damaged sessions are reported as there (F8).
 */
import {
  CorruptGenerationError,
  FLAG_SUBAGENT,
  type SegmentView,
  type ShardDamage,
  type Store,
} from "../store/mod.ts";
import type { Arena } from "./arena.ts";
import { continuesCharacter, findValid, recordAt } from "./match.ts";
import type { NormalizedRequest } from "./normalize_request.ts";
import { ROLE_USER } from "./normalize_request.ts";
import { bareRegex, type Question } from "./question.ts";
import { loadSession, type LoadState, outOfScope, summaryRulesOut } from "./run_scan.ts";
import type { PlanSession, ScanPlan } from "./scan_plan.ts";
import type { HitRef } from "./session_scan.ts";
import { bareCounts, type RecordCounts, termCounts } from "./term_postings.ts";
import { needleSummaryHashes, needleTrigrams } from "./trigram.ts";
import { isEntryTerm } from "./vocabulary.ts";
import { type DegradedSession, type GroupRelevance, HITS_PER_GROUP } from "./types.ts";

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const LOOSE_WEIGHT = 0.6;
export const ROLE_USER_WEIGHT = 1;
export const ROLE_ASSISTANT_WEIGHT = 0.8;
export const SUBAGENT_WEIGHT = 0.6;
export const SUPERSEDED_WEIGHT = 0.4;
export const ALL_TERMS_BONUS = 1.3;
export const EXACT_ALL_BONUS = 1.2;
export const COVERAGE_WEIGHT = 0.6;
export const RECENCY_WEIGHT = 0.08;
export const RECENCY_DAYS = 45;
export const RELATED_MIN_COVERAGE = 0.4;
const TOP_WEIGHTS = [1, 0.4, 0.2];
const DAY = 86_400_000;

/** One matched record, waiting for the corpus statistics. */
interface MatchedRecord {
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

/** One session's matched records. */
interface SessionAcc {
  session: PlanSession;
  records: MatchedRecord[];
}

/** A ranked session. */
export interface RankedSession {
  session: PlanSession;
  relevance: GroupRelevance;
  /** The newest matching record's ts_ms. */
  best: number;
  total: number;
  /** Best-scoring records first, at most HITS_PER_GROUP. */
  hits: HitRef[];
}

/** What the scan found. */
export interface RelevanceOutcome {
  stop: "done" | "timeout";
  ranked: RankedSession[];
  degraded: DegradedSession[];
  damage: ShardDamage[];
}

/** Everything the scan needs. */
export interface RelevanceInput {
  store: Store;
  arena: Arena;
  plan: ScanPlan;
  req: NormalizedRequest;
  question: Question;
  cutoff: number | null;
  startedAt: number;
  timeBudgetMs: number;
  now: number;
  /** Rank one past the page asked for (offset + limit): what the exact tier must fill. */
  pageEnd: number;
}

/** One term's matchable forms. */
interface TermForms {
  exact: string;
  exactTri: Uint32Array | null;
  stem: string | null;
  stemTri: Uint32Array | null;
  /** Accent-insensitive matcher (marks skipped), or null for a phrase. */
  bare: RegExp | null;
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

function formsOf(q: Question): TermForms[] {
  return q.terms.map((t) => {
    const bareText = t.phrase ? null : (t.bare ?? t.text);
    const bare = bareText === null ? null : bareRegex(bareText);
    return {
      exact: t.text,
      exactTri: needleTrigrams(t.text),
      stem: t.stem,
      stemTri: t.stem ? needleTrigrams(t.stem) : null,
      bare,
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
  let marks: boolean | undefined;
  const hasMarks = () => (marks ??= MARK.test(t.vocab()));
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
    if (f.bare === null || (!f.bareDiffers && !hasMarks())) continue;
    const bare = f.bareEntry ? bareCounts(t, f.bare) : null;
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
function matchSessionTerms(
  entries: readonly SegmentView[],
  active: Uint8Array[] | null,
  o: {
    forms: TermForms[];
    from: number;
    to: number;
    roleMask: number;
    includeSuperseded: boolean;
    acc: Map<string, MatchedRecord>;
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
      const k = `${s}:${i}`;
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

/** Scores and ranks the sessions (see the header). */
function rank(
  sessions: SessionAcc[],
  o: { question: Question; n: number; recordsInScope: number; now: number },
): RankedSession[] {
  const n = o.n;
  const df = new Float64Array(n);
  let lenSum = 0;
  let lenCount = 0;
  for (const s of sessions) {
    for (const r of s.records) {
      lenSum += r.len;
      lenCount++;
      for (let j = 0; j < n; j++) if (r.exact[j]! > 0 || r.loose[j]! > 0) df[j]!++;
    }
  }
  const N = Math.max(o.recordsInScope, lenCount, 1);
  const idf = Array.from(df, (d) => Math.log(1 + (N - d + 0.5) / (d + 0.5)));
  const avg = Math.max(lenCount === 0 ? 1 : lenSum / lenCount, 1);
  const idfTotal = idf.reduce((a, b) => a + b, 0);
  const out: RankedSession[] = [];
  for (const s of sessions) {
    const present = new Uint8Array(n);
    const loosePresent = new Uint8Array(n);
    let exactAll = false;
    let oneHasAll = false;
    const scored: { r: MatchedRecord; score: number }[] = [];
    for (const r of s.records) {
      let sum = 0;
      let hasAll = true;
      let allExact = true;
      for (let j = 0; j < n; j++) {
        const ex = r.exact[j]!;
        const tf = ex > 0 ? ex : r.loose[j]! * LOOSE_WEIGHT;
        if (ex > 0) present[j] = 1;
        else if (r.loose[j]! > 0) loosePresent[j] = 1;
        if (tf === 0) {
          hasAll = false;
          allExact = false;
          continue;
        }
        if (ex === 0) allExact = false;
        const norm = BM25_K1 * (1 - BM25_B + BM25_B * (r.len / avg));
        sum += idf[j]! * (tf * (BM25_K1 + 1)) / (tf + norm);
      }
      if (hasAll) {
        oneHasAll = true;
        sum *= ALL_TERMS_BONUS * (allExact ? EXACT_ALL_BONUS : 1);
      }
      if (allExact) exactAll = true;
      const f = r.entry.flags[r.i]!;
      sum *= (f & ROLE_USER) ? ROLE_USER_WEIGHT : ROLE_ASSISTANT_WEIGHT;
      if (f & FLAG_SUBAGENT) sum *= SUBAGENT_WEIGHT;
      if (r.superseded) sum *= SUPERSEDED_WEIGHT;
      scored.push({ r, score: sum });
    }
    let matched = 0;
    let coverage = 0;
    let loose = false;
    for (let j = 0; j < n; j++) {
      if (present[j] || loosePresent[j]) {
        matched++;
        coverage += idf[j]! * (present[j] ? 1 : LOOSE_WEIGHT);
      }
      if (!present[j] && loosePresent[j]) loose = true;
    }
    // A related session must carry at least RELATED_MIN_COVERAGE of the question's weight:
    // one common word ("fix") of three is not a match, one rare one ("kubernetes") is.
    if (!exactAll && coverage < RELATED_MIN_COVERAGE * idfTotal) continue;
    scored.sort((a, b) => b.score - a.score || b.r.ts - a.r.ts);
    let score = COVERAGE_WEIGHT * coverage;
    for (let k = 0; k < TOP_WEIGHTS.length && k < scored.length; k++) {
      score += TOP_WEIGHTS[k]! * scored[k]!.score;
    }
    let best = -Infinity;
    for (const x of scored) if (x.r.ts > best) best = x.r.ts;
    const age = Math.max(0, (o.now - best) / DAY);
    score *= 1 + RECENCY_WEIGHT * Math.exp(-age / RECENCY_DAYS);
    out.push({
      session: s.session,
      best,
      total: scored.length,
      hits: scored.slice(0, HITS_PER_GROUP).map(({ r }) => ({
        entry: r.entry,
        seg: r.seg,
        i: r.i,
        ts: r.ts,
        superseded: r.superseded,
      })),
      relevance: {
        tier: exactAll ? "exact" : "related",
        terms_matched: matched,
        terms_total: n,
        spread: !oneHasAll && matched === n,
        loose: !exactAll && loose,
        score: Math.round(score * 1000) / 1000,
      },
    });
  }
  out.sort((a, b) =>
    (a.relevance.tier === b.relevance.tier ? 0 : a.relevance.tier === "exact" ? -1 : 1) ||
    b.relevance.score - a.relevance.score || b.best - a.best ||
    (a.session.key < b.session.key ? -1 : a.session.key > b.session.key ? 1 : 0)
  );
  return out;
}

/** Runs one relevance scan over the whole scope. */
export async function runRelevanceScan(x: RelevanceInput): Promise<RelevanceOutcome> {
  const { req, arena, question } = x;
  const forms = formsOf(question);
  const n = forms.length;
  const from = Math.max(req.since ?? -Infinity, x.cutoff ?? -Infinity);
  const to = req.until ?? Infinity;
  const degraded: DegradedSession[] = [];
  const damage: ShardDamage[] = [];
  const sessions: SessionAcc[] = [];
  const resident: {
    s: PlanSession;
    entries: SegmentView[];
    active: Uint8Array[] | null;
    done: Set<string>;
  }[] = [];
  const st: LoadState = { fresh: 0, matched: false };
  // Each term's summary hashes, per form: a session is loaded only if some form of some
  // term may be in it (the accent-insensitive form cannot be ruled out this way: it is the
  // fallback pass's business).
  const hashes = forms.flatMap((f) => [f.exact, f.stem].filter((t) => t !== null))
    .map((t) => [needleSummaryHashes(t!)]);
  let recordsInScope = 0;
  let stop: RelevanceOutcome["stop"] = "done";
  // Sessions the summaries ruled out for every exact and suffix form: the
  // accent-insensitive fallback may still have to look in them.
  const ruledOut: PlanSession[] = [];
  const scope = { req, pos: null, to };
  const match = {
    forms,
    from,
    to,
    roleMask: req.roleMask,
    includeSuperseded: req.includeSuperseded,
  };
  for (const s of x.plan.sessions) {
    const e = s.entry;
    if (e.newest_ts_ms < from) break;
    if (e.quarantined_at_ms !== undefined) {
      if (!outOfScope(s, scope)) {
        degraded.push({
          session_key: s.key,
          source: e.source,
          reason: e.source_gone ? "source_gone" : "rebuilding",
        });
      }
      continue;
    }
    if (e.records === 0 || outOfScope(s, scope)) continue;
    recordsInScope += e.records;
    if (hashes.every((h) => summaryRulesOut(arena, e.generations, h))) {
      ruledOut.push(s);
      continue;
    }
    const entries = await loadSession(x, s, st);
    if (entries === "timeout" || entries === "deferred") {
      stop = "timeout";
      break;
    }
    if (!Array.isArray(entries)) {
      degraded.push({
        session_key: s.key,
        source: e.source,
        reason: e.source_gone ? "source_gone" : "damaged",
      });
      damage.push({ key: s.key, generation: entries.failed });
      continue;
    }
    st.matched = true;
    try {
      const active = arena.activeFor(s.key, { gens: e.generations, entries });
      const acc = new Map<string, MatchedRecord>();
      const done = new Set<string>();
      matchSessionTerms(entries, active, { ...match, acc, done });
      if (acc.size > 0) sessions.push({ session: s, records: [...acc.values()] });
      resident.push({ s, entries, active, done });
    } catch (err) {
      if (!(err instanceof CorruptGenerationError)) throw err;
      arena.noteFailure(err.generation);
      degraded.push({ session_key: s.key, source: e.source, reason: "damaged" });
      damage.push({ key: s.key, generation: err.generation });
    }
  }
  // The accent-insensitive fallback: the blocks the filters ruled out may still hold a
  // word with an accent inside it (`mármot` for `marmot`). Looked for when the exact tier
  // does not fill the page asked for (related sessions will be shown), and always for a
  // term nothing matched.
  const exactSessions =
    sessions.filter((s) => s.records.some((r) => r.exact.every((c) => c > 0))).length;
  const unmatched = new Set<number>();
  for (let j = 0; j < n; j++) {
    if (forms[j]!.bare === null) continue;
    const none = !sessions.some((s) => s.records.some((r) => r.exact[j]! > 0 || r.loose[j]! > 0));
    if (none || exactSessions < x.pageEnd) unmatched.add(j);
  }
  if (unmatched.size > 0 && stop === "done") {
    const bySession = new Map(sessions.map((s) => [s.session.key, s]));
    const look = (
      r: { s: PlanSession; entries: SegmentView[]; active: Uint8Array[] | null; done: Set<string> },
    ) => {
      const have = bySession.get(r.s.key);
      const acc = new Map<string, MatchedRecord>(
        (have?.records ?? []).map((m) => [`${m.seg}:${m.i}`, m]),
      );
      matchSessionTerms(r.entries, r.active, { ...match, acc, only: unmatched, done: r.done });
      if (acc.size === 0) return;
      if (have) have.records = [...acc.values()];
      else {
        const add = { session: r.s, records: [...acc.values()] };
        sessions.push(add);
        bySession.set(r.s.key, add);
      }
    };
    for (const r of resident) {
      if (performance.now() - x.startedAt > x.timeBudgetMs) {
        stop = "timeout";
        break;
      }
      look(r);
    }
    for (const s of stop === "done" ? ruledOut : []) {
      const entries = await loadSession(x, s, st);
      if (entries === "timeout" || entries === "deferred") {
        stop = "timeout";
        break;
      }
      if (!Array.isArray(entries)) continue; // reported by the next page that needs it
      try {
        look({
          s,
          entries,
          active: arena.activeFor(s.key, { gens: s.entry.generations, entries }),
          done: new Set(),
        });
      } catch (err) {
        if (!(err instanceof CorruptGenerationError)) throw err;
        arena.noteFailure(err.generation);
      }
    }
  }
  const ranked = rank(sessions, { question, n, recordsInScope, now: x.now });
  return { stop, ranked, degraded, damage };
}
