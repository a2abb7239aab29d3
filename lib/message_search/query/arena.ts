/**
 * The resident fold arena: parsed + folded shard entries in a byte-bounded LRU keyed by
 * generation file name. Generation files are immutable and content-named, so an entry is
 * valid for as long as any manifest names it, an appended segment loads only itself, and
 * no invalidation is ever needed: eviction is purely about memory. Invariants:
 *  - resident bytes never exceed capBytes after a load returns (an entry larger than the
 *    cap is handed to its query but not kept);
 *  - one disk read per generation at a time: concurrent queries share an in-flight load;
 *  - active flags are derived once per (session key, generations list) and cached per
 *    key; a changed list replaces the key's flags, keys no manifest names are pruned;
 *  - load cost is learned from this arena's own loads (loadCostMs), and a generation a
 *    scan refused to start loading for time is remembered (defer) so the next scan that
 *    reaches it loads it whatever the prediction says: retries always make progress;
 *  - every generation loaded once leaves its bigram/trigram summary (trigram.ts) behind,
 *    resident after the entry itself is evicted and dropped only when no manifest names
 *    the generation: scans consult it to skip generations without loading them.
 * Errors: store.loadSegment's errors propagate to the caller (on CorruptGenerationError /
 * NotFoundError the scan skips the session, names it in the page's `degraded` block and
 * hands it to onDamage — never silently, F8 — and records it here via noteFailure). A
 * failed load is never cached: the next scan reads the file again (re-derived by then,
 * usually under the same content-derived name).
 */
import type { Store } from "../store/mod.ts";
import { type ActiveFlags, deriveSessionActive } from "./active.ts";
import { buildShardEntry, type ShardEntry } from "./shard_entry.ts";
import type { ArenaStats } from "./types.ts";

/** Failed generations remembered for stats. */
const FAILED_KEEP = 16;
/**
 * Load cost assumed before this arena has timed any load: store read + hash + parse +
 * validation + fold + filters, per record. Measured 8–10 µs on the benchmark machine
 * (a 16,000-record generation: 100–125 ms in store.loadSegment plus the build).
 */
const DEFAULT_LOAD_MS_PER_RECORD = 0.01;
/** Records of timed loads the cost estimate averages over (older ones decay). */
const COST_WINDOW_RECORDS = 200_000;

/** A loaded entry and the generation bytes this call read from disk (0 when shared). */
export interface LoadResult {
  entry: ShardEntry;
  freshBytes: number;
}

/** Byte-bounded LRU of shard entries plus the per-session active-flag cache. */
export class Arena {
  readonly #cap: number;
  /** Map iteration order is the LRU order: first = least recently used. */
  readonly #entries = new Map<string, ShardEntry>();
  readonly #inflight = new Map<string, Promise<ShardEntry>>();
  readonly #active = new Map<string, { sig: string; flags: ActiveFlags }>();
  readonly #summaries = new Map<string, Uint32Array>();
  #summaryBytes = 0;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  #loadedBytes = 0;
  #failedLoads = 0;
  #failed: string[] = [];
  /** Generations a scan refused to load for time; the next scan reaching one loads it. */
  readonly #deferred = new Set<string>();
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

  /** The resident entry for `name` (marked most recently used), or undefined. */
  get(name: string): ShardEntry | undefined {
    const e = this.#entries.get(name);
    if (e === undefined) return undefined;
    this.#hits++;
    this.#entries.delete(name);
    this.#entries.set(name, e);
    return e;
  }

  /** Loads `name` through the store (or joins a load in flight), keeps it if it fits. */
  async load(store: Store, name: string): Promise<LoadResult> {
    const resident = this.get(name);
    if (resident) return { entry: resident, freshBytes: 0 };
    const pending = this.#inflight.get(name);
    if (pending) return { entry: await pending, freshBytes: 0 };
    this.#misses++;
    const t0 = performance.now();
    const p = (async () => buildShardEntry(name, await store.loadSegment(name)))();
    this.#inflight.set(name, p);
    try {
      const entry = await p;
      this.#noteCost(performance.now() - t0, entry.count);
      this.#deferred.delete(name);
      this.#loadedBytes += entry.diskBytes;
      this.#insert(entry);
      return { entry, freshBytes: entry.diskBytes };
    } finally {
      this.#inflight.delete(name);
    }
  }

  /** Resident record count of generation `name`, or 0 (no LRU touch). */
  residentRecords(name: string): number {
    return this.#entries.get(name)?.count ?? 0;
  }

  /**
   * Predicted wall ms to load `records` records from disk, from this arena's own loads
   * (so a slow disk or a busy machine predicts slower). Loading is not interruptible:
   * the scan consults this before starting a load that could overrun the time budget.
   */
  loadCostMs(records: number): number {
    const rate = this.#costRecords > 0
      ? this.#costMs / this.#costRecords
      : DEFAULT_LOAD_MS_PER_RECORD;
    return records * rate;
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
    // A segment of 0 records still costs a read; count it as one so the rate stays finite.
    const n = Math.max(1, records);
    const keep = Math.min(1, COST_WINDOW_RECORDS / (this.#costRecords + n));
    this.#costMs = this.#costMs * keep + ms;
    this.#costRecords = this.#costRecords * keep + n;
  }

  /** The resident summary of generation `name`, if it was ever loaded (no LRU touch). */
  summaryOf(name: string): Uint32Array | undefined {
    return this.#summaries.get(name);
  }

  /** Drops summaries (and deferrals) of generations no manifest names any more. */
  pruneSummaries(live: ReadonlySet<string>): void {
    for (const name of this.#deferred) if (!live.has(name)) this.#deferred.delete(name);
    for (const [name, s] of this.#summaries) {
      if (live.has(name)) continue;
      this.#summaries.delete(name);
      this.#summaryBytes -= s.byteLength;
    }
  }

  #insert(e: ShardEntry): void {
    if (!this.#summaries.has(e.name)) {
      this.#summaries.set(e.name, e.summary);
      this.#summaryBytes += e.summary.byteLength;
    }
    if (this.#entries.has(e.name)) return;
    if (e.bytes > this.#cap) {
      this.#evictions++;
      return;
    }
    this.#entries.set(e.name, e);
    this.#bytes += e.bytes;
    for (const [name, old] of this.#entries) {
      if (this.#bytes <= this.#cap) break;
      this.#entries.delete(name);
      this.#bytes -= old.bytes;
      this.#evictions++;
    }
  }

  /** Active flags of session `key` whose shard is `entries` (= the manifest's `gens`). */
  activeFor(
    key: string,
    { gens, entries }: { gens: readonly string[]; entries: readonly ShardEntry[] },
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

  /** Records a generation that could not be loaded (missing or corrupt). */
  noteFailure(name: string): void {
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
      summaries: this.#summaries.size,
      summaryBytes: this.#summaryBytes,
    };
  }
}
