/**
 * One sweep's publishing state: the pending batch, the one publish in flight, the
 * revision it reached and what the store refused. The indexer's sweep loop adds updates
 * in discovery order and flushes when the pending text passes its batch size; at most
 * one publish runs while the next batch is extracted (a publish mostly waits on fsyncs,
 * which extraction can fill), so memory stays bounded by two batches. A failed publish
 * fails the sweep at the next flush; its rejection is handled at once, never left
 * unhandled while extraction runs. Each accepted update is handed to `onAccepted` in
 * batch order (the indexer's per-source counts and its re-derive bookkeeping).
 */
import type { Store } from "../store/mod.ts";
import type { ShardUpdate } from "../store/types.ts";

/** Options for {@link PublishBatches}. */
export interface PublishBatchesOptions {
  store: Store;
  /** The manifest revision before the sweep (what the sweep reports if it publishes nothing). */
  revision: number;
  /** Called for every update the store accepted, with its record count. */
  onAccepted: (u: ShardUpdate, records: number) => void;
  /** Called when a publish reports a compaction that met a damaged base. */
  onCorruptBase: () => void;
}

export class PublishBatches {
  readonly #o: PublishBatchesOptions;
  #updates: ShardUpdate[] = [];
  /** Record text (UTF-16 units) of the pending updates. */
  #pendingUnits = 0;
  /** Records per update (an update carrying an encoded segment has no record list). */
  readonly #recordsOf = new WeakMap<ShardUpdate, number>();
  #inflight: Promise<void> | null = null;
  #failure: { err: unknown } | null = null;
  revision: number;
  readonly rejected: { key: string; reason: string }[] = [];

  constructor(o: PublishBatchesOptions) {
    this.#o = o;
    this.revision = o.revision;
  }

  /** Pending record text, for the caller's batch rule. */
  get pendingUnits(): number {
    return this.#pendingUnits;
  }

  /** Adds an update; `records` and `textUnits` describe its segment (0 for metadata). */
  add(u: ShardUpdate, records = 0, textUnits = 0): void {
    this.#updates.push(u);
    this.#recordsOf.set(u, records);
    this.#pendingUnits += textUnits;
  }

  /**
   * Publishes what is pending. Not final: starts the publish and returns once the
   * previous one ended (extraction goes on meanwhile). Final: waits for it.
   */
  async flush(final: boolean): Promise<void> {
    if (this.#inflight) await this.#inflight;
    this.#inflight = null;
    this.#rethrow();
    if (this.#updates.length === 0) return;
    const batch = this.#updates;
    this.#updates = [];
    this.#pendingUnits = 0;
    const p = this.#publish(batch).catch((err) => void (this.#failure = { err }));
    if (!final) {
      this.#inflight = p;
      return;
    }
    await p;
    this.#rethrow();
  }

  #rethrow(): void {
    const f = this.#failure;
    if (f) throw f.err;
  }

  async #publish(batch: ShardUpdate[]): Promise<void> {
    const r = await this.#o.store.publish(batch);
    this.revision = r.revision;
    this.rejected.push(...r.rejected);
    const rej = new Set(r.rejected.map((x) => x.key));
    if (r.rejected.some((x) => x.reason === "corrupt_base")) this.#o.onCorruptBase();
    for (const u of batch) {
      if (rej.has(u.key)) continue;
      this.#o.onAccepted(u, this.#recordsOf.get(u) ?? u.segment?.records.length ?? 0);
    }
  }
}
