/**
 * One piece over the 600-line guide (≈ 860 lines), on purpose: the sweep loop, the ordered
 * extraction window and the per-unit plan/finish steps share one sweep's unit bookkeeping,
 * which split would travel between modules as a mutable object (the full why follows).
 * The indexer: sweeps sources, classifies each file against its stored cursor, extracts
 * incrementally and publishes one batch per sweep. It decides WHAT a sweep reads, never
 * WHEN: the daemon's freshness scheduler (freshness/) starts sweeps from file events, a
 * safety-net period and explicit requests; one-shot CLI commands sweep when asked. No
 * search ever waits for a sweep unless its caller asked for one (issue 28).
 * A sweep is full, or scoped to the sources and paths a watcher saw change
 * ({@link SweepScope}): a scoped sweep still lists each named source completely (so a
 * deleted file is noticed as gone), but plans only the units whose files the changed
 * paths touch, plus damaged, quarantined and never-seen ones; every other unit counts as
 * unchanged without a stat. GC and staging drains run on full sweeps only.
 * A sweep publishes its updates as one batch, or in several once the
 * pending records pass PUBLISH_BATCH_UNITS of text (a cold backfill then never holds the
 * whole corpus in memory; each batch is a complete, valid revision on its own; one batch
 * publishes while the next is extracted: sweep/publish_batches.ts holds that state).
 * After a sweep that moved the manifest the lexicon refresh runs in the background
 * (sweep/lexicon_refresh.ts). What remains here is one piece on purpose: the sweep loop, the ordered extraction window and the per-unit
 * plan/finish steps all read and write the same unit bookkeeping (publishes-nothing cache,
 * re-derive and damage sets) within one sweep; split, that state would have to be passed
 * between modules as a mutable object, which is the coupling the earlier splits removed.
 * The archive's two options (`band`: which units a sweep owns; `follower`: the work
 * after each sweep, awaited by settled() and stop()) are read at those same steps.
 *
 * Parallel extraction (issue 16 §4): extract calls run ahead of publishing, on a worker
 * pool (pool/: one worker per core; units read from the start go there, everything else
 * runs here one call at a time) inside a bounded window (EXTRACT_WINDOW_UNITS, and
 * EXTRACT_WINDOW_BYTES of finished results parked behind a slow head). Results are
 * consumed strictly in discovery order, so the updates, the batch boundaries and so the
 * store are the same with one worker or many; this thread stays the ONE publisher. A
 * unit that fails in a worker is counted like one that fails here; a crashed worker is
 * replaced and its unit retried once (pool/extract_pool.ts). Workers exist only while a
 * sweep needs them. Sources
 * that publish nothing (wrapper sessions, nothing said yet,
 * everything older than the window) are remembered in process, not in the store. One
 * source's failure is isolated: it is counted and every other source still publishes.
 *
 * Bands (IndexerOptions.band): the archive (archive/) runs a second Indexer over its own
 * store that reads only what the main index's window leaves out; a band is asked once per
 * sweep, and a unit it leaves is neither read nor reported gone.
 *
 * Damaged shards (F8): a reader that finds a generation damaged (the query engine, the
 * detail view) calls reportDamage, which starts a sweep at once in the background — never
 * inline with the query, coalesced with a sweep in flight (sweep() shares it; damage
 * reported after that sweep took its list gets exactly one follow-up sweep), so at most
 * one sweep ever runs. Every sweep begins by quarantining the reported shards through the
 * store's publish path (quarantine.ts: only while the entry still names the reported
 * generation and that file still fails to load — a stale report never costs a healthy
 * shard), then re-derives every quarantined shard from its sources with a full read
 * (prior = null) in the same sweep. The startup check quarantines what it
 * finds the same way, as does a compaction that meets a damaged base. A quarantined shard
 * whose sources are gone cannot be re-derived: it stays quarantined (coverage reports it
 * lost) and nothing re-triggers a sweep for it, so damage never loops.
 * A session is reported gone only when discovery could look for it: sessions published
 * from a file discovery held (Discovery.held: a database it could not list) keep their
 * state, and the files discovery skipped are named in the source's errors (its notes).
 */
import type { Store } from "./store/mod.ts";
import {
  type ManifestEntry,
  sessionKey,
  type ShardDamage,
  type ShardUpdate,
} from "./store/types.ts";
import { cursorFingerprint, cursorWatermark, statSource } from "./cursor.ts";
import { LexiconRefresher } from "./sweep/lexicon_refresh.ts";
import { PublishBatches } from "./sweep/publish_batches.ts";
import { filesSignature, filesStat, resultBytes, unitTouched } from "./sweep/unit_stat.ts";
import type { Extractor, PriorShard, SessionUnit } from "./extract/mod.ts";
import type { Source } from "./record.ts";
import { findDamage, quarantineDamaged } from "./quarantine.ts";
import {
  defaultPoolSize,
  type ExtractionReport,
  ExtractPool,
  OrderedWindow,
  type Settled,
  STORE_TAKES_ENCODED,
  type UnitJob,
  type UnitResult,
  UnitRouter,
  workerSource,
} from "./pool/mod.ts";

/**
 * Pending record text (UTF-16 units) after which a sweep publishes what it has so far.
 * Bounds a backfill's memory to about this much prose (plus one unit being extracted).
 */
export const PUBLISH_BATCH_UNITS = 8 * 1024 * 1024;

/**
 * Units whose extraction may be under way or waiting to be consumed at once, with a pool
 * (without one: 1, exactly the sequential sweep). Results are consumed in discovery
 * order, so a slow unit at the head holds the ones behind it: the window is wide enough
 * that the other workers keep busy behind a large session.
 */
export const EXTRACT_WINDOW_UNITS = 32;
/**
 * What finished results waiting behind a slow head may hold (their encoded segments, or
 * their record text when handed over) before no further unit is started.
 */
export const EXTRACT_WINDOW_BYTES = 64 * 1024 * 1024;

/** See IndexerOptions.follower. */
export interface SweepFollower {
  afterSweep(r: SweepReport): void;
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** Which units a banded indexer owns (IndexerOptions.band): decided per sweep. */
export interface SweepBand {
  /** True: the unit belongs to another index; this sweep neither reads it nor calls it gone. */
  leaves(key: string): boolean;
  /** For a unit this store does not hold yet: whether files last modified then are read. */
  takes(mtimesMs: readonly number[]): boolean;
}

/** Options for {@link Indexer}. */
export interface IndexerOptions {
  store: Store;
  /** The extractors, or a provider re-run at every sweep (roots can change between sweeps). */
  extractors: Extractor[] | (() => Promise<Extractor[]>);
  /** Staging entry directories to drain once everything inside them is published. */
  staging?: () => Promise<string[]>;
  /** Retention window; sessions entirely older are not published. null = forever. */
  windowDays: number | null;
  now?: () => number;
  /** Run store GC every this many full sweeps. @default 120 */
  gcEvery?: number;
  /** Pending record text that makes a sweep publish. @default PUBLISH_BATCH_UNITS */
  publishBatchUnits?: number;
  logger?: (line: string) => void;
  onProgress?: (p: SweepProgress) => void;
  /**
   * Keep the store's lexicon.pack current (the daemon): after the first sweep and after
   * every sweep that moved the manifest, Store.refreshLexicon runs in the background, off the
   * query path (it rebuilds only when the lexicon is stale). settled() and stop() wait
   * for it. Off for one-shot commands, which must not outlive their answer.
   * @default false
   */
  lexicon?: boolean;
  /**
   * Extraction workers (issue 16 §4): how many units are extracted at once on worker
   * threads. 1 extracts every unit in this thread; where workers cannot start
   * (pool/extract_pool.ts) extraction stays in this thread whatever the number. The
   * outcome is the same either way.
   * @default defaultPoolSize() (one per core)
   */
  workers?: number;
  /**
   * Told, after each sweep, which units it listed — every unit of a full sweep (those
   * older than the window and those that publish nothing too), the ones a scoped sweep's
   * changes touched — and the keys it found gone. Tombstoned units (deleted by the user
   * through Intendant) are left out. The vault's Keeper (lib/vault) listens here; it must
   * return at once (it queues its work).
   */
  onListed?: (l: { units: readonly SessionUnit[]; gone: readonly string[] }) => void;
  /**
   * Work that follows this indexer's sweeps (the archive, archive/): told each sweep's
   * report once it is published (it must return at once and queue its work); settled()
   * and stop() wait for it too, so it never outlives the indexer.
   */
  follower?: SweepFollower;
  /**
   * The share of the sources this indexer owns, asked once at the start of every sweep
   * (the archive, archive/: what the main index's window leaves out). Absent: every unit.
   */
  band?: () => Promise<SweepBand>;
  /** Routing, window and liveness knobs of the pool (pool/unit_router.ts, extract_pool.ts). */
  pool?: {
    minUnitBytes?: number;
    startBytes?: number;
    /** @default EXTRACT_WINDOW_UNITS */
    windowUnits?: number;
    /** @default EXTRACT_WINDOW_BYTES */
    windowBytes?: number;
    livenessMs?: number;
    pingEveryMs?: number;
  };
}

/** Live progress of a sweep, per source (the CLI's progress line, the coverage endpoint). */
export interface SweepProgress {
  source: Source;
  /** Session units (transcript files) of this source met so far. */
  files: number;
  /** Sessions of this source published so far (publishing is batched: this lags). */
  sessions: number;
  /** Records of this source extracted so far this sweep, published or still pending. */
  records: number;
  elapsedMs: number;
}

/** What one sweep did, per source. */
export interface SweepReport {
  startedAtMs: number;
  durationMs: number;
  revision: number;
  sources: Record<string, SourceSweep>;
  rejected: { key: string; reason: string }[];
  /** Null for a full sweep; the sources a scoped sweep listed. */
  scope: Source[] | null;
  /** Shards this sweep quarantined before extracting (reported damage). */
  quarantined: string[];
  /** Where this sweep's units were extracted (workers or this thread). */
  extraction: ExtractionReport;
}

export interface SourceSweep {
  units: number;
  unchanged: number;
  published: number;
  recordsAdded: number;
  nothing: number;
  gone: number;
  errors: string[];
  /** Discovery and read skips found by this sweep, by reason. */
  skipped: Record<string, number>;
}

/**
 * What a scoped sweep reads: the sources whose watched roots saw a change, and the paths
 * that changed (files, or directories created, renamed or removed as a whole).
 */
export interface SweepScope {
  sources: ReadonlySet<Source>;
  paths: ReadonlySet<string>;
}

type ResolvedIndexerOptions =
  & Required<
    Omit<
      IndexerOptions,
      "onProgress" | "logger" | "staging" | "pool" | "onListed" | "follower" | "band"
    >
  >
  & Pick<
    IndexerOptions,
    "onProgress" | "logger" | "staging" | "pool" | "onListed" | "follower" | "band"
  >;

/** What consuming one window item needs (the item's work yields {@link Extracted}). */
type Pending =
  | {
    kind: "unit";
    ex: Extractor;
    unit: SessionUnit;
    entry: ManifestEntry | undefined;
    s: SourceSweep;
  }
  /** An update decided without extracting (a session whose sources vanished). */
  | { kind: "update"; update: ShardUpdate }
  /** A source's last item: its final progress counts. */
  | { kind: "source_end"; source: Source; s: SourceSweep };

/** A unit's extract result, and its files' signature when the in-process cache needs it. */
interface Extracted {
  result: UnitResult;
  sig: string | null;
}

/** A unit to extract: its job, and the bytes it reads when read from the start. */
interface UnitPlan {
  job: UnitJob;
  readBytes: number | null;
}

export class Indexer {
  readonly #o: ResolvedIndexerOptions;
  #inflight: Promise<SweepReport> | null = null;
  #lastDoneAt: number | null = null;
  #lastReport: SweepReport | null = null;
  #sweeps = 0;
  #stopped = false;
  /** key → signature of the files when they last published nothing. */
  #nothing = new Map<string, string>();
  /** Skips found in sessions that published nothing (e.g. a Kimi session over a bound). */
  #unpublishedSkips = new Map<string, { source: Source; skipped: Record<string, number> }>();
  #rederive = new Set<string>();
  /** Damage reported by readers since the last sweep took its list, by session key. */
  #damage = new Map<string, ShardDamage>();
  /** The list a sweep took, until its quarantine is published (coverage shows both). */
  #quarantining: ShardDamage[] = [];
  /** Set when a publish quarantined a shard after extraction (compaction over damage). */
  #followUp = false;
  #started = 0;
  /** The extraction pool, made on first use (undefined); null: this thread only. */
  #pool: ExtractPool | null | undefined = undefined;
  /** The band of the sweep in flight (IndexerOptions.band); null: every unit. */
  #band: SweepBand | null = null;
  /** Keeps lexicon.pack current after sweeps (IndexerOptions.lexicon); null: off. */
  readonly #lexicon: LexiconRefresher | null;

  constructor(o: IndexerOptions) {
    // Explicit `?? default`: a spread would let an explicit `undefined` erase the default.
    this.#o = {
      ...o,
      now: o.now ?? Date.now,
      gcEvery: o.gcEvery ?? 120,
      publishBatchUnits: o.publishBatchUnits ?? PUBLISH_BATCH_UNITS,
      workers: o.workers ?? defaultPoolSize(),
      lexicon: o.lexicon ?? false,
    };
    if (!Number.isInteger(this.#o.workers) || this.#o.workers < 1) {
      throw new RangeError(`Workers must be a positive integer, got ${this.#o.workers}`);
    }
    this.#lexicon = this.#o.lexicon
      ? new LexiconRefresher({ store: o.store, logger: o.logger })
      : null;
  }

  /** True once a sweep has completed (coverage leaves `building`). */
  get ready(): boolean {
    return this.#lastDoneAt !== null;
  }

  get lastReport(): SweepReport | null {
    return this.#lastReport;
  }

  get lastSweepAtMs(): number | null {
    return this.#lastDoneAt;
  }

  /** Skip counts of sessions that published nothing, per source (for coverage). */
  unpublishedSkips(): Partial<Record<Source, Record<string, number>>> {
    const out: Partial<Record<Source, Record<string, number>>> = {};
    for (const { source, skipped } of this.#unpublishedSkips.values()) {
      const into = (out[source] ??= {});
      for (const [k, n] of Object.entries(skipped)) into[k] = (into[k] ?? 0) + n;
    }
    return out;
  }

  /** Sweeps started since construction (completed or not). */
  get sweepsStarted(): number {
    return this.#started;
  }

  /** Forces a full re-derivation of these sessions on the next sweep (corrupt segments). */
  markForRederive(keys: Iterable<string>): void {
    for (const k of keys) this.#rederive.add(k);
  }

  /**
   * A reader found these generations damaged: they are quarantined and re-derived by a
   * sweep started now in the background (or right after the one in flight). Returns at
   * once; never throws (a failed repair sweep is logged, and the next reader that meets
   * the damage reports it again).
   */
  reportDamage(found: readonly ShardDamage[]): void {
    if (found.length === 0) return;
    for (const f of found) this.#damage.set(f.key, f);
    // In flight: sweep()'s end starts the follow-up when damage is still pending then.
    if (this.#inflight || this.#stopped) return;
    this.#repairInBackground();
  }

  /** Damage reported and not yet quarantined (coverage lists it with the quarantined). */
  pendingDamage(): ShardDamage[] {
    return [...this.#quarantining, ...this.#damage.values()];
  }

  #repairInBackground(): void {
    this.sweep().catch((err) =>
      this.#o.logger?.(
        `message index repair sweep failed: ${err instanceof Error ? err.message : String(err)}`,
      )
    );
  }

  /**
   * Startup maintenance: GC, then verify every referenced generation and quarantine the
   * shards that name a damaged one (the next sweep re-derives them).
   */
  async startup(): Promise<{ quarantined: string[] }> {
    const { store } = this.#o;
    await store.gc();
    const bad = await store.verifyAll();
    if (bad.length === 0) return { quarantined: [] };
    return { quarantined: await this.#quarantine(await findDamage(store, bad)) };
  }

  /** Quarantines the still-damaged shards of `found` (quarantine.ts); logs how many. */
  async #quarantine(found: readonly ShardDamage[]): Promise<string[]> {
    const keys = await quarantineDamaged(this.#o.store, found);
    if (keys.length > 0) {
      this.#o.logger?.(
        `message index: ${keys.length} damaged shard(s) quarantined for re-derivation`,
      );
    }
    return keys;
  }

  /**
   * Resolves once no sweep is running: the in-flight one and any follow-up it started
   * (a repair sweep a reader triggered, F8), and the lexicon refresh after them. Never
   * rejects; sweep errors are the sweep's.
   */
  async settled(): Promise<void> {
    while (this.#inflight || this.#lexicon?.running) {
      await (this.#inflight ?? this.#lexicon!.running)!.catch(() => null);
    }
    await this.#o.follower?.settled();
  }

  /** Resolves once no sweep is in flight (the lexicon refresh may still run). */
  async idle(): Promise<void> {
    while (this.#inflight) await this.#inflight.catch(() => null);
  }

  /** True while a sweep runs. */
  get sweeping(): boolean {
    return this.#inflight !== null;
  }

  /** No sweep starts after this; waits for the one in flight and the lexicon refresh. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#inflight) await this.#inflight.catch(() => null);
    await this.#lexicon?.stop();
    await this.#o.follower?.stop();
    this.#pool?.idle();
  }

  /** The extraction pool, made on first use; null when this process extracts in-thread. */
  #extractPool(): ExtractPool | null {
    if (this.#pool === undefined) {
      const source = this.#o.workers > 1 ? workerSource() : null;
      this.#pool = source
        ? new ExtractPool({
          size: this.#o.workers,
          source,
          livenessMs: this.#o.pool?.livenessMs,
          pingEveryMs: this.#o.pool?.pingEveryMs,
        })
        : null;
    }
    return this.#pool;
  }

  /**
   * Runs one sweep now (full, or scoped to `scope`); concurrent callers share the
   * in-flight one, whatever its scope (a caller that needs its own scoped sweep waits
   * for idle() first: the freshness scheduler does). When it ends with damage reported
   * after it took its list (or a shard quarantined by its own publish), one follow-up
   * sweep starts in the background.
   */
  sweep(scope: SweepScope | null = null): Promise<SweepReport> {
    if (!this.#inflight) {
      this.#inflight = this.#sweepOnce(scope).then((r) => {
        this.#lexicon?.afterSweep(r.revision);
        return r;
      }).finally(() => {
        this.#inflight = null;
        const again = this.#followUp || this.#damage.size > 0;
        this.#followUp = false;
        if (again && !this.#stopped) this.#repairInBackground();
      });
    }
    return this.#inflight;
  }

  async #sweepOnce(scope: SweepScope | null): Promise<SweepReport> {
    const { store } = this.#o;
    this.#started++;
    // Taken before anything is awaited: damage reported from here on gets the follow-up.
    // Dropped from the pending list even if the quarantine fails: the next reader that
    // meets the damage reports it again, and a failing store never loops sweeps.
    const damage = [...this.#damage.values()];
    this.#damage.clear();
    this.#quarantining = damage;
    let quarantined: string[];
    try {
      quarantined = await this.#quarantine(damage);
    } finally {
      this.#quarantining = [];
    }
    const all = typeof this.#o.extractors === "function"
      ? await this.#o.extractors()
      : this.#o.extractors;
    const extractors = scope ? all.filter((ex) => scope.sources.has(ex.source)) : all;
    const started = this.#o.now();
    const discovered: SessionUnit[] = [];
    const listed: SessionUnit[] = [];
    const goneKeys: string[] = [];
    // Before the manifest read: a band names what another index holds at least as of now.
    this.#band = this.#o.band ? await this.#o.band() : null;
    const manifest = await store.readManifest();
    const sources: Record<string, SourceSweep> = {};
    const batches = new PublishBatches({
      store,
      revision: manifest.revision,
      onCorruptBase: () => (this.#followUp = true),
      onAccepted: (u, records) => {
        this.#rederive.delete(u.key);
        // Re-derived from source: a damage report against its old files is stale now.
        if (u.kind === "replace") this.#damage.delete(u.key);
        if (u.kind === "replace" || u.kind === "append") {
          const s = sources[u.source]!;
          s.published++;
          s.recordsAdded += records;
        }
      },
    });
    const pool = this.#extractPool();
    const router = new UnitRouter({
      pool,
      // Workers encode only for a store that names its parser version (a segment's header
      // must carry it); otherwise they hand their records over.
      encode: STORE_TAKES_ENCODED && store.parserVersion !== undefined
        ? { parserVersion: store.parserVersion }
        : null,
      minUnitBytes: this.#o.pool?.minUnitBytes,
      startBytes: this.#o.pool?.startBytes,
    });
    const extracted = new Map<Source, number>();
    // Extraction runs ahead (on workers, or one call at a time here) while results are
    // consumed in discovery order: the batches, and so the store, are the same whatever
    // finished first.
    const window = new OrderedWindow<Extracted | null, Pending>({
      maxItems: pool ? this.#o.pool?.windowUnits ?? EXTRACT_WINDOW_UNITS : 1,
      maxWeight: this.#o.pool?.windowBytes ?? EXTRACT_WINDOW_BYTES,
      weigh: (x) => x === null ? 0 : resultBytes(x.result),
      consume: async (item: Settled<Extracted | null>, p: Pending) => {
        if (p.kind === "update") {
          batches.add(p.update);
          return;
        }
        if (p.kind === "source_end") {
          this.#progress(p.source, p.s, extracted.get(p.source) ?? 0, started);
          return;
        }
        if (!item.ok) {
          // B14: one unreadable source never aborts the sweep.
          const err = item.error;
          p.s.errors.push(`${p.unit.key}: ${err instanceof Error ? err.message : String(err)}`);
        } else if (item.value) {
          const u = this.#finishUnit(p.unit, p.entry, p.s, item.value);
          if (u) {
            batches.add(u.update, u.records, u.textUnits);
            extracted.set(p.unit.source, (extracted.get(p.unit.source) ?? 0) + u.records);
          }
        }
        if (batches.pendingUnits >= this.#o.publishBatchUnits) await batches.flush(false);
      },
    });
    try {
      for (const ex of extractors) {
        const s: SourceSweep = {
          units: 0,
          unchanged: 0,
          published: 0,
          recordsAdded: 0,
          nothing: 0,
          gone: 0,
          errors: [],
          skipped: {},
        };
        sources[ex.source] = s;
        let units: SessionUnit[];
        let held = new Set<string>();
        try {
          const d = await ex.discover();
          units = d.units;
          for (const [k, n] of Object.entries(d.skipped)) {
            s.skipped[`discovery:${k}`] = (s.skipped[`discovery:${k}`] ?? 0) + n;
          }
          held = new Set(d.held ?? []);
          for (const note of d.notes ?? []) s.errors.push(`discovery: ${note}`);
        } catch (err) {
          s.errors.push(`discovery: ${err instanceof Error ? err.message : String(err)}`);
          continue;
        }
        const seen = new Set<string>();
        for (const unit of units) {
          if (seen.has(unit.key)) continue;
          seen.add(unit.key);
          discovered.push(unit);
          s.units++;
          this.#progress(ex.source, s, extracted.get(ex.source) ?? 0, started);
          if (manifest.tombstones[unit.key] !== undefined) continue;
          if (this.#band?.leaves(unit.key)) {
            s.unchanged++;
            continue;
          }
          const entry = manifest.sessions[unit.key];
          if (scope && !this.#mustPlan(unit, entry, scope.paths)) {
            s.unchanged++;
            continue;
          }
          listed.push(unit);
          let plan: UnitPlan | null;
          try {
            plan = await this.#planUnit(unit, entry, s);
          } catch (err) {
            await window.push(() => Promise.reject(err), { kind: "unit", ex, unit, entry, s });
            continue;
          }
          if (!plan) continue;
          const { job, readBytes } = plan;
          await window.push(
            async () => {
              const result = await router.run(ex, job, readBytes);
              // Right after the read it describes, as without a pool.
              const sig = this.#needsSignature(result, entry) ? await filesSignature(unit) : null;
              return { result, sig };
            },
            { kind: "unit", ex, unit, entry, s },
          );
        }
        // The source's final counts (also for a source with nothing to read).
        const end = () => Promise.resolve(null);
        await window.push(end, { kind: "source_end", source: ex.source, s });
        for (const [key, entry] of Object.entries(manifest.sessions)) {
          if (entry.source !== ex.source || seen.has(key) || entry.source_gone) continue;
          // Its file could not be listed this sweep (Discovery.held): unknown, not gone.
          if (entry.meta.files.some((f) => held.has(f))) continue;
          const update: ShardUpdate = {
            kind: "gone",
            key,
            source: entry.source,
            session_id: entry.session_id,
            base: entry.generations,
          };
          await window.push(end, { kind: "update", update });
          goneKeys.push(key);
          s.gone++;
        }
      }
      await window.drain();
    } finally {
      // Workers live only while a sweep needs them: an idle daemon holds no worker heap.
      pool?.idle();
    }
    await batches.flush(true);
    if (!scope) {
      this.#sweeps++;
      if (this.#sweeps % this.#o.gcEvery === 0) await store.gc();
      if (this.#o.staging) await this.#drainStaging(discovered);
    }
    const report: SweepReport = {
      startedAtMs: started,
      durationMs: this.#o.now() - started,
      revision: batches.revision,
      // A scoped sweep reports the sources it listed; the others keep their last counts
      // (coverage reads each source's errors and skips from here).
      sources: scope && this.#lastReport ? { ...this.#lastReport.sources, ...sources } : sources,
      scope: scope ? extractors.map((ex) => ex.source) : null,
      rejected: batches.rejected,
      quarantined,
      extraction: router.report(),
    };
    this.#lastReport = report;
    this.#lastDoneAt = this.#o.now();
    this.#o.onListed?.({ units: listed, gone: goneKeys });
    this.#o.follower?.afterSweep(report);
    return report;
  }

  /**
   * In a scoped sweep: whether `unit` is read at all. Yes when a changed path touches it,
   * when it must be re-derived (damage, quarantine), or when this process has never
   * placed it (no entry and not in the publishes-nothing cache: a unit the last full
   * sweep could not finish).
   */
  #mustPlan(
    unit: SessionUnit,
    entry: ManifestEntry | undefined,
    changed: ReadonlySet<string>,
  ): boolean {
    if (unitTouched(unit, changed)) return true;
    if (this.#rederive.has(unit.key) || entry?.quarantined_at_ms !== undefined) return true;
    return !entry && !this.#nothing.has(unit.key);
  }

  /**
   * Before extracting: null when the unit is known to publish nothing (its files are as
   * they were when it last published nothing, or all older than the window); else its
   * job, and the bytes it reads when it is read from the start (what routes it to a
   * worker, pool/unit_router.ts).
   */
  async #planUnit(
    unit: SessionUnit,
    entry: ManifestEntry | undefined,
    s: SourceSweep,
  ): Promise<UnitPlan | null> {
    // A quarantined shard (damaged, F8) is read from the start, as a new one would be.
    const rederive = this.#rederive.has(unit.key) || entry?.quarantined_at_ms !== undefined;
    let readBytes: number | null = null;
    if (!entry) {
      const files = await filesStat(unit);
      const sig = files.sig;
      if (this.#nothing.get(unit.key) === sig) {
        s.unchanged++;
        return null;
      }
      const cutoff = this.#cutoff();
      if (cutoff !== null && files.mtimes.every((m) => m < cutoff)) {
        this.#nothing.set(unit.key, sig);
        s.nothing++;
        return null;
      }
      // Not cached in #nothing: the band moves with the clock and the other index.
      if (this.#band && !this.#band.takes(files.mtimes)) {
        s.nothing++;
        return null;
      }
      readBytes = files.bytes;
    } else if (rederive) readBytes = (await filesStat(unit)).bytes;
    const prior: PriorShard | null = entry && !rederive
      ? {
        generations: entry.generations,
        cursors: entry.cursors,
        // Read only when asked: the resident manifest keeps state as JSON text and parses
        // it per access (store/resident_entry.ts), and most extractors read it only once a
        // file changed, so a no-op sweep parses no Claude DAG window (issue 16).
        get state() {
          return entry.state;
        },
        records: entry.records,
      }
      : null;
    return { job: { unit, prior, ctx: { now: this.#o.now() } }, readBytes };
  }

  /** Whether consuming `r` records the files' signature (the publishes-nothing cache). */
  #needsSignature(r: UnitResult, entry: ManifestEntry | undefined): boolean {
    if (r.kind === "nothing") return true;
    if (r.kind !== "replace" || entry) return false;
    const cutoff = this.#cutoff();
    return r.summary.records === 0 || (cutoff !== null && r.summary.newestTsMs < cutoff);
  }

  /** After extracting, in discovery order: the unit's update, or null. */
  #finishUnit(
    unit: SessionUnit,
    entry: ManifestEntry | undefined,
    s: SourceSweep,
    { result: out, sig }: Extracted,
  ): { update: ShardUpdate; records: number; textUnits: number } | null {
    const base = entry?.generations ?? null;
    const common = { key: unit.key, source: unit.source, session_id: unit.sessionId, base };
    const bare = (update: ShardUpdate) => ({ update, records: 0, textUnits: 0 });
    switch (out.kind) {
      case "unchanged":
        s.unchanged++;
        // A source that vanished for a sweep and came back unchanged (remount, restored
        // directory, re-registered lease) is served again: a touch clears source_gone.
        return entry?.source_gone
          ? bare({
            kind: "touch",
            ...common,
            cursors: entry.cursors,
            state: entry.state,
            source_watermark: entry.source_watermark,
            source_fingerprint: entry.source_fingerprint,
            meta: entry.meta,
            skipped: {},
          })
          : null;
      case "gone":
        s.gone++;
        return entry && !entry.source_gone ? bare({ kind: "gone", ...common }) : null;
      case "nothing":
        s.nothing++;
        this.#nothing.set(unit.key, sig!);
        return entry
          ? bare({
            kind: "replace",
            ...common,
            segment: { records: [], marks: [] },
            cursors: out.cursors,
            state: null,
            source_watermark: cursorWatermark(out.cursors),
            source_fingerprint: cursorFingerprint(out.cursors),
            meta: entry.meta,
            skipped: {},
          })
          : null;
    }
    for (const [k, n] of Object.entries(out.skipped)) s.skipped[k] = (s.skipped[k] ?? 0) + n;
    if (sig !== null) {
      // Nothing said yet, or all of it older than the window: remember in process only,
      // with why (a session that blew a bound is reported in coverage, not silently lost).
      s.nothing++;
      this.#nothing.set(unit.key, sig);
      if (Object.keys(out.skipped).length > 0) {
        this.#unpublishedSkips.set(unit.key, { source: unit.source, skipped: out.skipped });
      } else this.#unpublishedSkips.delete(unit.key);
      return null;
    }
    this.#nothing.delete(unit.key);
    this.#unpublishedSkips.delete(unit.key);
    const update: ShardUpdate = {
      kind: out.kind,
      ...common,
      // Encoded by a worker: the publisher writes the bytes as they are (pool/encode.ts).
      ...(out.records ? { segment: { records: out.records, marks: out.marks } } : {}),
      ...(out.encoded ? { encoded: out.encoded } : {}),
      cursors: out.cursors,
      state: out.state,
      source_watermark: cursorWatermark(out.cursors),
      source_fingerprint: cursorFingerprint(out.cursors),
      meta: out.meta,
      skipped: out.skipped,
    };
    return { update, records: out.summary.records, textUnits: out.summary.textUnits };
  }

  /**
   * Removes staging entries whose every transcript file is fully seen: its published
   * cursor matches the file as it is now, or it is remembered as publishing nothing.
   */
  async #drainStaging(units: SessionUnit[]): Promise<void> {
    const entries = await this.#o.staging!();
    if (entries.length === 0) return;
    const manifest = await this.#o.store.readManifest();
    for (const entry of entries) {
      const inside = units.filter((u) => u.files.some((f) => f.path.startsWith(entry + "/")));
      let done = true;
      for (const u of inside) {
        const e = manifest.sessions[u.key];
        const sig = await filesSignature(u);
        if (this.#nothing.get(u.key) === sig) continue;
        for (const f of u.files) {
          if (!f.path.startsWith(entry + "/")) continue;
          const c = e?.cursors[f.path];
          const st = await statSource(f.path);
          if (!st || !c || c.ino !== st.ino || c.size !== st.size) done = false;
        }
        if (!done) break;
      }
      if (done) {
        await Deno.remove(entry, { recursive: true }).catch((err) => {
          this.#o.logger?.(`cannot drain staging entry "${entry}": ${(err as Error).message}`);
        });
      }
    }
  }

  #cutoff(): number | null {
    const d = this.#o.windowDays;
    return d === null ? null : this.#o.now() - d * 86_400_000;
  }

  #progress(source: Source, s: SourceSweep, extracted: number, started: number): void {
    this.#o.onProgress?.({
      source,
      files: s.units,
      sessions: s.published,
      records: extracted,
      elapsedMs: this.#o.now() - started,
    });
  }
}

export { sessionKey };
