/**
 * Finishing a delete that a crash cut short (H9). A delete tombstones the session's index
 * key, then renames `logs/<id>` into the trash (trash_layout.ts); killed between the two,
 * it left the session listed (its directory is still in logs/) but never searchable (its
 * key is tombstoned), and nothing said so. The tombstone is the commit of the user's
 * decision (it is written only after the confirmation), so recovery FINISHES the delete:
 * the directory moves to the trash under the tombstone's time, restorable like any other
 * entry. Nothing else leaves a native key tombstoned with its directory in logs/: a
 * restore lifts the tombstone before its rename, and a failed rename lifts it again.
 * Runs where the trash GC runs (daemon start, `intendant index`) and before the commands
 * that list or move native sessions (sessions, delete, restore, trash).
 * Races: a delete running in another process at this moment may find its directory gone
 * (moved here): deleteNativeSession then reports the entry this made (see there).
 */
import { join } from "node:path";
import { sessionKey } from "../message_search/mod.ts";
import { SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import {
  ensureDurableDir,
  lstatOrNull,
  syncDirs,
  type TrashDeps,
  trashDirOf,
  trashEntryName,
} from "./trash_layout.ts";

const NATIVE_PREFIX = sessionKey("intendant", "");

/** Moves every tombstoned native session still in logs/ to the trash; returns their ids. */
export async function finishInterruptedDeletes(d: TrashDeps): Promise<string[]> {
  const m = await d.store.readManifest();
  const done: string[] = [];
  for (const [key, tombstonedAtMs] of Object.entries(m.tombstones)) {
    if (!key.startsWith(NATIVE_PREFIX)) continue;
    const id = key.slice(NATIVE_PREFIX.length);
    if (!SESSION_ID_GRAMMAR.test(id)) continue;
    const dir = join(d.logsDir, id);
    const st = await lstatOrNull(dir);
    if (!st || st.isSymlink || !st.isDirectory) continue;
    const trashDir = trashDirOf(d.stateRoot);
    await ensureDurableDir(trashDir);
    let at = Math.max(0, Math.floor(tombstonedAtMs));
    while (await lstatOrNull(join(trashDir, trashEntryName(at, id)))) at++;
    try {
      await Deno.rename(dir, join(trashDir, trashEntryName(at, id)));
    } catch (err) {
      // Moved meanwhile by the delete that tombstoned it: that one finishes it.
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    await syncDirs([trashDir, d.logsDir]);
    done.push(id);
  }
  return done;
}
