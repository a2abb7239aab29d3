/**
 * Deleting a native session (the CLI and the API share this): it moves to the trash,
 * restorable for TRASH_KEEP_DAYS (layout, ordering and crash behaviour: trash_layout.ts).
 * Tombstone first, then one rename of `logs/<id>` into trash/; a rename that fails with
 * the directory still in logs/ lifts the tombstone again, so a failed delete changes
 * nothing. Also the id policy of every command that moves a session: a full id, or a
 * prefix of at least MIN_PREFIX_CHARS that names one session (a one-character prefix
 * once deleted a session by accident); a shorter prefix is refused with its matches.
 */
import { join } from "node:path";
import {
  AmbiguousPrefixError,
  ContainmentError,
  InvalidInputError,
  NotFoundError,
} from "../errors.ts";
import { liftArchiveTombstone, sessionKey } from "../message_search/mod.ts";
import { assertSessionIdGrammar, SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import { nativeSessionIds } from "./resolve_key.ts";
import {
  ensureDurableDir,
  lstatOrNull,
  readTrashEntries,
  syncDirs,
  TRASH_KEEP_MS,
  type TrashDeps,
  trashDirOf,
  trashEntryName,
} from "./trash_layout.ts";

/** Shortest id prefix that may name a session to delete or restore. */
export const MIN_PREFIX_CHARS = 8;

/** A prefix too short to move a session by; `candidates` are the full ids it matches. */
export class ShortPrefixError extends InvalidInputError {
  readonly prefix: string;
  readonly candidates: readonly string[];
  constructor(prefix: string, candidates: readonly string[], options?: ErrorOptions) {
    const shown = candidates.slice(0, 8).map((c) => `"${c}"`).join(", ");
    const more = candidates.length > 8 ? ` and ${candidates.length - 8} more` : "";
    const matches = candidates.length ? `matches ${shown}${more}` : "matches no session";
    super(
      `Session prefix "${prefix}" is too short: give the full id or at least ` +
        `${MIN_PREFIX_CHARS} characters (it ${matches})`,
      options,
    );
    this.name = "ShortPrefixError";
    this.prefix = prefix;
    this.candidates = candidates;
  }
}

/**
 * The one id in `ids` that `idOrPrefix` names: itself, or the single id it prefixes
 * when it has MIN_PREFIX_CHARS or more. ShortPrefixError, AmbiguousPrefixError,
 * NotFoundError (`what` names the place searched, for the message).
 */
export function pickSessionId(ids: readonly string[], idOrPrefix: string, what: string): string {
  assertSessionIdGrammar(idOrPrefix);
  if (ids.includes(idOrPrefix)) return idOrPrefix;
  const matches = [...new Set(ids.filter((id) => id.startsWith(idOrPrefix)))].sort();
  if (idOrPrefix.length < MIN_PREFIX_CHARS) throw new ShortPrefixError(idOrPrefix, matches);
  if (matches.length === 0) throw new NotFoundError(`No ${what} matches "${idOrPrefix}"`);
  if (matches.length > 1) throw new AmbiguousPrefixError(idOrPrefix, matches);
  return matches[0]!;
}

/** The native session `idOrPrefix` names, for deletion (see {@link pickSessionId}). */
export async function resolveNativeForDelete(
  logsDir: string,
  idOrPrefix: string,
): Promise<{ sessionId: string; dir: string }> {
  const id = pickSessionId(await nativeSessionIds(logsDir), idOrPrefix, "native session");
  return { sessionId: id, dir: join(logsDir, id) };
}

/** What a delete did. */
export interface TrashedSession {
  session_id: string;
  /** `intendant:<id>` */
  key: string;
  /** The entry's directory name under trash/. */
  entry: string;
  deleted_at_ms: number;
  /** When the trash GC may remove it for good. */
  expires_at_ms: number;
}

/** Moves `logs/<sessionId>` (= `dir`) to the trash, tombstoning its shard first. */
export async function deleteNativeSession(
  d: TrashDeps,
  sessionId: string,
  dir: string,
): Promise<TrashedSession> {
  if (!SESSION_ID_GRAMMAR.test(sessionId)) {
    throw new InvalidInputError(`Invalid session id "${sessionId.slice(0, 80)}"`);
  }
  // Exactly logs/<id>: the rename moves whatever this names, so nothing else qualifies.
  if (dir !== join(d.logsDir, sessionId)) {
    throw new ContainmentError(`Refusing to delete "${dir}": not a session under "${d.logsDir}"`);
  }
  const st = await lstatOrNull(dir);
  if (!st || st.isSymlink || !st.isDirectory) {
    throw new NotFoundError(`No native session directory "${sessionId}"`);
  }
  const trashDir = trashDirOf(d.stateRoot);
  await ensureDurableDir(trashDir);
  let deletedAt = Math.floor((d.now ?? Date.now)());
  // Two deletes of one id in one millisecond cannot share an entry name.
  while (await lstatOrNull(join(trashDir, trashEntryName(deletedAt, sessionId)))) deletedAt++;
  const entry = trashEntryName(deletedAt, sessionId);
  const key = sessionKey("intendant", sessionId);
  await d.store.deleteSession(key);
  try {
    await Deno.rename(dir, join(trashDir, entry));
  } catch (err) {
    // Gone from logs/ (a concurrent delete, or trash_recover.ts, moved it): the session
    // IS in the trash with this key tombstoned — what was asked. Report that entry.
    if (err instanceof Deno.errors.NotFound && !(await lstatOrNull(dir))) {
      const moved = (await readTrashEntries(trashDir)).find((e) => e.sessionId === sessionId);
      if (moved) {
        return {
          session_id: sessionId,
          key,
          entry: moved.name,
          deleted_at_ms: moved.deletedAtMs,
          expires_at_ms: moved.deletedAtMs + TRASH_KEEP_MS,
        };
      }
    }
    // Still in logs/ (EXDEV, EACCES…): without this the session would stay listed but
    // silently absent from search.
    if (await lstatOrNull(dir)) {
      try {
        // An archive sweep may have carried the tombstone meanwhile: lift that one too.
        await liftArchiveTombstone(d.store, key);
        await d.store.liftTombstone(key);
      } catch (liftErr) {
        throw new AggregateError(
          [err, liftErr],
          `Cannot move session "${sessionId}" to the trash (${(err as Error).message}) nor ` +
            `lift its tombstone: \`intendant restore ${sessionId}\` lifts it`,
        );
      }
    }
    throw err;
  }
  await syncDirs([trashDir, d.logsDir]);
  return {
    session_id: sessionId,
    key,
    entry,
    deleted_at_ms: deletedAt,
    expires_at_ms: deletedAt + TRASH_KEEP_MS,
  };
}
