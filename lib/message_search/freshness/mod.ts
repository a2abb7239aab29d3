/**
 * Freshness: the daemon's file watch and the sweep schedule it drives (issue 28). The only
 * door of freshness/.
 */
export {
  DEBOUNCE_MS,
  type Freshness,
  type FreshnessOptions,
  FreshnessScheduler,
  PENDING_PATHS_MAX,
  POLL_MIN_MS,
  SAFETY_NET_MS,
  type Sweeper,
} from "./scheduler.ts";
export { MAX_GROUPS, RootWatcher, type RootWatcherOptions, type WatchHealth } from "./watcher.ts";
export { type FsWatch, realWatchFs, type WatchEvent, type WatchFs } from "./watch_fs.ts";
export { watchFailureNote, watchLimitOf } from "./watch_errors.ts";
