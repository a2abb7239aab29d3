/**
 * The trash GC: removes entries deleted TRASH_KEEP_MS or longer ago. Runs at daemon
 * start (after the index's startup maintenance) and in `intendant index`. Each expired
 * entry is first renamed to `.purge-<name>` (atomic: from then on it is neither listed
 * nor restorable), then removed; a removal cut short by a crash is finished by the next
 * run, which removes every `.purge-` directory it finds. Names we did not write are
 * never touched. The clock is injected (tests move it; the trash trusts the deletion
 * time in each name, see trash_layout.ts).
 */
import { join } from "node:path";
import {
  PURGE_PREFIX,
  readTrashEntries,
  syncDirs,
  TRASH_KEEP_MS,
  trashDirExists,
  trashDirOf,
} from "./trash_layout.ts";

/** Options for {@link gcTrash}. */
export interface TrashGcOptions {
  /** `<state-root>` */
  stateRoot: string;
  /** @default Date.now */
  now?: () => number;
}

/** What one GC run removed. */
export interface TrashGcReport {
  /** Session ids removed for good. */
  purged: string[];
  /** Entries still restorable. */
  kept: number;
}

/** Removes expired trash entries and leftovers of an interrupted purge. */
export async function gcTrash(o: TrashGcOptions): Promise<TrashGcReport> {
  const trashDir = trashDirOf(o.stateRoot);
  const nowMs = (o.now ?? Date.now)();
  const leftovers: string[] = [];
  if (!(await trashDirExists(trashDir))) return { purged: [], kept: 0 };
  try {
    for await (const e of Deno.readDir(trashDir)) {
      if (e.isDirectory && !e.isSymlink && e.name.startsWith(PURGE_PREFIX)) leftovers.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { purged: [], kept: 0 };
    throw err;
  }
  for (const name of leftovers) await removeTree(join(trashDir, name));
  const purged: string[] = [];
  let kept = 0;
  for (const e of await readTrashEntries(trashDir)) {
    if (e.deletedAtMs + TRASH_KEEP_MS > nowMs) {
      kept++;
      continue;
    }
    const claimed = join(trashDir, PURGE_PREFIX + e.name);
    await Deno.rename(e.dir, claimed);
    await syncDirs([trashDir]);
    await removeTree(claimed);
    purged.push(e.sessionId);
  }
  return { purged, kept };
}

async function removeTree(path: string): Promise<void> {
  try {
    await Deno.remove(path, { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}
