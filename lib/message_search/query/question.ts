/**
 * What a relevance request searches for (issue 27): a question asked in words is reduced
 * to its content terms. Pure.
 *  - Words are split on whitespace and on punctuation at their edges ("kubernetes?" is
 *    "kubernetes"; inner punctuation stays: "node.js", "e2e-test", "O(n)"), then folded
 *    exactly as the index folds text (fold.ts). A quoted phrase is one exact term.
 *  - Stopwords and question words ("how", "did", "we", "the", "in" …: STOPWORDS) are
 *    dropped and reported; a question of nothing else is `onlyCommon` (the caller says so
 *    instead of listing every session).
 *  - A run of CJK characters (Han, kana, Hangul) longer than two characters becomes its
 *    character bigrams, each a term (a Chinese question has no spaces); one or two CJK
 *    characters stay one term.
 *  - Each word term also gets its LOOSE forms, matched only for the related tier: the
 *    word without accents (matched accent-insensitively, so `cafe` finds `café` and
 *    `Zürich` finds `Zurich`), and a simple English suffix fold (`deadlocks` → `deadlock`,
 *    `fixing` → `fix`, `migrations` → `migration`, `caching` → `cach`) — a fallback, not a
 *    stemmer: with substring matching a shorter form already finds the longer ones.
 * At most NEEDLES_MAX terms are kept (the first ones); more is said in `dropped`.
 */
import { fold } from "./fold.ts";
import { isSearchableToken, NEEDLES_MAX, QUERY_MAX_CHARS, tokenize } from "./parse_query.ts";

/** One content term. */
export interface QuestionTerm {
  /** Folded, matched as the seed matches a needle (exact tier). */
  text: string;
  /** A quoted phrase (never loosened). */
  phrase: boolean;
  /** Folded without combining marks (accent-insensitive form); null when equal to `text`. */
  bare: string | null;
  /** The suffix-folded form, folded; null when none applies. */
  stem: string | null;
}

/** A question reduced to its terms. */
export interface Question {
  terms: QuestionTerm[];
  /** Words dropped (folded), in query order: stopwords, question words, overflow. */
  dropped: string[];
  /** Only common words were asked: nothing to search. */
  onlyCommon: boolean;
}

/**
 * English stopwords and question words: function words, auxiliaries, pronouns and the
 * words a question is built from. Content words common in coding ("fix", "error", "bug")
 * are NOT here: BM25's idf weighs them down without losing them.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ("a about above after again against all am an and any are as at be because been before " +
    "being below between both but by can could did do does doing done down during each " +
    "either else ever few for from further get got had has have having he her here hers " +
    "him his how i if in into is it its itself just let like me might mine more most much " +
    "must my myself no nor not now of off on once one only or other our ours ourselves out " +
    "over own please same she should so some such than that the their theirs them then " +
    "there these they this those through to too under until up upon us very via was we " +
    "were what whats when where whether which while who whom whose why will with would " +
    "yet you your yours yourself yourselves anything something everything nothing thing " +
    "things way ways again also already tell told say said know remember recall find found " +
    "happened happen discussed discuss talked talk decided decide ago last time yesterday " +
    "today earlier recently keep keeps kept keeping still always sometimes usually " +
    "really actually lets let's i'm we're it's that's what's did't didn't don't " +
    "doesn't isn't wasn't weren't can't couldn't won't wouldn't shouldn't").split(" "),
);

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
/** Punctuation stripped from a word's edges (not from its inside). */
const EDGE_PUNCT = /^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu;
const MARKS = /\p{M}+/gu;

/** The simple English suffix fold, or null (see the header). */
export function suffixFold(word: string): string | null {
  // deno-lint-ignore no-control-regex
  if (!/^[\x00-\x7f]+$/.test(word) || word.length < 5) return null;
  const rules: [RegExp, string][] = [
    [/ies$/, "y"],
    [/(ss)es$/, "$1"],
    [/([^aeiou])ied$/, "$1y"],
    [/ing$/, ""],
    [/ed$/, ""],
    [/es$/, "e"],
    [/([^s])s$/, "$1"],
  ];
  for (const [re, to] of rules) {
    if (!re.test(word)) continue;
    const s = word.replace(re, to);
    return s.length >= 3 && s !== word ? s : null;
  }
  return null;
}

/** Splits a word into its CJK bigrams and its other pieces. */
function pieces(word: string): string[] {
  const out: string[] = [];
  let last = 0;
  CJK_RUN.lastIndex = 0;
  for (let m = CJK_RUN.exec(word); m !== null; m = CJK_RUN.exec(word)) {
    if (m.index > last) out.push(word.slice(last, m.index));
    const chars = [...m[0]];
    if (chars.length <= 2) out.push(m[0]);
    else for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
    last = CJK_RUN.lastIndex;
  }
  if (last < word.length) out.push(word.slice(last));
  return out.map((p) => p.replace(EDGE_PUNCT, "")).filter((p) => p !== "");
}

/** Parses `q` into its terms; RangeError/TypeError as the seed's parser for bad input. */
export function parseQuestion(q: string): Question {
  if (typeof q !== "string") throw new TypeError(`Query must be a string: got "${typeof q}"`);
  if (q.length > QUERY_MAX_CHARS) {
    throw new RangeError(
      `Query is too long: ${q.length} characters; shorten it to at most ${QUERY_MAX_CHARS}`,
    );
  }
  const raw = q.replaceAll("\u0000", " ");
  const tokens = tokenize(raw);
  if (tokens.length === 0) throw new RangeError("Query is empty: type a word to search for");
  const terms: QuestionTerm[] = [];
  const dropped: string[] = [];
  const seen = new Set<string>();
  const add = (t: QuestionTerm) => {
    if (seen.has(t.text)) return;
    seen.add(t.text);
    if (terms.length >= NEEDLES_MAX) dropped.push(t.text);
    else terms.push(t);
  };
  // tokenize() returns phrases without their quotes: find which tokens were quoted.
  const quoted = new Set([...raw.matchAll(/"([^"]*)"?/g)].map((m) => m[1]!.trim()));
  for (const tok of tokens) {
    if (quoted.has(tok) && /\s/.test(tok)) {
      add({ text: fold(tok), phrase: true, bare: null, stem: null });
      continue;
    }
    for (const p of pieces(tok)) {
      const f = fold(p);
      if (STOPWORDS.has(f) || STOPWORDS.has(f.replaceAll("\u2019", "'"))) {
        if (!dropped.includes(f)) dropped.push(f);
        continue;
      }
      if (!isSearchableToken(p)) continue;
      const bare = f.replace(MARKS, "");
      const stem = suffixFold(bare);
      add({ text: f, phrase: false, bare: bare !== f ? bare : null, stem });
    }
  }
  if (terms.length === 0 && dropped.length === 0) {
    throw new RangeError(
      "Query has no searchable word: type at least 2 characters " +
        "(one is enough for a Chinese, Japanese or Korean character)",
    );
  }
  return { terms, dropped, onlyCommon: terms.length === 0 };
}

/**
 * The accent-insensitive matcher of a bare (mark-free) word: its characters with any
 * combining marks allowed after each one, over folded (NFD) text — `marmot` matches
 * `ma\u0301rmot` (`mármot`). Global and Unicode: callers reset lastIndex.
 */
export function bareRegex(bare: string): RegExp {
  return new RegExp(
    [...bare].map((c) => c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("\\p{M}*") + "\\p{M}*",
    "gu",
  );
}
