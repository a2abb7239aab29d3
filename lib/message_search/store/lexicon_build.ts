/**
 * Builds lexicon.pack (lexicon_pack.ts) from the TERMS sections of live generations.
 * Incremental: the previous lexicon's entries are kept for the generations still live (no
 * file is read for them), and only generations it does not cover are read. Entries are
 * merged in one map keyed by entry text; an entry held by more than denseAfter(n)
 * generations is marked dense and its list dropped, which bounds the build's memory by
 * the rare entries (a word in an eighth of the store narrows nothing worth its bytes).
 * Ordering: the kept generations keep their order and the new ones follow, so every list
 * is appended in ascending index order and never sorted; the entries are sorted once at
 * the end (TimSort: the kept entries arrive sorted, so that costs little more than the
 * new ones' sort).
 * A generation that cannot be read (missing, or its TERMS damaged) is left uncovered, so
 * searches go on reading its text; the build never fails for it.
 * Pure apart from `terms` (the caller's reader) and `pause` (the caller's yield).
 */
import { Buffer } from "node:buffer";
import { DENSE, encodeLexicon, type LexiconView, type Postings } from "./lexicon_pack.ts";
import type { TermsView } from "./segment_terms.ts";

/** Generations an entry may be listed under before it counts as dense. */
export function denseAfter(gens: number): number {
  return Math.max(64, Math.ceil(gens / 8));
}

/**
 * True when the lexicon covering `covered` is worth rebuilding for `live`: uncovered live
 * generations plus covered dead ones past max(8, 2 % of the live) — an uncovered one is
 * searched through its summary and text meanwhile, which stays exact, and a dead one's
 * words (a compacted tail, a rewritten session) should not stay in the cache for long.
 * A deleted session does not wait for this: Store.deleteSession removes the lexicon.
 */
export function lexiconStale(
  covered: ReadonlyMap<string, number> | null,
  live: readonly string[],
): boolean {
  if (live.length === 0) return covered !== null && covered.size > 0;
  if (covered === null) return true;
  let uncovered = 0;
  for (const g of live) if (!covered.has(g)) uncovered++;
  const dead = covered.size - (live.length - uncovered);
  return uncovered + dead > Math.max(8, live.length / 50);
}

/** What buildLexicon takes. */
export interface LexiconBuildInput {
  /** Live generation names (those the manifest references). */
  live: readonly string[];
  previous: LexiconView | null;
  /** Reads generation `name`'s TERMS; null when it cannot be read (left uncovered). */
  terms: (name: string) => Promise<TermsView | null>;
  /** Awaited between two generations read (a daemon keeps answering meanwhile). */
  pause?: () => Promise<void>;
}

/** A built lexicon and what it took. */
export interface LexiconBuild {
  bytes: Uint8Array;
  /** Generations covered. */
  gens: number;
  entries: number;
  /** Generations whose TERMS were read (the rest came from the previous lexicon). */
  read: number;
  /** Live generations left uncovered (unreadable). */
  skipped: number;
}

type Slot = number | number[] | typeof DENSE;

/**
 * `s` as a string of its own: a piece of a segment's vocabulary may be a slice that keeps
 * the whole vocabulary alive, and the lexicon keeps its entries across many segments.
 */
function ownCopy(s: string): string {
  return Buffer.from(s, "utf16le").toString("utf16le");
}

/** Builds the lexicon of `x.live` (see the header). */
export async function buildLexicon(x: LexiconBuildInput): Promise<LexiconBuild> {
  const prev = x.previous;
  const kept = prev ? x.live.filter((g) => prev.index.has(g)) : [];
  const fresh = prev ? x.live.filter((g) => !prev.index.has(g)) : [...x.live];
  const limit = denseAfter(kept.length + fresh.length);
  const slots = new Map<string, Slot>();
  const add = (entry: string, g: number) => {
    const s = slots.get(entry);
    if (s === undefined) slots.set(ownCopy(entry), g);
    else if (s === DENSE) return;
    else if (typeof s === "number") slots.set(entry, [s, g]);
    else if (s.length >= limit) slots.set(entry, DENSE);
    else s.push(g);
  };
  const gens: string[] = [...kept];
  if (prev) {
    // Old index → new index, or −1 for a generation no longer live.
    const remap = new Int32Array(prev.gens.length).fill(-1);
    for (const [i, g] of kept.entries()) remap[prev.index.get(g)!] = i;
    for (let k = 0; k < prev.size; k++) {
      const text = prev.entry(k);
      if (prev.isDense(k)) {
        slots.set(text, DENSE);
        continue;
      }
      prev.eachGen(k, (old) => {
        const g = remap[old]!;
        if (g >= 0) add(text, g);
      });
    }
  }
  let read = 0;
  let skipped = 0;
  for (const name of fresh) {
    const t = await x.terms(name);
    if (t === null) {
      skipped++;
      continue;
    }
    const g = gens.length;
    gens.push(name);
    read++;
    // ("".split gives [""]: a generation without entries adds none.)
    if (t.size > 0) { for (const entry of t.vocab().split("\u0000")) add(entry, g); }
    await x.pause?.();
  }
  const entries = [...slots.keys()].sort();
  const postings: Postings[] = entries.map((e) => {
    const s = slots.get(e)!;
    return typeof s === "number" ? [s] : s;
  });
  return {
    bytes: encodeLexicon({ gens, entries, postings }),
    gens: gens.length,
    entries: entries.length,
    read,
    skipped,
  };
}
