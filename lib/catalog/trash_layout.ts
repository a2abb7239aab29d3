/**
 * The trash: where a deleted native session waits TRASH_KEEP_MS before it is gone for
 * good. This header is the spec of its layout and of the crash behaviour of every step
 * that touches it (delete_session.ts, trash_restore.ts, trash_gc.ts).
 *
 * Layout (`<state-root>/trash/`, 0700, on the same volume as `<state-root>/logs/`):
 *   <deleted_at_ms>-<session_id>/          a session directory, moved here whole by ONE
 *                                          rename(2) of `logs/<session_id>` (never a copy:
 *                                          across volumes the delete fails instead)
 *   .purge-<deleted_at_ms>-<session_id>/   an expired entry being removed by the GC
 * The name alone records what the trash needs (the original id and when it was
 * deleted), so there is no sidecar file that a crash could leave out of step with the
 * directory: the rename is the whole commit. `deleted_at_ms` is decimal epoch ms and
 * the id matches SESSION_ID_GRAMMAR; the first "-" after the digits splits them.
 * Anything else in trash/ (a symlink, a file, an unparseable name) was not written by
 * us: it is never listed, restored or removed.
 *
 * Invariants:
 *  - a session's index key `intendant:<id>` is tombstoned BEFORE its directory leaves
 *    logs/ (a sweep that read the manifest earlier can then never republish it);
 *  - the tombstone is lifted BEFORE the directory returns to logs/ (so no state shows a
 *    session in logs/ that search silently ignores, except a delete's own crash window);
 *  - a rename is made durable by fsyncing both parent directories before we report it.
 *
 * Crash between any two steps (the indexer reads only logs/, so a directory in trash/
 * is invisible to search whether or not it is tombstoned):
 *  - delete, after the tombstone, before the rename: the session is still in logs/,
 *    tombstoned (absent from search). The next daemon start, `intendant index`, and the
 *    commands that list or move native sessions finish it (trash_recover.ts: the
 *    directory moves to the trash under the tombstone's time), so the list never shows a
 *    session search cannot find for longer than that (H9);
 *    A rename that FAILS (not a crash) lifts the tombstone again before reporting;
 *  - restore, after lifting, before the rename: the entry is still in trash/, merely not
 *    tombstoned. `intendant restore` again finishes it (lifting is idempotent); left
 *    alone it expires like any other entry;
 *  - GC, after renaming an entry to .purge-…, during the removal: the next GC removes
 *    the rest; a .purge- entry is never listed or restored.
 */
import { dirname, join } from "node:path";
import type { Store } from "../message_search/mod.ts";
import { SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import { ensurePrivateDirSync, realFs } from "../durable/mod.ts";
import { ContainmentError } from "../errors.ts";

/** The trash directory's name under the state root. */
export const TRASH_DIR = "trash";
/** How long a deleted session stays restorable. */
export const TRASH_KEEP_DAYS = 14;
export const TRASH_KEEP_MS = TRASH_KEEP_DAYS * 86_400_000;
/** Prefix of an entry the GC has claimed and is removing. */
export const PURGE_PREFIX = ".purge-";

/** What the trash operations need. Paths come from ResolvedConfig. */
export interface TrashDeps {
  /** `<state-root>` (the trash is `<state-root>/trash`). */
  stateRoot: string;
  /** `<state-root>/logs` */
  logsDir: string;
  store: Store;
  /** @default Date.now */
  now?: () => number;
}

/** One entry as its directory name says. */
export interface RawTrashEntry {
  /** The directory name under trash/. */
  name: string;
  dir: string;
  sessionId: string;
  deletedAtMs: number;
}

const ENTRY_NAME = /^(\d{1,16})-(.+)$/;

/** `<state-root>/trash` */
export function trashDirOf(stateRoot: string): string {
  return join(stateRoot, TRASH_DIR);
}

/** The entry name for a session deleted at `deletedAtMs`. */
export function trashEntryName(deletedAtMs: number, sessionId: string): string {
  if (!Number.isSafeInteger(deletedAtMs) || deletedAtMs < 0) {
    throw new RangeError(`Invalid deletion time "${deletedAtMs}"`);
  }
  if (!SESSION_ID_GRAMMAR.test(sessionId)) {
    throw new RangeError(`Invalid session id "${sessionId.slice(0, 80)}"`);
  }
  return `${deletedAtMs}-${sessionId}`;
}

/** Parses an entry name; null for anything we did not write (purges included). */
export function parseTrashEntryName(
  name: string,
): { deletedAtMs: number; sessionId: string } | null {
  const m = ENTRY_NAME.exec(name);
  if (!m) return null;
  const deletedAtMs = Number(m[1]);
  const sessionId = m[2]!;
  if (!Number.isSafeInteger(deletedAtMs) || !SESSION_ID_GRAMMAR.test(sessionId)) return null;
  return { deletedAtMs, sessionId };
}

/**
 * True when `trashDir` is a real directory, false when absent; ContainmentError when a
 * symlink or file sits at its name (reading or renaming through it could leave the root).
 */
export async function trashDirExists(trashDir: string): Promise<boolean> {
  const st = await lstatOrNull(trashDir);
  if (!st) return false;
  if (st.isSymlink || !st.isDirectory) {
    throw new ContainmentError(`Refusing "${trashDir}": not a real directory (symlink or file)`);
  }
  return true;
}

/** The trash's entries (real directories with our names only), newest deletion first. */
export async function readTrashEntries(trashDir: string): Promise<RawTrashEntry[]> {
  const out: RawTrashEntry[] = [];
  if (!(await trashDirExists(trashDir))) return out;
  try {
    // readDir does not follow symlinks: a symlink planted here is never an entry.
    for await (const e of Deno.readDir(trashDir)) {
      if (!e.isDirectory || e.isSymlink) continue;
      const p = parseTrashEntryName(e.name);
      if (p) out.push({ name: e.name, dir: join(trashDir, e.name), ...p });
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return out.sort((a, b) => b.deletedAtMs - a.deletedAtMs || (a.sessionId < b.sessionId ? -1 : 1));
}

/** lstat, or null when nothing is there. */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Makes `dir` a private real directory (a symlink there is refused: a rename through it
 * could leave the state root). When it had to be created, its parent is fsynced so the
 * new entry survives power loss before anything is renamed into it.
 */
export async function ensureDurableDir(dir: string): Promise<void> {
  const existed = (await lstatOrNull(dir)) !== null;
  ensurePrivateDirSync(dir);
  if (!existed) await realFs.syncDir(dirname(dir));
}

/** fsyncs each directory (both parents of a rename). */
export async function syncDirs(dirs: readonly string[]): Promise<void> {
  for (const d of dirs) await realFs.syncDir(d);
}
