/**
 * Restoring a native session from the trash (the CLI's `restore` and the dashboard's
 * Undo): lift the tombstone, then one rename of the entry back to `logs/<id>`; the next
 * sweep re-indexes it. Refuses (AlreadyExists) when `logs/<id>` exists, before touching
 * anything. When an id has several entries (deleted, restored, deleted again and the
 * first entry survived a crash), the most recent deletion is restored.
 * Crash and re-run behaviour is in trash_layout.ts; one case lives here: an id not in
 * the trash but still in logs/ with a tombstone is a delete that crashed between its two
 * steps, and restoring it means lifting that tombstone (`repaired: true`).
 * The archive (sessions older than the window) carried the tombstone into its own store,
 * where it never expires: it is lifted too, before the main's (liftArchiveTombstone says
 * why that order), so a restored old session is archive-searchable after the next build.
 * Race note: an empty directory created at `logs/<id>` between the check and the rename
 * is replaced by rename(2) (nothing is lost); a non-empty one makes the rename fail.
 */
import { join } from "node:path";
import { NotFoundError } from "../errors.ts";
import { liftArchiveTombstone, sessionKey } from "../message_search/mod.ts";
import { pickSessionId } from "./delete_session.ts";
import { nativeSessionIds } from "./resolve_key.ts";
import {
  ensureDurableDir,
  lstatOrNull,
  readTrashEntries,
  syncDirs,
  type TrashDeps,
  trashDirOf,
} from "./trash_layout.ts";

/** What a restore did. */
export interface RestoredSession {
  session_id: string;
  /** `intendant:<id>` */
  key: string;
  /** Where it is now: `<state-root>/logs/<id>`. */
  dir: string;
  /** When it had been deleted; null for a repaired half-finished delete. */
  deleted_at_ms: number | null;
  /** Whether a tombstone was lifted (false when it had already expired). */
  tombstone_lifted: boolean;
  /** The session was never moved (a delete interrupted after its tombstone). */
  repaired: boolean;
}

/** Restores the trash entry `idOrPrefix` names (a full id or ≥ 8-character prefix). */
export async function restoreNativeSession(
  d: TrashDeps,
  idOrPrefix: string,
): Promise<RestoredSession> {
  const trashDir = trashDirOf(d.stateRoot);
  const entries = await readTrashEntries(trashDir);
  let id: string;
  try {
    id = pickSessionId(entries.map((e) => e.sessionId), idOrPrefix, "session in the trash");
  } catch (err) {
    if (err instanceof NotFoundError) return await repairInterrupted(d, idOrPrefix, err);
    throw err;
  }
  // Newest deletion first (readTrashEntries' order).
  const entry = entries.find((e) => e.sessionId === id)!;
  const target = join(d.logsDir, id);
  if (await lstatOrNull(target)) {
    throw new Deno.errors.AlreadyExists(
      `Cannot restore "${id}": "${target}" already exists (rename or move it first)`,
    );
  }
  await ensureDurableDir(d.logsDir);
  const key = sessionKey("intendant", id);
  await liftArchiveTombstone(d.store, key);
  const lifted = await d.store.liftTombstone(key);
  await Deno.rename(entry.dir, target);
  await syncDirs([d.logsDir, trashDir]);
  return {
    session_id: id,
    key,
    dir: target,
    deleted_at_ms: entry.deletedAtMs,
    tombstone_lifted: lifted,
    repaired: false,
  };
}

/** Not in the trash: lift the stray tombstone of a session still in logs/, if any. */
async function repairInterrupted(
  d: TrashDeps,
  idOrPrefix: string,
  notInTrash: NotFoundError,
): Promise<RestoredSession> {
  let id: string;
  try {
    id = pickSessionId(await nativeSessionIds(d.logsDir), idOrPrefix, "native session");
  } catch (err) {
    if (err instanceof NotFoundError) throw notInTrash;
    throw err;
  }
  const key = sessionKey("intendant", id);
  if ((await d.store.readManifest()).tombstones[key] === undefined) {
    throw new Deno.errors.AlreadyExists(
      `Session "${id}" is not in the trash: it is in "${d.logsDir}" already`,
    );
  }
  await liftArchiveTombstone(d.store, key);
  const lifted = await d.store.liftTombstone(key);
  return {
    session_id: id,
    key,
    dir: join(d.logsDir, id),
    deleted_at_ms: null,
    tombstone_lifted: lifted,
    repaired: true,
  };
}
