/**
 * The shard store: one directory (`<state-root>/cache/message_search/v2`) holding
 * manifest.json + manifest.journal (the manifest: a snapshot and the deltas since, see
 * manifest_state.ts), writer.lock, summaries.pack (a cache of every generation's summary,
 * summary_pack.ts), lexicon.pack (a cache of every generation's vocabulary, written off
 * the publish path: lexicon_refresh.ts) and generations/ (binary segments,
 * segment_layout.ts). Every store file
 * access goes through the injected Fs and every write through writeFileAtomic (the pack's
 * appends through Fs.openAppend); the one exception is writer.lock, which holds no store
 * data and needs flock, an operation Fs does not have.
 *
 * On-disk invariants (reliability-plan I1–I6):
 *  - data before pointer: a publish writes (and fsyncs) every new generation before the
 *    manifest that names it, so a crash at any point leaves the old manifest or the new
 *    one, and whichever is on disk references only complete generations;
 *  - revision is monotonic: max(previous + 1, now ms), also across a quarantine: a
 *    corrupt manifest is renamed to manifest.corrupt-<ms> by a lock holder and an empty
 *    one at revision now is written at once (a revision handed out but never written
 *    could later be reused for different content);
 *  - a manifest written by a newer parser_version is served read-only and never
 *    overwritten; one from an older parser is rebuilt (sessions dropped, tombstones kept);
 *  - a tombstoned key is never republished until its tombstone expires with the window
 *    or is lifted (liftTombstone: a session restored from the trash), both under the lock;
 *  - a damaged generation is never served again once found (F8): the finder publishes a
 *    "quarantine" update (types.ts) through this same publish path — lock, manifest
 *    re-read, base check, journal line — which makes the entry name no generations and
 *    drops its cursors and watermark, so the next sweep re-derives the shard from source
 *    (same content, same name: writeSegment replaces the damaged file). The damaged file
 *    is retired, never moved or edited in place, and GC deletes it after the grace.
 *
 * The correctness gate is publish(), not the lock: it re-reads the manifest from disk and
 * rejects updates whose base moved, stale replaces (lower watermark over the same source
 * state), and everything when a newer parser owns the manifest. The lock ("flock") only
 * serialises writers; with lock "none" concurrent writers may lose updates to each other
 * (and a quarantine may race a fresh rename), which the next sweep re-derives, but never
 * corrupt the store or point it at a missing generation.
 *
 * Errors: I/O errors from any step propagate (the previous manifest stays intact);
 * LockHeldError when the lock is busy for lockWaitMs; TypeError for malformed updates.
 */
import { dirname, join } from "node:path";
import { slicePause } from "./slice_pause.ts";
import { type Fs, realFs, removeOrphanTemps } from "../../durable/mod.ts";
import { LockHeldError, NotFoundError, StalePublishError } from "../../errors.ts";
import {
  deleteUnreferencedGenerations,
  expireManifest,
  type GcReport,
  referencedGenerations,
  withRetired,
} from "./gc.ts";
import { emptyManifest, quarantineManifest } from "./manifest_io.ts";
import { commitState, readState, type StoreState } from "./manifest_state.ts";
import { CorruptGenerationError, GENERATIONS_DIR, loadSegment, verifySegment } from "./segments.ts";
import type { DecodeOptions, SegmentView } from "./segment_view.ts";
import { PackWriter, readPack, type Summaries } from "./summary_pack.ts";
import { LEXICON_FILE, lexiconIdentity, type LexiconRead, readLexicon } from "./lexicon_pack.ts";
import { type LexiconRefresh, refreshLexicon } from "./lexicon_refresh.ts";
import { applyUpdate, assertUpdateShape, type PublishDraft } from "./_apply_update.ts";
import {
  type EncodedSegment,
  type Manifest,
  MANIFEST_SCHEMA,
  type PublishResult,
  type ShardUpdate,
} from "./types.ts";
import { holdLock, type LockHandle } from "./writer_lock.ts";

/** Default time publish/gc/delete wait for a busy writer lock. */
export const DEFAULT_LOCK_WAIT_MS = 5000;

/** Options for {@link openStore}. */
export interface StoreOptions {
  /** `<state-root>/cache/message_search/v2` */
  root: string;
  /** All store file access goes through it. @default realFs */
  fs?: Fs;
  /** This writer's parser version. */
  parserVersion: number;
  /** Retention window in days; null keeps forever. */
  windowDays: number | null;
  /** @default Date.now */
  now?: () => number;
  /** "none" bypasses the lock (it is efficiency, not correctness). @default "flock" */
  lock?: "flock" | "none";
  /** @default DEFAULT_LOCK_WAIT_MS */
  lockWaitMs?: number;
  /**
   * Share one parsed manifest between readers until the file's identity (dev, ino, size,
   * mtime) changes. Every publish renames a new file in, so the identity changes with
   * every revision; only an in-place edit within one millisecond could go unseen, which
   * our writers never do. Off by default so fault tests see every on-disk change.
   * @default false
   */
  cacheReads?: boolean;
}

/** An open shard store. */
export interface Store {
  readonly root: string;
  /**
   * The parser version this store publishes with (what an encoded segment must name;
   * the indexer's workers encode only when it is known).
   */
  readonly parserVersion?: number;
  /** The manifest on disk; empty when missing; quarantined and empty when corrupt. */
  readManifest(): Promise<Manifest>;
  /** Applies a batch of shard updates under the lock (see the module header). */
  publish(updates: ShardUpdate[]): Promise<PublishResult>;
  /** Drops the session and tombstones its key so no stale source resurrects it. */
  deleteSession(key: string): Promise<void>;
  /**
   * Removes the key's tombstone (a restored session) so the next sweep may publish it
   * again; true when there was one. Same lock, journal and publish path as deleteSession.
   */
  liftTombstone(key: string): Promise<boolean>;
  /**
   * Reads one generation into a SegmentView (CorruptGenerationError, NotFoundError):
   * every checksum verified, or with `verify: "lazy"` (the scan) each block's when it is
   * first read. decodeRecords turns it into records.
   */
  loadSegment(name: string, o?: DecodeOptions): Promise<SegmentView>;
  /**
   * Every summary in summaries.pack (generation name → words), read now; empty when the
   * pack is missing or damaged from its start (the next publish rebuilds it).
   */
  loadSummaries(): Promise<Summaries>;
  /**
   * lexicon.pack (lexicon_pack.ts) read now, or null when it is missing or not valid;
   * `known` is the identity of the copy the caller holds: "unchanged" when the file on disk
   * is still that one (one stat, nothing read).
   */
  loadLexicon(known?: string | null): Promise<LexiconRead | null | "unchanged">;
  /**
   * Rebuilds lexicon.pack when it is stale for the current manifest (lexicon_refresh.ts);
   * at most one runs per store: a call while one is in flight shares it.
   */
  refreshLexicon(o?: { force?: boolean }): Promise<LexiconRefresh>;
  /** Retention plus deletion of old unreferenced generations and orphan temps. */
  gc(): Promise<GcReport>;
  /**
   * Keys of entries with a missing or hash-mismatched generation (quarantined entries
   * name none, so they are never listed).
   */
  verifyAll(): Promise<string[]>;
  /** Removes entries (no tombstone) so the next sweep re-derives them from source. */
  dropEntries(keys: string[]): Promise<void>;
}

/**
 * Opens (creating if needed) the store at `o.root`: directories 0700, orphan temps of
 * dead writers removed. Does not take the lock.
 */
export async function openStore(o: StoreOptions): Promise<Store> {
  const { root, fs = realFs, now = Date.now, lock = "flock" } = o;
  const { lockWaitMs = DEFAULT_LOCK_WAIT_MS } = o;
  if (typeof root !== "string" || root === "") {
    throw new TypeError(`Store root must be a non-empty path: got "${root}"`);
  }
  if (!Number.isSafeInteger(o.parserVersion) || o.parserVersion < 0) {
    throw new RangeError(`Parser version must be a non-negative integer: got "${o.parserVersion}"`);
  }
  const w = o.windowDays;
  if (w !== null && !(Number.isFinite(w) && w > 0)) {
    throw new RangeError(`Retention window must be positive days or null: got "${w}"`);
  }
  if (lock !== "flock" && lock !== "none") {
    throw new TypeError(`Lock mode must be "flock" or "none": got "${lock}"`);
  }
  if (!Number.isFinite(lockWaitMs) || lockWaitMs < 0) {
    throw new RangeError(`Lock wait must be a non-negative number of ms: got "${lockWaitMs}"`);
  }
  const genDir = join(root, GENERATIONS_DIR);
  await mkdirDurable(fs, genDir);
  await removeOrphanTemps(root, { fs, now });
  await removeOrphanTemps(genDir, { fs, now });
  return new ShardStore({
    root,
    fs,
    now,
    lock,
    lockWaitMs,
    pv: o.parserVersion,
    windowDays: w,
    cacheReads: o.cacheReads ?? false,
  });
}

/**
 * mkdir -p whose result survives power loss: a new directory's entry, like a renamed
 * file's, is durable only once its parent is fsynced. Without this the first publishes of
 * a fresh state root could vanish whole after a power loss although each was fsynced and
 * acknowledged (A3). Directories that already existed are left alone. An ancestor this
 * process may not read (the locked permission profile grants only the state root) can be
 * neither stat'ed nor opened to fsync: it counts as existing and its fsync is skipped.
 */
async function mkdirDurable(fs: Fs, dir: string): Promise<void> {
  const created: string[] = [];
  for (let d = dir; dirname(d) !== d; d = dirname(d)) {
    try {
      await fs.stat(d);
      break;
    } catch (err) {
      if (isUnreadable(err)) break;
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      created.push(d);
    }
  }
  if (created.length === 0) return;
  await fs.mkdir(dir, 0o700);
  for (const d of created) {
    await fs.syncDir(dirname(d)).catch((err) => {
      if (!isUnreadable(err)) throw err;
    });
  }
}

function isUnreadable(err: unknown): boolean {
  return err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied;
}

/** A manifest read under the lock, and the state a commit appends to (null: snapshot). */
interface Loaded {
  manifest: Manifest;
  state: StoreState | null;
}

interface StoreConfig {
  root: string;
  fs: Fs;
  now: () => number;
  lock: "flock" | "none";
  lockWaitMs: number;
  pv: number;
  windowDays: number | null;
  cacheReads: boolean;
}

class ShardStore implements Store {
  readonly root: string;
  readonly parserVersion: number;
  #c: StoreConfig;
  #genDir: string;
  /** Serialises this instance's writers so they queue here instead of polling flock. */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #pack: PackWriter;
  /** The lexicon refresh in flight (refreshLexicon shares it). */
  #lexicon: Promise<LexiconRefresh> | null = null;

  constructor(c: StoreConfig) {
    this.root = c.root;
    this.parserVersion = c.pv;
    this.#c = c;
    this.#genDir = join(c.root, GENERATIONS_DIR);
    this.#pack = new PackWriter(c.fs, c.root);
  }

  async readManifest(): Promise<Manifest> {
    // Readers (every query, every sweep) share one parsed manifest until the snapshot or
    // the journal changes; a grown journal costs only its new lines. The returned object
    // is shared and must not be mutated.
    const r = await readState(this.#c.fs, this.root, this.#cached());
    if (r.kind === "ok") {
      this.#remember(r.state);
      return r.state.manifest;
    }
    if (r.kind === "missing") return emptyManifest(this.#c.pv, 0, this.#nowMs());
    // Corrupt. Quarantine only while holding the lock: an unlocked rename could move
    // aside a good manifest a writer renamed in after our read. If a writer holds the
    // lock, it quarantines on its own re-read; we serve empty meanwhile.
    if (this.#c.lock === "none") return (await this.#loadLocked()).manifest;
    let handle: LockHandle;
    try {
      handle = await holdLock(this.root, { wait: 0 });
    } catch (err) {
      if (!(err instanceof LockHeldError)) throw err;
      const nowMs = this.#nowMs();
      return emptyManifest(this.#c.pv, nowMs, nowMs);
    }
    try {
      return (await this.#loadLocked()).manifest;
    } finally {
      handle.release();
    }
  }

  /** The last state read or written (cacheReads only; else every read goes to disk). */
  #state: StoreState | null = null;

  #cached(): StoreState | null {
    return this.#c.cacheReads ? this.#state : null;
  }

  #remember(state: StoreState | null): void {
    if (this.#c.cacheReads) this.#state = state;
  }

  async publish(updates: ShardUpdate[]): Promise<PublishResult> {
    if (!Array.isArray(updates)) throw new TypeError("Publish expects an array of updates");
    for (const u of updates) assertUpdateShape(u);
    return await this.#exclusive(() => this.#publishLocked(updates));
  }

  async #publishLocked(updates: ShardUpdate[]): Promise<PublishResult> {
    const { pv, fs } = this.#c;
    const loaded = await this.#loadLocked();
    const current = loaded.manifest;
    if (current.parser_version > pv) {
      const rejected = updates.map((u) => ({ key: u.key, reason: "newer_parser" }));
      return { revision: current.revision, accepted: [], rejected };
    }
    const nowMs = this.#nowMs();
    const draft: PublishDraft = {
      // A parser upgrade re-derives every shard; tombstones stay (deletion is sticky).
      sessions: current.parser_version < pv ? {} : { ...current.sessions },
      tombstones: current.tombstones,
      changed: false,
    };
    const accepted: string[] = [];
    const rejected: PublishResult["rejected"] = [];
    const written: EncodedSegment[] = [];
    const ctx = { fs, genDir: this.#genDir, pv, nowMs, now: this.#c.now, written };
    for (const u of updates) {
      const reason = await applyUpdate(draft, u, ctx);
      if (reason === null) accepted.push(u.key);
      else rejected.push({ key: u.key, reason });
    }
    if (!draft.changed) return { revision: current.revision, accepted, rejected };
    const next = withRetired(current, {
      schema: MANIFEST_SCHEMA,
      parser_version: pv,
      revision: Math.max(current.revision + 1, nowMs),
      updated_at_ms: nowMs,
      sessions: draft.sessions,
      tombstones: draft.tombstones,
    }, { nowMs });
    // Before the commit: the pack is a cache, but a failure to write it is an I/O error
    // like any other, and the manifest must stay as it was (A4).
    await this.#pack.update(referencedGenerations(next), written);
    this.#remember(await this.#commit(loaded, next));
    return { revision: next.revision, accepted, rejected };
  }

  async deleteSession(key: string): Promise<void> {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`Session key must be a non-empty string: got "${key}"`);
    }
    await this.#exclusive(async () => {
      const loaded = await this.#loadLocked();
      const m = loaded.manifest;
      if (m.parser_version > this.#c.pv) {
        throw new StalePublishError(
          `Cannot delete session "${key}": manifest parser_version ${m.parser_version} ` +
            `is newer than ours (${this.#c.pv})`,
        );
      }
      const sessions = { ...m.sessions };
      delete sessions[key];
      const nowMs = this.#nowMs();
      const tombstones = { ...m.tombstones, [key]: nowMs };
      await this.#write(loaded, { sessions, tombstones }, nowMs);
      // The lexicon holds the session's words: a deleted session's go with it now (the
      // next refresh rebuilds the lexicon without them), not whenever it is next stale.
      await this.#c.fs.remove(join(this.root, LEXICON_FILE)).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    });
  }

  async liftTombstone(key: string): Promise<boolean> {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`Session key must be a non-empty string: got "${key}"`);
    }
    return await this.#exclusive(async () => {
      const loaded = await this.#loadLocked();
      const m = loaded.manifest;
      // Nothing to lift is not an error: a restore re-run after a crash, or a tombstone
      // that already expired with the window, finds none.
      if (!Object.hasOwn(m.tombstones, key)) return false;
      if (m.parser_version > this.#c.pv) {
        throw new StalePublishError(
          `Cannot lift the tombstone of "${key}": manifest parser_version ` +
            `${m.parser_version} is newer than ours (${this.#c.pv})`,
        );
      }
      const tombstones = { ...m.tombstones };
      delete tombstones[key];
      await this.#write(loaded, { tombstones }, this.#nowMs());
      return true;
    });
  }

  async dropEntries(keys: string[]): Promise<void> {
    if (!Array.isArray(keys)) throw new TypeError("dropEntries expects an array of keys");
    await this.#exclusive(async () => {
      const loaded = await this.#loadLocked();
      const m = loaded.manifest;
      // A newer parser owns the manifest; its entries are not ours to drop.
      if (m.parser_version > this.#c.pv) return;
      const sessions = { ...m.sessions };
      let changed = false;
      for (const k of keys) {
        if (Object.hasOwn(sessions, k)) {
          delete sessions[k];
          changed = true;
        }
      }
      if (changed) await this.#write(loaded, { sessions }, this.#nowMs());
    });
  }

  loadSegment(name: string, o?: DecodeOptions): Promise<SegmentView> {
    return loadSegment(this.#c.fs, this.#genDir, name, o);
  }

  async loadSummaries(): Promise<Summaries> {
    return (await readPack(this.#c.fs, this.root)).summaries;
  }

  async loadLexicon(known?: string | null): Promise<LexiconRead | null | "unchanged"> {
    if (known != null && (await lexiconIdentity(this.#c.fs, this.root)) === known) {
      return "unchanged";
    }
    return await readLexicon(this.#c.fs, this.root);
  }

  refreshLexicon(o: { force?: boolean } = {}): Promise<LexiconRefresh> {
    if (this.#lexicon) return this.#lexicon;
    const run = async () =>
      refreshLexicon({
        fs: this.#c.fs,
        root: this.root,
        manifest: await this.readManifest(),
        // Lazy: only the TERMS section's checksum is checked (terms() does), not every block.
        loadSegment: (n) => this.loadSegment(n, { verify: "lazy" }),
        force: o.force,
        pause: slicePause(LEXICON_SLICE_MS),
      });
    this.#lexicon = run().finally(() => (this.#lexicon = null));
    return this.#lexicon;
  }

  async verifyAll(): Promise<string[]> {
    const m = await this.readManifest();
    const ok = new Map<string, boolean>();
    const bad: string[] = [];
    for (const [key, entry] of Object.entries(m.sessions)) {
      let entryOk = true;
      for (const g of entry.generations) {
        if (!ok.has(g)) ok.set(g, await this.#verifies(g));
        if (!ok.get(g)) entryOk = false;
      }
      if (!entryOk) bad.push(key);
    }
    return bad;
  }

  async #verifies(name: string): Promise<boolean> {
    try {
      await verifySegment(this.#c.fs, this.#genDir, name);
      return true;
    } catch (err) {
      if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return false;
      throw err;
    }
  }

  gc(): Promise<GcReport> {
    return this.#exclusive(async () => {
      const { fs, now, pv, windowDays } = this.#c;
      const loaded = await this.#loadLocked();
      let m = loaded.manifest;
      const nowMs = this.#nowMs();
      let expiredSessions = 0;
      let expiredTombstones = 0;
      // Never rewrite a newer parser's manifest, not even to expire entries.
      if (m.parser_version <= pv) {
        const x = expireManifest(m, { nowMs, windowDays });
        if (x.expiredSessions > 0 || x.expiredTombstones > 0) {
          m = await this.#write(loaded, x.manifest, nowMs);
          ({ expiredSessions, expiredTombstones } = x);
        }
      }
      const swept = await deleteUnreferencedGenerations(this.#genDir, referencedGenerations(m), {
        fs,
        nowMs,
        retired: m.retired,
      });
      await removeOrphanTemps(this.root, { fs, now });
      await removeOrphanTemps(this.#genDir, { fs, now });
      return {
        expiredSessions,
        expiredTombstones,
        deletedGenerations: swept.deleted,
        keptYoungUnreferenced: swept.keptYoung,
      };
    });
  }

  /** Writes `base` with `patch` applied and a bumped revision; keeps base's parser_version. */
  async #write(loaded: Loaded, patch: Partial<Manifest>, nowMs: number): Promise<Manifest> {
    const base = loaded.manifest;
    const next = withRetired(base, {
      ...base,
      ...patch,
      revision: Math.max(base.revision + 1, nowMs),
      updated_at_ms: nowMs,
    }, { nowMs });
    this.#remember(await this.#commit(loaded, next));
    return next;
  }

  #commit(loaded: Loaded, next: Manifest): Promise<StoreState | null> {
    const { fs, cacheReads } = this.#c;
    return commitState({ fs, root: this.root, state: loaded.state, next, remember: cacheReads });
  }

  /** Reads the manifest as a lock holder: a corrupt one is quarantined here. */
  async #loadLocked(): Promise<Loaded> {
    const { fs, pv, now } = this.#c;
    for (let attempt = 0;; attempt++) {
      const r = await readState(fs, this.root, this.#cached());
      if (r.kind === "ok") {
        this.#remember(r.state);
        return { manifest: r.state.manifest, state: r.state };
      }
      if (r.kind === "missing") {
        return { manifest: emptyManifest(pv, 0, this.#nowMs()), state: null };
      }
      const moved = await quarantineManifest(this.root, { fs, now });
      // null: the corrupt file vanished under us (only possible with lock "none", a
      // concurrent writer renamed a fresh manifest in or quarantined it): read again.
      if (moved !== null || attempt >= 2) {
        // Start at now so revision never goes backwards across the quarantine, and persist
        // it at once: an unwritten revision could be handed out again for other content.
        const nowMs = this.#nowMs();
        const empty = emptyManifest(pv, nowMs, nowMs);
        const state = await this.#commit({ manifest: empty, state: null }, empty);
        this.#remember(state);
        return { manifest: empty, state };
      }
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = async () => {
      const handle = this.#c.lock === "flock"
        ? await holdLock(this.root, { wait: this.#c.lockWaitMs })
        : null;
      try {
        return await fn();
      } finally {
        handle?.release();
      }
    };
    const result = this.#queue.then(run, run);
    // The queue only orders calls; each caller gets its own outcome through `result`.
    this.#queue = result.then(() => undefined, () => undefined);
    return result;
  }

  #nowMs(): number {
    return Math.floor(this.#c.now());
  }
}

/** Work between two yields of the lexicon build: a query waits at most this long for it. */
const LEXICON_SLICE_MS = 10;
