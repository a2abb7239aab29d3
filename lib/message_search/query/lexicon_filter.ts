/**
 * The exact search's use of the store's lexicon (store/lexicon_pack.ts): before a
 * session is loaded, its generations are looked up in the lexicon, and when every one of
 * them is covered and, for some needle key, none of them holds an entry containing that
 * key, no record of the session can hold the needle — the session is skipped without a
 * load, exactly like a summary that rules it out, only without the summaries' false
 * positives (a trigram summary of a few hundred messages admits most rare words).
 * Exactness: a needle's keys (query/vocabulary.ts needleKeys) are substrings of entries
 * of every record holding it, so the lexicon's holders are a superset of the sessions
 * holding a match; a generation the lexicon does not cover (newer than its last build,
 * or unreadable then) makes its session fall back to summaries and text.
 * Cost: one substring search of the vocabulary per key, kept in a small cache per lexicon
 * (a person refining a query repeats keys); a key inside more than MAX_HOLDER_ENTRIES
 * entries, or inside a dense one, narrows nothing and is dropped.
 * The relevance scan asks the same of its terms (relevanceFilters): whether a session can
 * hold any exact or suffix-folded form of any term (its main pass), and whether it can
 * hold a term's accent-insensitive form (its fallback, which would otherwise open every
 * session the summaries ruled out). The latter searches the vocabulary with its combining
 * marks removed (built once per lexicon); because a mark lengthens the text a key spans,
 * a marked entry of ENTRY_MAX units (possibly a piece of a longer token) always counts as
 * a holder.
 */
import type { LexiconView } from "../store/mod.ts";
import type { Question } from "./question.ts";
import { ENTRY_MAX, needleKeys } from "./vocabulary.ts";

/** Entries a key may match before it stops being worth collecting. */
export const MAX_HOLDER_ENTRIES = 20_000;
/** Keys whose holders are kept per lexicon. */
const CACHE_KEYS = 256;

/** Which generations can hold which keys, for one query. */
export class LexiconFilter {
  readonly #view: LexiconView;
  readonly #marks: readonly Uint8Array[];

  constructor(view: LexiconView, marks: readonly Uint8Array[]) {
    this.#view = view;
    this.#marks = marks;
  }

  /** True when the lexicon proves that no record of these generations holds a needle. */
  rulesOut(gens: readonly string[]): boolean {
    if (this.#marks.length === 0 || gens.length === 0) return false;
    const idx: number[] = [];
    for (const g of gens) {
      const i = this.#view.index.get(g);
      if (i === undefined) return false;
      idx.push(i);
    }
    for (const m of this.#marks) {
      let held = false;
      for (const i of idx) {
        if (m[i] !== 0) {
          held = true;
          break;
        }
      }
      if (!held) return true;
    }
    return false;
  }
}

/** One engine's lexicon and its key cache. */
export class LexiconCache {
  #view: LexiconView | null = null;
  #id: string | null = null;
  readonly #holders = new Map<string, Uint8Array | null>();
  readonly #bareHolders = new Map<string, Uint8Array | null>();
  /** The vocabulary without combining marks, its entry ends, and the possible pieces' holders. */
  #bare: { vocab: string; ends: Uint32Array; pieces: Uint8Array | null } | null = null;

  /** The identity of the lexicon held (null: none). */
  get id(): string | null {
    return this.#id;
  }

  /** Bytes held resident (the file and its decoded vocabulary). */
  get bytes(): number {
    const v = this.#view;
    return v === null ? 0 : v.bytes + v.vocab.length;
  }

  /** Takes a newly read lexicon (null: none on disk now). */
  adopt(read: { view: LexiconView; id: string } | null): void {
    this.#view = read?.view ?? null;
    this.#id = read?.id ?? null;
    this.#holders.clear();
    this.#bareHolders.clear();
    this.#bare = null;
  }

  /** `key`'s holders from `cache`, computed by `find` when not cached. */
  #cached(
    cache: Map<string, Uint8Array | null>,
    key: string,
    find: () => Uint8Array | null,
  ): Uint8Array | null {
    let m = cache.get(key);
    if (m === undefined) {
      m = find();
      if (cache.size >= CACHE_KEYS) cache.delete(cache.keys().next().value!);
    } else cache.delete(key);
    cache.set(key, m);
    return m;
  }

  /** True when `marks` (or, null, nothing narrows) leaves none of `idx` holding. */
  static #none(marks: Uint8Array | null, idx: readonly number[]): boolean {
    if (marks === null) return false;
    for (const i of idx) if (marks[i] !== 0) return false;
    return true;
  }

  /** The covered indices of `gens`, or null when one is not covered. */
  #indices(gens: readonly string[]): number[] | null {
    const v = this.#view;
    if (v === null || gens.length === 0) return null;
    const idx: number[] = [];
    for (const g of gens) {
      const i = v.index.get(g);
      if (i === undefined) return null;
      idx.push(i);
    }
    return idx;
  }

  /** True when no generation in `idx` can hold folded `form` (every key must be held). */
  #formAbsent(form: string, idx: readonly number[]): boolean {
    const view = this.#view!;
    for (const key of needleKeys(form) ?? []) {
      const m = this.#cached(this.#holders, key, () => view.holders(key, MAX_HOLDER_ENTRIES));
      if (LexiconCache.#none(m, idx)) return true;
    }
    return false;
  }

  #bareView() {
    if (this.#bare !== null) return this.#bare;
    const view = this.#view!;
    const vocab = view.vocab.replace(/\p{M}/gu, "");
    const ends = new Uint32Array(view.size);
    let k = 0;
    for (let p = vocab.indexOf("\0"); p >= 0; p = vocab.indexOf("\0", p + 1)) ends[k++] = p;
    if (view.size > 0) ends[view.size - 1] = vocab.length;
    let pieces: Uint8Array | null = new Uint8Array(view.gens.length);
    for (let e = 0; e < view.size && pieces !== null; e++) {
      const text = view.entry(e);
      if (text.length < ENTRY_MAX || !/\p{M}/u.test(text)) continue;
      if (view.isDense(e)) pieces = null;
      else view.eachGen(e, (g) => (pieces![g] = 1));
    }
    this.#bare = { vocab, ends, pieces };
    return this.#bare;
  }

  /** Holders of `key` in the mark-free vocabulary (see the header), or null. */
  #bareHoldersOf(key: string): Uint8Array | null {
    const view = this.#view!;
    const b = this.#bareView();
    if (b.pieces === null) return null;
    const marks = b.pieces.slice();
    let from = 0;
    let n = 0;
    for (;;) {
      const p = b.vocab.indexOf(key, from);
      if (p < 0) return marks;
      let lo = 0;
      let hi = view.size - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (b.ends[mid]! < p) lo = mid + 1;
        else hi = mid;
      }
      if (view.isDense(lo) || ++n > MAX_HOLDER_ENTRIES) return null;
      view.eachGen(lo, (g) => (marks[g] = 1));
      from = b.ends[lo]! + 1;
    }
  }

  /**
   * The relevance scan's two questions for `q` (see the header), or {} when there is no
   * lexicon: `formFilter(gens)` true when no form of any term can be in them;
   * `bareFilter(gens, terms)` true when no accent-insensitive form of those terms can.
   */
  relevanceFilters(q: Question): {
    formFilter?: (gens: readonly string[]) => boolean;
    bareFilter?: (gens: readonly string[], terms: ReadonlySet<number>) => boolean;
  } {
    if (this.#view === null) return {};
    const forms = q.terms.flatMap((t) => [t.text, ...(t.stem === null ? [] : [t.stem])]);
    if (forms.some((f) => needleKeys(f) === null)) return {};
    const bares = q.terms.map((t) => (t.phrase ? null : (t.bare ?? t.text)));
    return {
      formFilter: (gens) => {
        const idx = this.#indices(gens);
        return idx !== null && forms.every((f) => this.#formAbsent(f, idx));
      },
      bareFilter: (gens, terms) => {
        const idx = this.#indices(gens);
        if (idx === null) return false;
        for (const j of terms) {
          const bare = bares[j];
          if (bare == null) continue;
          const keys = needleKeys(bare);
          if (keys === null) return false;
          const absent = keys.some((key) =>
            LexiconCache.#none(
              this.#cached(this.#bareHolders, key, () => this.#bareHoldersOf(key)),
              idx,
            )
          );
          if (!absent) return false;
        }
        return true;
      },
    };
  }

  /** The filter for folded `needles` (null: no lexicon, or nothing to narrow by). */
  filterFor(needles: readonly string[]): LexiconFilter | null {
    const view = this.#view;
    if (view === null) return null;
    const marks: Uint8Array[] = [];
    for (const n of needles) {
      for (const key of needleKeys(n) ?? []) {
        const m = this.#cached(this.#holders, key, () => view.holders(key, MAX_HOLDER_ENTRIES));
        if (m !== null) marks.push(m);
      }
    }
    return marks.length === 0 ? null : new LexiconFilter(view, marks);
  }
}
