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
import { NotFoundError } from "../../errors.ts";
import {
  CorruptGenerationError,
  FLAG_SUBAGENT,
  type SegmentView,
  type ShardDamage,
  type Store,
} from "../store/mod.ts";
import type { Arena } from "./arena.ts";
import type { NormalizedRequest } from "./normalize_request.ts";
import { ROLE_USER } from "./normalize_request.ts";
import type { Question } from "./question.ts";
import { formsOf, type MatchedRecord, matchSessionTerms, recordKey } from "./relevance_match.ts";
import { loadSession, type LoadState, outOfScope, summaryRulesOut } from "./run_scan.ts";
import type { PlanSession, ScanPlan } from "./scan_plan.ts";
import type { HitRef } from "./session_scan.ts";
import { needleSummaryHashes } from "./trigram.ts";
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

/**
 * A matched record as the ranking keeps it: its counts and facts, and its generation by
 * name — never the segment itself, so a scan over a store many times the arena's size
 * holds only what the arena holds (the page's hits are resolved through the arena at
 * the end: resolveHits).
 */
type ScoredRecord = Omit<MatchedRecord, "entry"> & { gen: string; flags: number };

function compact(r: MatchedRecord): ScoredRecord {
  return {
    gen: r.entry.name,
    flags: r.entry.flags[r.i]!,
    seg: r.seg,
    i: r.i,
    ts: r.ts,
    superseded: r.superseded,
    len: r.len,
    exact: r.exact,
    loose: r.loose,
  };
}

/** One session's matched records. */
interface SessionAcc {
  session: PlanSession;
  records: ScoredRecord[];
}

/** A ranked session's best record, until resolveHits finds its segment. */
type HitAt = Omit<HitRef, "entry"> & { gen: string };

/** A ranked session. */
export interface RankedSession {
  session: PlanSession;
  relevance: GroupRelevance;
  /** The newest matching record's ts_ms. */
  best: number;
  total: number;
  /**
   * Best-scoring records first, at most HITS_PER_GROUP; resolved (the segment in hand)
   * for the sessions ranked before `pageEnd` only — a page never shows the others.
   */
  hits: HitRef[];
  /** The same records by generation name. */
  at: HitAt[];
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
  /**
   * For the accent-insensitive fallback: true when the store's lexicon proves that none
   * of `gens` holds term j's bare form for every j of `terms` (lexicon_filter.ts
   * bareRulesOut); absent or false: the session is opened.
   */
  bareFilter?: (gens: readonly string[], terms: ReadonlySet<number>) => boolean;
  /**
   * For the main pass: true when the lexicon proves that none of `gens` holds any exact
   * or suffix-folded form of any term (a superset check like the summaries', without
   * their false positives).
   */
  formFilter?: (gens: readonly string[]) => boolean;
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
    const scored: { r: ScoredRecord; score: number }[] = [];
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
      const f = r.flags;
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
      hits: [],
      at: scored.slice(0, HITS_PER_GROUP).map(({ r }) => ({
        gen: r.gen,
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
  // Sessions matched by the main pass and what it read of them (the fallback skips that);
  // their segments are taken from the arena again, never held here.
  const resident: { s: PlanSession; done: Set<string> }[] = [];
  const st: LoadState = { fresh: 0, matched: false, scan: arena.beginScan() };
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
    if (
      x.formFilter?.(e.generations) || hashes.every((h) => summaryRulesOut(arena, e.generations, h))
    ) {
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
      const acc = new Map<number, MatchedRecord>();
      const done = new Set<string>();
      matchSessionTerms(entries, active, { ...match, acc, done });
      if (acc.size > 0) sessions.push({ session: s, records: [...acc.values()].map(compact) });
      resident.push({ s, done });
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
      const acc = new Map<number, MatchedRecord>();
      matchSessionTerms(r.entries, r.active, { ...match, acc, only: unmatched, done: r.done });
      if (acc.size === 0) return;
      const have = bySession.get(r.s.key);
      if (!have) {
        const add = { session: r.s, records: [...acc.values()].map(compact) };
        sessions.push(add);
        bySession.set(r.s.key, add);
        return;
      }
      // The fallback counted only the unmatched terms' bare forms: added to what the main
      // pass found for the same record.
      const byRec = new Map(have.records.map((m) => [recordKey(m.seg, m.i), m]));
      for (const [k, m] of acc) {
        const old = byRec.get(k);
        if (!old) {
          have.records.push(compact(m));
          continue;
        }
        for (const j of unmatched) {
          old.exact[j] = Math.min(0xffff, old.exact[j]! + m.exact[j]!);
          old.loose[j] = Math.min(0xffff, old.loose[j]! + m.loose[j]!);
        }
      }
    };
    const again = async (s: PlanSession, done: Set<string>): Promise<boolean> => {
      const entries = await loadSession(x, s, st);
      if (entries === "timeout" || entries === "deferred") {
        stop = "timeout";
        return false;
      }
      if (!Array.isArray(entries)) return true; // reported by the next page that needs it
      try {
        look({
          s,
          entries,
          active: arena.activeFor(s.key, { gens: s.entry.generations, entries }),
          done,
        });
      } catch (err) {
        if (!(err instanceof CorruptGenerationError)) throw err;
        arena.noteFailure(err.generation);
      }
      return true;
    };
    for (const r of resident) {
      if (performance.now() - x.startedAt > x.timeBudgetMs) {
        stop = "timeout";
        break;
      }
      if (!(await again(r.s, r.done))) break;
    }
    // Sessions the summaries ruled out: only those the lexicon cannot rule out for every
    // unmatched term's accent-insensitive form (x.bareFilter) are opened.
    for (const s of stop === "done" ? ruledOut : []) {
      if (x.bareFilter?.(s.entry.generations, unmatched)) continue;
      if (!(await again(s, new Set()))) break;
    }
  }
  const ranked = rank(sessions, { question, n, recordsInScope, now: x.now });
  await resolveHits(x, ranked.slice(0, x.pageEnd), { degraded, damage });
  return { stop, ranked, degraded, damage };
}

/**
 * Puts the segments of the best records of `ranked` in hand (through the arena: most are
 * resident). A generation that fails to load now is reported like a scan's damage and
 * its session keeps no hit (the page names it degraded).
 */
async function resolveHits(
  x: Pick<RelevanceInput, "arena" | "store">,
  ranked: RankedSession[],
  o: { degraded: DegradedSession[]; damage: ShardDamage[] },
): Promise<void> {
  for (const r of ranked) {
    const hits: HitRef[] = [];
    for (const h of r.at) {
      try {
        const { entry } = await x.arena.load(x.store, h.gen);
        hits.push({ entry, seg: h.seg, i: h.i, ts: h.ts, superseded: h.superseded });
      } catch (err) {
        if (!(err instanceof CorruptGenerationError || err instanceof NotFoundError)) throw err;
        x.arena.noteFailure(h.gen);
        const e = r.session.entry;
        o.degraded.push({
          session_key: r.session.key,
          source: e.source,
          reason: e.source_gone ? "source_gone" : "damaged",
        });
        o.damage.push({ key: r.session.key, generation: h.gen });
        hits.length = 0;
        break;
      }
    }
    r.hits = hits;
  }
}
