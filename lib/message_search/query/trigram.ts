/**
 * Trigram prefilter: one small Bloom bitset (a single hash function) per block of folded
 * text, holding every trigram of UTF-16 units in the block. A needle of three or more
 * units can occur in a block only if all its trigrams' bits are set, so blocks lacking
 * any needle trigram are skipped without running indexOf; false positives only cost the
 * indexOf the filter tried to save, never a missed hit. Needles shorter than three units
 * skip the filter.
 * Sizing: the bitset starts at 4 bits per unit and is folded in half (OR of the halves,
 * which is exact because bits are indexed by the hash's low bits) while it stays at most
 * MAX_FILL full, so a repetitive block gets a small filter and a varied one a large one.
 */

/**
 * Folded UTF-16 units per block the arena aims for (blocks end on record boundaries).
 * Small enough that an AND of two ~1% words passes few blocks: at 32 Ki units ~70% of
 * blocks held both words and the warm AND query scanned 7.4 M units (5.3 ms); at 8 Ki
 * it scans 1.8 M (2.3 ms) for ~1% more resident bytes (blooms are sized per unit).
 */
export const BLOCK_TARGET_UNITS = 8 * 1024;
/** Smallest and largest bitset, in bits (powers of two). */
const MIN_BITS = 256;
const MAX_BITS = 1 << 21;
/** Highest fraction of set bits a folded filter may have (~28% false positives per trigram). */
const MAX_FILL = 0.28;

/** 32-bit hash of a trigram of UTF-16 units; low bits are well mixed (murmur3 finalizer). */
export function trigramHash(c0: number, c1: number, c2: number): number {
  let h = (c0 | (c1 << 16)) ^ Math.imul(c2, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function popcount(bits: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) {
    let v = bits[i]!;
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return n;
}

/** Builds the filter over every trigram of `s`. */
export function buildBloom(s: string): Uint32Array {
  let m = MIN_BITS;
  while (m < s.length * 4 && m < MAX_BITS) m *= 2;
  const bits = new Uint32Array(m >>> 5);
  const mask = m - 1;
  if (s.length >= 3) {
    let c0 = s.charCodeAt(0);
    let c1 = s.charCodeAt(1);
    for (let i = 2; i < s.length; i++) {
      const c2 = s.charCodeAt(i);
      const h = trigramHash(c0, c1, c2) & mask;
      bits[h >>> 5]! |= 1 << (h & 31);
      c0 = c1;
      c1 = c2;
    }
  }
  return foldSparse(bits);
}

/**
 * Halves the filter (OR of its halves: a hash keeps its low bits) while the result stays
 * at most MAX_FILL full and above MIN_BITS, so sparse blocks cost few bytes.
 */
function foldSparse(bits: Uint32Array): Uint32Array {
  while (bits.length > MIN_BITS >>> 5) {
    const half = bits.length >>> 1;
    const folded = new Uint32Array(half);
    for (let i = 0; i < half; i++) folded[i] = bits[i]! | bits[i + half]!;
    if (popcount(folded) > MAX_FILL * half * 32) break;
    bits = folded;
  }
  return bits;
}

/** Distinct trigram hashes of a folded needle, or null when it is shorter than three units. */
export function needleTrigrams(needle: string): Uint32Array | null {
  if (needle.length < 3) return null;
  const hs = new Set<number>();
  for (let i = 2; i < needle.length; i++) {
    hs.add(trigramHash(needle.charCodeAt(i - 2), needle.charCodeAt(i - 1), needle.charCodeAt(i)));
  }
  return Uint32Array.from(hs);
}

/** False when the filter proves no trigram set `hashes` can all be in the block. */
export function bloomMayContain(bits: Uint32Array, hashes: Uint32Array): boolean {
  return bloomMayContainAt(bits, 0, bits.length, hashes);
}

/**
 * bloomMayContain over the filter stored at `words[off, off + len)` (len a power of two):
 * a segment keeps every block's filter in one array (store/segment_layout.ts).
 */
export function bloomMayContainAt(
  words: Uint32Array,
  off: number,
  len: number,
  hashes: Uint32Array,
): boolean {
  const mask = len * 32 - 1;
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]! & mask;
    if ((words[off + (h >>> 5)]! & (1 << (h & 31))) === 0) return false;
  }
  return true;
}

/**
 * Per-generation summary: one Bloom bitset over every bigram AND trigram of all folded
 * texts of a generation, kept resident after the generation itself is evicted, so a scan
 * skips generations that cannot hold a needle without loading them (a rare word or a
 * no-hit query over a corpus larger than the arena touches only the few generations whose
 * summary passes). Bigrams make two-unit needles (東京) filterable too. Sized at 2 bits per
 * unit (capped at SUMMARY_MAX_BITS), then folded while at most MAX_FILL full.
 */
const SUMMARY_MAX_BITS = 1 << 22;
/** Bigram hashes use a third "unit" outside UTF-16, so they never equal a trigram's. */
const BIGRAM_TAG = 0x10000;

/** Builds the summary of a generation's folded block texts. */
export function buildSummary(texts: readonly string[]): Uint32Array {
  let units = 0;
  for (const t of texts) units += t.length;
  let m = MIN_BITS;
  while (m < units * 2 && m < SUMMARY_MAX_BITS) m *= 2;
  const bits = new Uint32Array(m >>> 5);
  const mask = m - 1;
  for (const s of texts) {
    if (s.length < 2) continue;
    let c0 = s.charCodeAt(0);
    let c1 = s.charCodeAt(1);
    let h = trigramHash(c0, c1, BIGRAM_TAG) & mask;
    bits[h >>> 5]! |= 1 << (h & 31);
    for (let i = 2; i < s.length; i++) {
      const c2 = s.charCodeAt(i);
      h = trigramHash(c0, c1, c2) & mask;
      bits[h >>> 5]! |= 1 << (h & 31);
      h = trigramHash(c1, c2, BIGRAM_TAG) & mask;
      bits[h >>> 5]! |= 1 << (h & 31);
      c0 = c1;
      c1 = c2;
    }
  }
  return foldSparse(bits);
}

/** Summary hashes of a folded needle: its trigrams, or its bigram; null under two units. */
export function needleSummaryHashes(needle: string): Uint32Array | null {
  if (needle.length < 2) return null;
  if (needle.length === 2) {
    return Uint32Array.of(trigramHash(needle.charCodeAt(0), needle.charCodeAt(1), BIGRAM_TAG));
  }
  return needleTrigrams(needle);
}
