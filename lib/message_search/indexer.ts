/**
 * The indexer: sweeps every source, classifies each file against its stored cursor,
 * extracts incrementally and publishes one batch per sweep. Sweeps run every 30 s, the
 * first one a full interval after start (one-shot CLI runs never pay for it);
 * `refreshIfStale(QUERY_REFRESH_MS)` lets the query edge sweep first when the last sweep
 * is older than half a second, and is a no-op until the first sweep completes (a backfill never runs
 * inline with a query). A sweep publishes its updates as one batch, or in several once the
 * pending records pass PUBLISH_BATCH_UNITS of text (a cold backfill then never holds the
 * whole corpus in memory; each batch is a complete, valid revision on its own; one batch
 * publishes while the next is extracted).
 * Why one piece (≈ 870 lines, over the 600-line guide): the sweep loop, its batching, the
 * ordered extraction window and the publish pipeline share one per-sweep state (pending
 * batch, in-flight publish, coverage report, the files discovery held) that every step
 * mutates; splitting it means first making that state an explicit object passed between
 * modules. That split is due with the watcher work (issue 28: the sweep state moves out
 * when file events replace the 30 s sweep), not in a hardening change. The lexicon refresh
 * issue 27 added after a sweep (#refreshLexicon, IndexerOptions.lexicon) is one flag and one
 * method, and moves out with that split.
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
 * The query edge's refreshIfStale age. The spec's 1_000 promised "~1 s freshness", but an
 * append landing just after a sweep then waits the full second AND the next sweep (bench:
 * p95 1.26 s). Refreshing at half a second keeps staleness plus a publishing sweep inside
 * 1 s; a no-op sweep is metadata only (0 bytes written), so the price is a stat pass at
 * most twice a second while someone is searching.
 */
export const QUERY_REFRESH_MS = 500;

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
  /** @default 30_000 */
  intervalMs?: number;
  /** Run store GC every this many sweeps. @default 120 */
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

type ResolvedIndexerOptions =
  & Required<Omit<IndexerOptions, "onProgress" | "logger" | "staging" | "pool">>
  & Pick<IndexerOptions, "onProgress" | "logger" | "staging" | "pool">;

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
  /** When the last completed sweep STARTED: its view of the sources is this old. */
  #lastDataAt: number | null = null;
  #lastReport: SweepReport | null = null;
  #sweeps = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
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
  /** The lexicon refresh started after a sweep (IndexerOptions.lexicon), until it ends. */
  #lexiconRun: Promise<void> | null = null;
  /** The manifest revision the last lexicon refresh started at. */
  #lexiconRevision: number | null = null;

  constructor(o: IndexerOptions) {
    // Explicit `?? default`: a spread would let an explicit `undefined` erase the default.
    this.#o = {
      ...o,
      now: o.now ?? Date.now,
      intervalMs: o.intervalMs ?? 30_000,
      gcEvery: o.gcEvery ?? 120,
      publishBatchUnits: o.publishBatchUnits ?? PUBLISH_BATCH_UNITS,
      workers: o.workers ?? defaultPoolSize(),
      lexicon: o.lexicon ?? false,
    };
    if (!Number.isInteger(this.#o.workers) || this.#o.workers < 1) {
      throw new RangeError(`Workers must be a positive integer, got ${this.#o.workers}`);
    }
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

  /** Starts the periodic sweeps; the first runs one full interval from now. */
  start(): void {
    this.#stopped = false;
    const tick = async () => {
      if (this.#stopped) return;
      try {
        await this.sweep();
      } catch (err) {
        this.#o.logger?.(
          `message index sweep failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (!this.#stopped) this.#timer = setTimeout(tick, this.#o.intervalMs);
    };
    this.#timer = setTimeout(tick, this.#o.intervalMs);
  }

  /**
   * Resolves once no sweep is running: the in-flight one and any follow-up it started
   * (a repair sweep a reader triggered, F8). Never rejects; sweep errors are the sweep's.
   */
  async settled(): Promise<void> {
    while (this.#inflight || this.#lexiconRun) {
      await (this.#inflight ?? this.#lexiconRun)!.catch(() => null);
    }
  }

  /** Starts a lexicon refresh after sweep `r` when IndexerOptions.lexicon asks for it. */
  #refreshLexicon(r: SweepReport): void {
    if (!this.#o.lexicon || this.#lexiconRun || this.#stopped) return;
    // Only when the manifest moved since the last refresh (the first sweep always asks).
    if (r.revision === this.#lexiconRevision) return;
    this.#lexiconRevision = r.revision;
    const { store, logger } = this.#o;
    this.#lexiconRun = store.refreshLexicon().then(
      (x) => {
        if (x.built) {
          logger?.(
            `message index: lexicon rebuilt (${x.covered} of ${x.live} generations, ` +
              `${x.entries} entries, ${x.read} read) in ${x.ms} ms`,
          );
        }
      },
      // A cache: a failed build costs speed, never a result; the next sweep retries.
      (err) => logger?.(`message index: lexicon refresh failed: ${(err as Error).message}`),
    ).finally(() => (this.#lexiconRun = null));
  }

  /** Stops the timer and waits for an in-flight sweep. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#inflight) await this.#inflight.catch(() => null);
    if (this.#lexiconRun) await this.#lexiconRun;
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
   * Sweeps when the last completed sweep's view of the sources is older than `maxAgeMs`
   * (measured from its start: an append landing just after a sweep began is missed by it,
   * and counting from its end would add that sweep's duration to the wait); a no-op
   * before the first sweep completes.
   */
  async refreshIfStale(maxAgeMs = 1000): Promise<void> {
    if (this.#lastDataAt === null) return;
    if (this.#o.now() - this.#lastDataAt <= maxAgeMs) return;
    await this.sweep();
  }

  /**
   * Runs one sweep now; concurrent callers share the in-flight one. When it ends with
   * damage reported after it took its list (or a shard quarantined by its own publish),
   * one follow-up sweep starts in the background.
   */
  sweep(): Promise<SweepReport> {
    if (!this.#inflight) {
      this.#inflight = this.#sweepOnce().then((r) => {
        this.#refreshLexicon(r);
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

  async #sweepOnce(): Promise<SweepReport> {
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
    const extractors = typeof this.#o.extractors === "function"
      ? await this.#o.extractors()
      : this.#o.extractors;
    const started = this.#o.now();
    const discovered: SessionUnit[] = [];
    const manifest = await store.readManifest();
    let updates: ShardUpdate[] = [];
    let pendingUnits = 0;
    const sources: Record<string, SourceSweep> = {};
    let revision = manifest.revision;
    const rejected: { key: string; reason: string }[] = [];
    /** Records per update (an update carrying an encoded segment has no record list). */
    const recordsOf = new WeakMap<ShardUpdate, number>();
    // At most one publish runs while the next batch is extracted: a publish mostly waits
    // on fsyncs (a fifth of a cold backfill was idle), which extraction can fill. Memory
    // stays bounded by two batches. A failed publish fails the sweep at the next flush.
    let inflight: Promise<void> | null = null;
    let failure: { err: unknown } | null = null;
    const rethrow = () => {
      const f = failure as { err: unknown } | null;
      if (f) throw f.err;
    };
    const flush = async (final: boolean) => {
      if (inflight) await inflight;
      inflight = null;
      rethrow();
      if (updates.length === 0) return;
      const batch = updates;
      updates = [];
      pendingUnits = 0;
      // The handler is attached at once: a rejection must never go unhandled while
      // extraction runs.
      const p = publishBatch(batch).catch((err) => void (failure = { err }));
      if (!final) {
        inflight = p;
        return;
      }
      await p;
      rethrow();
    };
    const publishBatch = async (batch: ShardUpdate[]) => {
      const r = await store.publish(batch);
      revision = r.revision;
      rejected.push(...r.rejected);
      const rej = new Set(r.rejected.map((x) => x.key));
      // A compaction met a damaged base and quarantined the shard: re-derive it at once.
      if (r.rejected.some((x) => x.reason === "corrupt_base")) this.#followUp = true;
      for (const u of batch) {
        if (rej.has(u.key)) continue;
        this.#rederive.delete(u.key);
        // Re-derived from source: a damage report against its old files is stale now.
        if (u.kind === "replace") this.#damage.delete(u.key);
        if (u.kind === "replace" || u.kind === "append") {
          const s = sources[u.source]!;
          s.published++;
          s.recordsAdded += recordsOf.get(u) ?? u.segment?.records.length ?? 0;
        }
      }
    };
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
          updates.push(p.update);
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
            updates.push(u.update);
            recordsOf.set(u.update, u.records);
            pendingUnits += u.textUnits;
            extracted.set(p.unit.source, (extracted.get(p.unit.source) ?? 0) + u.records);
          }
        }
        if (pendingUnits >= this.#o.publishBatchUnits) await flush(false);
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
          const entry = manifest.sessions[unit.key];
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
          s.gone++;
        }
      }
      await window.drain();
    } finally {
      // Workers live only while a sweep needs them: an idle daemon holds no worker heap.
      pool?.idle();
    }
    await flush(true);
    this.#sweeps++;
    if (this.#sweeps % this.#o.gcEvery === 0) await store.gc();
    if (this.#o.staging) await this.#drainStaging(discovered);
    const report: SweepReport = {
      startedAtMs: started,
      durationMs: this.#o.now() - started,
      revision,
      sources,
      rejected,
      quarantined,
      extraction: router.report(),
    };
    this.#lastReport = report;
    this.#lastDoneAt = this.#o.now();
    this.#lastDataAt = started;
    return report;
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

/** The memory a unit's result holds until it is published: its segment bytes or records. */
function resultBytes(r: UnitResult): number {
  if (r.kind !== "replace" && r.kind !== "append") return 0;
  // Handed-over records: about two bytes per unit of text plus their fields.
  return r.encoded?.bytes.byteLength ?? r.summary.textUnits * 2 + r.summary.records * 200;
}

/** dev:ino:mtime:size of each file: cheap change detection for the publishes-nothing cache. */
async function filesSignature(unit: SessionUnit): Promise<string> {
  return (await filesStat(unit)).sig;
}

/** One lstat per file: the signature, each file's mtime, and the bytes to read. */
async function filesStat(
  unit: SessionUnit,
): Promise<{ sig: string; mtimes: number[]; bytes: number }> {
  const parts: string[] = [];
  const mtimes: number[] = [];
  let bytes = 0;
  for (const f of unit.files) {
    const st = await statSource(f.path);
    parts.push(st ? `${st.dev}:${st.ino}:${st.mtime_ms ?? 0}:${st.size}` : "gone:0:0:0");
    mtimes.push(st ? st.mtime_ms ?? 0 : 0);
    bytes += st?.size ?? 0;
  }
  return { sig: parts.join("|"), mtimes, bytes };
}

export { sessionKey };
