/**
 * The resident arena: segment views (store/segment_view.ts — the generation file's bytes
 * in one buffer, typed arrays over it, no per-record objects) in a byte-bounded LRU keyed
 * by generation file name. Generation files are immutable and content-named, so an entry
 * is valid for as long as any manifest names it, an appended segment loads only itself,
 * and no invalidation is ever needed: eviction is purely about memory. Invariants:
 *  - an entry's bytes are its buffer plus the view's fixed overhead — the real resident
 *    size (a scan's decoded block strings are garbage of that scan, never kept) — and
 *    resident bytes never exceed capBytes after a load returns (an entry larger than the
 *    cap is handed to its query but not kept);
 *  - one disk read per generation at a time: concurrent queries share an in-flight load;
 *  - scan-resistant: a scan (beginScan) that needs more than the cap does not flush the
 *    arena through itself. LRU alone would: a broad query repeated over a store larger
 *    than the cap evicted each entry before its next use and hit nothing (at 1× a broad
 *    relevance query reloaded 900–1,450 generations every time). So a load for a scan
 *    evicts only entries that scan has not used; once every resident entry was used by
 *    it, the new entry is handed to the query and not kept, and the resident part stays
 *    for the next query;
 *  - active flags are derived once per (session key, generations list) and cached per
 *    key; a changed list replaces the key's flags, keys no manifest names are pruned;
 *  - load cost is learned from this arena's own loads (loadCostMs), and a generation a
 *    scan refused to start loading for time is remembered (defer) so the next scan that
 *    reaches it loads it whatever the prediction says: retries always make progress;
 *  - every generation loaded once leaves its bigram/trigram summary (trigram.ts) behind (a
 *    copy: the view's is a slice of its buffer), resident after the entry itself is
 *    evicted and dropped only when no manifest names the generation; the store's summaries
 *    pack (adoptPack) gives a cold arena the summaries of generations it never loaded.
 *    Scans consult them to skip generations without loading them.
 * Errors: store.loadSegment's errors propagate to the caller (on CorruptGenerationError /
 * NotFoundError the scan skips the session, names it in the page's `degraded` block and
 * hands it to onDamage — never silently, F8 — and records it here via noteFailure). A
 * failed load is never cached: the next scan reads the file again (re-derived by then,
 * usually under the same content-derived name). Entries are loaded with lazy block
 * checks, so reading a resident entry can throw CorruptGenerationError too (a block whose
 * bytes fail their crc): the scan handles it like a failed load and drops the entry
 * (noteFailure), so the re-derived file under the same name is read afresh. The blocks a
 * query did not read are checked after it (verifyPending, off the query's path): a
 * resident copy of damaged bytes must not outlive the repair that rewrites its file
 * under the same name.
 */
import {
  CorruptGenerationError,
  type SegmentView,
  type ShardDamage,
  type Store,
  type Summaries,
} from "../store/mod.ts";
import { type ActiveFlags, deriveSessionActive } from "./active.ts";
import type { ArenaStats } from "./types.ts";

/** Failed generations remembered for stats. */
const FAILED_KEEP = 16;
/**
 * Load cost: a fixed part per file (the contained open: lstat, open, fstat, close) plus a
 * part per record (the read, the checksums and the structure check, all linear in the
 * file). The fixed part is a measured constant; the per-record rate is learned from this
 * arena's own loads (a slow disk or a busy machine predicts slower). Defaults measured
 * on the benchmark machine with bench/probe_load.ts (see bench/RESULTS.md, issue 16).
 */
export const LOAD_FIXED_MS = 0.15;
const DEFAULT_LOAD_MS_PER_RECORD = 0.0004;
/** Records of timed loads the cost estimate averages over (older ones decay). */
const COST_WINDOW_RECORDS = 200_000;

/** A loaded entry and the generation bytes this call read from disk (0 when shared). */
export interface LoadResult {
  entry: SegmentView;
  freshBytes: number;
}

/** Byte-bounded LRU of segment views plus the per-session active-flag cache. */
export class Arena {
  readonly #cap: number;
  /** Map iteration order is the LRU order: first = least recently used. */
  readonly #entries = new Map<string, SegmentView>();
  /** Per resident entry: the last scan that used it (beginScan's numbers). */
  readonly #usedBy = new Map<string, number>();
  #scans = 0;
  readonly #inflight = new Map<string, Promise<SegmentView>>();
  readonly #active = new Map<string, { sig: string; flags: ActiveFlags }>();
  /** Summaries of generations loaded here (copies), and the store's pack. */
  readonly #summaries = new Map<string, Uint32Array>();
  #pack: Summaries = new Map();
  #summaryBytes = 0;
  #packBytes = 0;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  #loadedBytes = 0;
  #failedLoads = 0;
  #failed: string[] = [];
  /** Generations a scan refused to load for time; the next scan reaching one loads it. */
  readonly #deferred = new Set<string>();
  /** Resident entries loaded with lazy checks whose every block is not checked yet. */
  readonly #unverified = new Set<string>();
  /** Decayed sums of wall ms and records over timed loads (the cost estimate). */
  #costMs = 0;
  #costRecords = 0;

  constructor(capBytes: number) {
    if (!Number.isFinite(capBytes) || capBytes <= 0) {
      throw new RangeError(`Arena size must be positive bytes: got "${capBytes}"`);
    }
    this.#cap = capBytes;
  }

  /** True when `name` is resident (no LRU touch). */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** A new scan's number, for load (see the header's scan rule). */
  beginScan(): number {
    return ++this.#scans;
  }

  /** The resident entry for `name` (marked most recently used), or undefined. */
  get(name: string, scan?: number): SegmentView | undefined {
    const e = this.#entries.get(name);
    if (e === undefined) return undefined;
    this.#hits++;
    this.#entries.delete(name);
    this.#entries.set(name, e);
    if (scan !== undefined) this.#usedBy.set(name, scan);
    return e;
  }

  /**
   * Loads `name` through the store (or joins a load in flight), keeps it if it fits;
   * `scan` (beginScan) applies the header's scan rule.
   */
  async load(store: Store, name: string, scan?: number): Promise<LoadResult> {
    const resident = this.get(name, scan);
    if (resident) return { entry: resident, freshBytes: 0 };
    const pending = this.#inflight.get(name);
    if (pending) return { entry: await pending, freshBytes: 0 };
    this.#misses++;
    const t0 = performance.now();
    // Lazy checks: a block is checked against its crc when a scan first reads it.
    const p = store.loadSegment(name, { verify: "lazy" });
    this.#inflight.set(name, p);
    try {
      const entry = await p;
      this.#noteCost(performance.now() - t0, entry.count);
      this.#deferred.delete(name);
      this.#loadedBytes += entry.fileBytes;
      if (this.#insert(entry, scan)) this.#unverified.add(name);
      return { entry, freshBytes: entry.fileBytes };
    } finally {
      this.#inflight.delete(name);
    }
  }

  /** Resident record count of generation `name`, or 0 (no LRU touch). */
  residentRecords(name: string): number {
    return this.#entries.get(name)?.count ?? 0;
  }

  /**
   * Predicted wall ms to load `records` records in `files` generation files from disk
   * (see LOAD_FIXED_MS). Loading is not interruptible: the scan consults this before
   * starting a load that could overrun the time budget.
   */
  loadCostMs(records: number, files = 1): number {
    const rate = this.#costRecords > 0
      ? this.#costMs / this.#costRecords
      : DEFAULT_LOAD_MS_PER_RECORD;
    return files * LOAD_FIXED_MS + records * rate;
  }

  /** Remembers that a scan skipped loading `name` because it could not end in time. */
  defer(name: string): void {
    this.#deferred.add(name);
  }

  /** True when a scan skipped loading `name` for time and nothing loaded it since. */
  wasDeferred(name: string): boolean {
    return this.#deferred.has(name);
  }

  #noteCost(ms: number, records: number): void {
    // The per-record part only; a segment of 0 records counts as one so the rate stays
    // finite.
    const n = Math.max(1, records);
    const keep = Math.min(1, COST_WINDOW_RECORDS / (this.#costRecords + n));
    this.#costMs = this.#costMs * keep + Math.max(0, ms - LOAD_FIXED_MS);
    this.#costRecords = this.#costRecords * keep + n;
  }

  /** The summary of generation `name`, if it was loaded or is in the pack (no LRU touch). */
  summaryOf(name: string): Uint32Array | undefined {
    return this.#summaries.get(name) ?? this.#pack.get(name);
  }

  /** Takes the store's summaries pack (replacing the previous one). */
  adoptPack(pack: Summaries): void {
    this.#pack = pack;
    this.#packBytes = 0;
    for (const s of pack.values()) this.#packBytes += s.byteLength;
    // Copies of summaries the pack now has are redundant.
    for (const [name, s] of this.#summaries) {
      if (!pack.has(name)) continue;
      this.#summaries.delete(name);
      this.#summaryBytes -= s.byteLength;
    }
  }

  /** How many of `names` have no known summary. */
  unsummarized(names: Iterable<string>): number {
    let n = 0;
    for (const name of names) if (this.summaryOf(name) === undefined) n++;
    return n;
  }

  /** Drops summaries (and deferrals) of generations no manifest names any more. */
  pruneSummaries(live: ReadonlySet<string>): void {
    for (const name of this.#deferred) if (!live.has(name)) this.#deferred.delete(name);
    for (const [name, s] of this.#summaries) {
      if (live.has(name)) continue;
      this.#summaries.delete(name);
      this.#summaryBytes -= s.byteLength;
    }
    for (const [name, s] of this.#pack) {
      if (live.has(name)) continue;
      this.#pack.delete(name);
      this.#packBytes -= s.byteLength;
    }
  }

  /** True when a resident entry still has blocks to check (see verifyPending). */
  hasUnverified(): boolean {
    return this.#unverified.size > 0;
  }

  /**
   * Checks every block of one resident entry loaded with lazy checks; a damaged one is
   * dropped (noteFailure) and returned as damage. Null when none is pending.
   */
  verifyNext(): ShardDamage | null {
    for (const name of this.#unverified) {
      this.#unverified.delete(name);
      const e = this.#entries.get(name);
      if (e === undefined) continue;
      try {
        e.verify();
        return null;
      } catch (err) {
        if (!(err instanceof CorruptGenerationError)) throw err;
        this.noteFailure(name);
        return { key: e.key, generation: name };
      }
    }
    return null;
  }

  /** Keeps `e` if it fits (true when it is resident now); `scan`: the header's rule. */
  #insert(e: SegmentView, scan?: number): boolean {
    if (this.summaryOf(e.name) === undefined) {
      // A copy: the view's summary would keep the whole buffer alive after eviction.
      const s = e.summary.slice();
      this.#summaries.set(e.name, s);
      this.#summaryBytes += s.byteLength;
    }
    if (this.#entries.has(e.name)) return true;
    if (e.bytes > this.#cap) {
      this.#evictions++;
      return false;
    }
    if (scan !== undefined) {
      // Room only from entries this scan has not used (they sit first in LRU order, so
      // counting stops at the first one it used).
      let free = this.#cap - this.#bytes;
      for (const [name, old] of this.#entries) {
        if (free >= e.bytes || this.#usedBy.get(name) === scan) break;
        free += old.bytes;
      }
      if (free < e.bytes) {
        this.#evictions++; // handed to the query, not kept
        return false;
      }
      this.#usedBy.set(e.name, scan);
    }
    this.#entries.set(e.name, e);
    this.#bytes += e.bytes;
    for (const [name, old] of this.#entries) {
      if (this.#bytes <= this.#cap) break;
      this.#drop(name, old);
      this.#evictions++;
    }
    return true;
  }

  #drop(name: string, old: SegmentView): void {
    this.#entries.delete(name);
    this.#usedBy.delete(name);
    this.#unverified.delete(name);
    this.#bytes -= old.bytes;
  }

  /** Active flags of session `key` whose shard is `entries` (= the manifest's `gens`). */
  activeFor(
    key: string,
    { gens, entries }: { gens: readonly string[]; entries: readonly SegmentView[] },
  ): ActiveFlags {
    const sig = gens.join(",");
    const cached = this.#active.get(key);
    if (cached && cached.sig === sig) return cached.flags;
    const flags = deriveSessionActive(entries);
    this.#active.set(key, { sig, flags });
    return flags;
  }

  /** Drops cached active flags of sessions no longer in the manifest. */
  pruneActive(live: ReadonlySet<string>): void {
    for (const key of this.#active.keys()) if (!live.has(key)) this.#active.delete(key);
  }

  /**
   * Records a generation that could not be loaded or read (missing or corrupt) and drops
   * it if resident: its file is re-derived under the same name, and a resident copy of the
   * damaged bytes would keep failing.
   */
  noteFailure(name: string): void {
    const e = this.#entries.get(name);
    if (e !== undefined) this.#drop(name, e);
    this.#failedLoads++;
    this.#failed.push(name);
    if (this.#failed.length > FAILED_KEEP) this.#failed.shift();
  }

  stats(): ArenaStats {
    return {
      bytes: this.#bytes,
      capBytes: this.#cap,
      shards: this.#entries.size,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      loadedBytes: this.#loadedBytes,
      failedLoads: this.#failedLoads,
      failedGenerations: [...this.#failed],
      activeCached: this.#active.size,
      summaries: this.#summaries.size + this.#pack.size,
      summaryBytes: this.#summaryBytes + this.#packBytes,
    };
  }
}
