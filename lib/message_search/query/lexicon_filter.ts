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
 */
import type { LexiconView } from "../store/mod.ts";
import { needleKeys } from "./vocabulary.ts";

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
  }

  /** The filter for folded `needles` (null: no lexicon, or nothing to narrow by). */
  filterFor(needles: readonly string[]): LexiconFilter | null {
    const view = this.#view;
    if (view === null) return null;
    const marks: Uint8Array[] = [];
    for (const n of needles) {
      for (const key of needleKeys(n) ?? []) {
        let m = this.#holders.get(key);
        if (m === undefined) {
          m = view.holders(key, MAX_HOLDER_ENTRIES);
          if (this.#holders.size >= CACHE_KEYS) {
            this.#holders.delete(this.#holders.keys().next().value!);
          }
        } else this.#holders.delete(key);
        this.#holders.set(key, m);
        if (m !== null) marks.push(m);
      }
    }
    return marks.length === 0 ? null : new LexiconFilter(view, marks);
  }
}
