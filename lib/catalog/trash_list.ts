/**
 * The trash listing (`intendant trash`, `GET /api/trash`): every entry, most recent
 * deletion first, with the session's facts and when the GC will remove it. Reads only
 * (contained meta reads, an lstat walk for the size); an entry whose meta is unreadable
 * still lists, with null facts.
 */
import { mapPool } from "./native_facts.ts";
import { type SessionFacts, sessionFacts } from "./trash_facts.ts";
import { readTrashEntries, TRASH_KEEP_MS, trashDirOf } from "./trash_layout.ts";

/** One listed trash entry. */
export interface TrashEntry extends SessionFacts {
  /** The entry's directory name under `<state-root>/trash/`. */
  entry: string;
  deleted_at_ms: number;
  /** When the trash GC removes it for good. */
  expires_at_ms: number;
}

/** Lists the trash under `o.stateRoot`. */
export async function listTrash(o: { stateRoot: string }): Promise<TrashEntry[]> {
  const entries = await readTrashEntries(trashDirOf(o.stateRoot));
  return await mapPool(entries, async (e) => ({
    ...await sessionFacts(e.dir, e.sessionId),
    entry: e.name,
    deleted_at_ms: e.deletedAtMs,
    expires_at_ms: e.deletedAtMs + TRASH_KEEP_MS,
  }));
}
