/**
 * Watches the roots a daemon indexes and reports which paths changed under which sources.
 * Owns the OS watches (through WatchFs) and their routing; decides nothing about sweeps.
 *
 * - A target that exists is watched directly: a home recursively (its subdirectories
 *   as they appear are added by the watch itself), a database's directory flat.
 * - A target that does not exist yet is watched through its nearest existing ancestor,
 *   flat; when the target (or a directory on the way to it) appears, it is armed
 *   directly and reported changed as a whole, so what was written before the watch took
 *   hold is still found. A target whose ancestor cannot be watched either (permission)
 *   waits for recheck() (a stat, on the scheduler's timer).
 * - Watches are made in groups (one per arming, each one OS watcher instance) so the
 *   per-user inotify instance limit is not spent per directory; a group that fails to
 *   start is retried path by path, so one unwatchable root never blinds the others.
 *   Past MAX_GROUPS the groups are rebuilt as one pair (and everything is reported
 *   changed once: events in the gap are not lost).
 * - A watch that fails (at start or later: the watch limit, a removed mount) marks its
 *   targets failed with a note naming the limit (watch_errors.ts); the scheduler polls
 *   meanwhile and retryFailed() tries again. An event flagged "rescan" (the OS queue
 *   overflowed) asks for a full sweep.
 * Invariant: every change under an armed target reaches onChange (or onRescan) once its
 * watch is up; a target is reported changed as a whole whenever its watch was re-made.
 */
import { dirname } from "node:path";
import type { Source } from "../record.ts";
import type { WatchTarget } from "../extractor_set.ts";
import type { FsWatch, WatchEvent, WatchFs } from "./watch_fs.ts";
import { watchFailureNote } from "./watch_errors.ts";

/** More watcher instances than this and they are rebuilt as one recursive + one flat. */
export const MAX_GROUPS = 8;

/** Options for {@link RootWatcher}. */
export interface RootWatcherOptions {
  fs: WatchFs;
  /** Paths that changed under targets of `sources` (none: the set of roots itself changed). */
  onChange(paths: readonly string[], sources: readonly Source[]): void;
  /** The OS dropped events: anything may have changed. */
  onRescan(): void;
  /** A watch failed or came back (health() changed). */
  onHealth(): void;
}

/** How the watch stands. */
export interface WatchHealth {
  /** Targets watched directly. */
  watching: number;
  /** Targets that do not exist yet (watched through an ancestor, or rechecked). */
  waiting: number;
  /** Targets that cannot be watched, each with what to do about it. */
  failed: { path: string; note: string }[];
}

interface Armed {
  t: WatchTarget;
  state: "watching" | "waiting" | "failed";
  /** The ancestor a waiting target is watched through (null: none could be). */
  via: string | null;
  note: string | null;
}

interface Group {
  recursive: boolean;
  paths: string[];
  watch: FsWatch;
}

/** One key per (path, recursive) watch wanted. */
const keyOf = (path: string, recursive: boolean) => `${recursive ? "r" : "f"}:${path}`;

export class RootWatcher {
  readonly #o: RootWatcherOptions;
  #armed = new Map<string, Armed>();
  #groups: Group[] = [];
  #targets: WatchTarget[] = [];
  #closed = false;
  /** Serializes update(): a re-arm from an event never races a caller's update. */
  #updating: Promise<void> = Promise.resolve();

  constructor(o: RootWatcherOptions) {
    this.#o = o;
  }

  health(): WatchHealth {
    let watching = 0, waiting = 0;
    const failed: { path: string; note: string }[] = [];
    for (const a of this.#armed.values()) {
      if (a.state === "watching") watching++;
      else if (a.state === "waiting") waiting++;
      else failed.push({ path: a.t.path, note: a.note ?? "the watch failed" });
    }
    return { watching, waiting, failed };
  }

  /** Watches exactly `targets` (called at start and whenever the roots were re-resolved). */
  update(targets: readonly WatchTarget[]): Promise<void> {
    const run = this.#updating.then(() => this.#update([...targets], false));
    this.#updating = run.catch(() => {});
    return run;
  }

  /** Tries the failed targets again (the scheduler's safety-net period). */
  retryFailed(): Promise<void> {
    const run = this.#updating.then(() => this.#update(this.#targets, true));
    this.#updating = run.catch(() => {});
    return run;
  }

  /** Looks again for waiting targets that could not be watched through an ancestor. */
  recheck(): Promise<void> {
    const stale = [...this.#armed.values()].some((a) => a.state === "waiting" && a.via === null);
    return stale ? this.update(this.#targets) : Promise.resolve();
  }

  close(): void {
    this.#closed = true;
    for (const g of this.#groups) g.watch.close();
    this.#groups = [];
  }

  async #update(targets: WatchTarget[], retry: boolean): Promise<void> {
    if (this.#closed) return;
    this.#targets = targets;
    const before = this.#armed;
    const next = new Map<string, Armed>();
    // What each target needs now: itself when it exists, else its nearest ancestor.
    const want = new Map<string, { recursive: boolean; path: string }>();
    const reportWhole: WatchTarget[] = [];
    for (const t of targets) {
      const old = before.get(t.path);
      if (old?.state === "failed" && !retry) {
        next.set(t.path, { ...old, t });
        continue;
      }
      if (await this.#o.fs.exists(t.path)) {
        next.set(t.path, { t, state: "watching", via: null, note: null });
        want.set(keyOf(t.path, t.recursive), { recursive: t.recursive, path: t.path });
        // Appeared (or came back) since the last arming: whatever it holds is new to us.
        if (old && old.state !== "watching") reportWhole.push(t);
      } else {
        const via = await this.#ancestor(t.path);
        next.set(t.path, { t, state: "waiting", via, note: null });
        if (via !== null) want.set(keyOf(via, false), { recursive: false, path: via });
      }
    }
    this.#armed = next;
    const have = new Set(this.#groups.flatMap((g) => g.paths.map((p) => keyOf(p, g.recursive))));
    const missing = [...want.entries()].filter(([k]) => !have.has(k)).map(([, w]) => w);
    // Groups none of whose paths is wanted any more are closed.
    this.#groups = this.#groups.filter((g) => {
      const keep = g.paths.some((p) => want.has(keyOf(p, g.recursive)));
      if (!keep) g.watch.close();
      return keep;
    });
    if (missing.length > 0 && this.#groups.length + 2 > MAX_GROUPS) {
      for (const g of this.#groups) g.watch.close();
      this.#groups = [];
      missing.splice(0, missing.length, ...want.values());
      for (const a of next.values()) if (a.state === "watching") reportWhole.push(a.t);
    }
    for (const recursive of [true, false]) {
      const paths = missing.filter((m) => m.recursive === recursive).map((m) => m.path);
      if (paths.length > 0) this.#start(paths, recursive);
    }
    for (const t of new Set(reportWhole)) this.#o.onChange([t.path], t.sources);
    this.#o.onHealth();
  }

  /** Starts one group; on failure, each path alone (so the others are still watched). */
  #start(paths: string[], recursive: boolean): void {
    try {
      const watch = this.#o.fs.watch(paths, { recursive });
      const g: Group = { recursive, paths, watch };
      this.#groups.push(g);
      void this.#consume(g);
    } catch (err) {
      if (paths.length > 1) {
        for (const p of paths) this.#start([p], recursive);
        return;
      }
      this.#fail(paths, recursive, err);
    }
  }

  async #consume(g: Group): Promise<void> {
    try {
      for await (const e of g.watch) this.#route(e);
    } catch (err) {
      if (this.#closed) return;
      this.#groups = this.#groups.filter((x) => x !== g);
      try {
        g.watch.close();
      } catch { /* already closed by its failure */ }
      this.#fail(g.paths, g.recursive, err);
      this.#o.onHealth();
    }
  }

  /** Marks the targets a failed watch served (directly or as their ancestor) failed. */
  #fail(paths: string[], recursive: boolean, err: unknown): void {
    const note = watchFailureNote(err instanceof Error ? err.message : String(err));
    const set = new Set(paths);
    for (const a of this.#armed.values()) {
      const direct = a.state === "watching" && a.t.recursive === recursive && set.has(a.t.path);
      const through = a.state === "waiting" && !recursive && a.via !== null && set.has(a.via);
      if (direct) Object.assign(a, { state: "failed", note });
      else if (through) a.via = null; // rechecked by stat instead
    }
  }

  #route(e: WatchEvent): void {
    if (this.#closed) return;
    if (e.flag === "rescan") {
      this.#o.onRescan();
      return;
    }
    let rearm = false;
    for (const a of this.#armed.values()) {
      const t = a.t;
      if (a.state === "watching") {
        const hits = e.paths.filter((p) =>
          p === t.path || (t.recursive ? p.startsWith(t.path + "/") : dirname(p) === t.path)
        );
        if (hits.length === 0) continue;
        // The root itself went away (or was replaced), and its watch with it: wait for it
        // again (its group no longer counts it as watched, so it is re-made on return).
        if ((e.kind === "remove" || e.kind === "rename") && hits.includes(t.path)) {
          rearm = true;
          for (const g of this.#groups) {
            if (g.recursive === t.recursive) g.paths = g.paths.filter((p) => p !== t.path);
          }
        }
        this.#o.onChange(hits, t.sources);
      } else if (a.state === "waiting" && a.via !== null) {
        if (e.paths.some((p) => p === t.path || t.path.startsWith(p + "/"))) rearm = true;
      }
    }
    if (rearm) void this.update(this.#targets);
  }

  /** The nearest existing ancestor of `path` that can be watched, or null. */
  async #ancestor(path: string): Promise<string | null> {
    for (let d = dirname(path), up = dirname(d);; d = up, up = dirname(d)) {
      if (await this.#o.fs.exists(d)) return d;
      if (d === up) return null;
    }
  }
}
