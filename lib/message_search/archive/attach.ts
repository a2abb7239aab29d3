/**
 * Which archive belongs to which main store: createMessageIndex attaches the archive it
 * opened to its main store, so an edge handed only the main store and indexer (the HTTP
 * routes) finds it without another dependency. A WeakMap: the association never keeps a
 * store alive, and a store without one answers null (archive search unavailable).
 */
import type { Store } from "../store/mod.ts";
import type { Archive } from "./archive.ts";

const ARCHIVES = new WeakMap<Store, Archive>();

/** Records that `archive` extends `main`. */
export function attachArchive(main: Store, archive: Archive): void {
  ARCHIVES.set(main, archive);
}

/** The archive attached to `main`, or null. */
export function archiveOf(main: Store): Archive | null {
  return ARCHIVES.get(main) ?? null;
}
