/**
 * The narrow interface the watcher uses to see the file system: start a watch on one or
 * more paths (inotify on Linux, FSEvents on macOS, through Deno.watchFs) and ask whether a
 * path exists. Tests inject their own to make a watch fail, overflow or hit the watch
 * limit; production uses {@link realWatchFs}, the only place Deno.watchFs is called.
 * Existence goes through lib/durable's Fs (a stat, following a symlinked root as discovery
 * does; a path that cannot be looked at counts as absent).
 */
import { realFs, statOrNull } from "../../durable/mod.ts";

/** One file-system event (Deno.FsEvent's shape). */
export interface WatchEvent {
  kind: string;
  paths: string[];
  /** "rescan": the OS dropped events (a queue overflow); everything may have changed. */
  flag?: string | null;
}

/** A running watch: its events until closed; the iterator throws when the watch fails. */
export interface FsWatch extends AsyncIterable<WatchEvent> {
  close(): void;
}

/** What the watcher needs from the file system. */
export interface WatchFs {
  /** Throws at once when the watch cannot be set up (missing path, limit, permission). */
  watch(paths: string[], o: { recursive: boolean }): FsWatch;
  exists(path: string): Promise<boolean>;
}

export const realWatchFs: WatchFs = {
  watch: (paths, o) => Deno.watchFs(paths, { recursive: o.recursive }),
  exists: async (path) => (await statOrNull(realFs, path).catch(() => null)) !== null,
};
