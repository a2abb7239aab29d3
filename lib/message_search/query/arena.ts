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
 *  - every generation loaded once leaves its bigram/trigram summary (trigram.ts) behind,
 *    resident after the entry itself is evicted and dropped only when no manifest names
 *    the generation: scans consult it to skip generations without loading them.
 * Errors: store.loadSegment's errors propagate to the caller (the engine skips a session
 * on CorruptGenerationError / NotFoundError and records it here via noteFailure).
 */
import type { Store } from "../store/mod.ts";
import { type ActiveFlags, deriveSessionActive } from "./active.ts";
import { buildShardEntry, type ShardEntry } from "./shard_entry.ts";
import type { ArenaStats } from "./types.ts";

/** Failed generations remembered for stats. */
const FAILED_KEEP = 16;

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
    const p = (async () => buildShardEntry(name, await store.loadSegment(name)))();
    this.#inflight.set(name, p);
    try {
      const entry = await p;
      this.#loadedBytes += entry.diskBytes;
      this.#insert(entry);
      return { entry, freshBytes: entry.diskBytes };
    } finally {
      this.#inflight.delete(name);
    }
  }

  /** The resident summary of generation `name`, if it was ever loaded (no LRU touch). */
  summaryOf(name: string): Uint32Array | undefined {
    return this.#summaries.get(name);
  }

  /** Drops summaries of generations no manifest names any more. */
  pruneSummaries(live: ReadonlySet<string>): void {
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
