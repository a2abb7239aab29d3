/**
 * `<cache-root>/cursor.key`: the 32-byte HMAC key that signs search cursors, so a page
 * link survives a daemon restart.
 *
 * Invariants (reliability F5):
 *  - the key is only ever written whole (writeFileAtomic, 0600) and only ever read
 *    through the contained reader, capped at CURSOR_KEY_BYTES + 1 bytes: a symlink (to
 *    /dev/zero, a FIFO, a file outside), a hard link, a FIFO or a huge file at the name
 *    is never followed, waited on or read past the cap — a `Deno.readFile` of a symlink to
 *    /dev/zero grew the locked daemon to 2.7 GB in 1.5 s;
 *  - anything but exactly CURSOR_KEY_BYTES bytes is replaced by a fresh random key (the
 *    rename replaces a planted symlink itself, never its target) and said in one line:
 *    the only cost is that open search pages start over;
 *  - if the name cannot be replaced (a directory sits there), the process keeps the fresh
 *    key in memory and still serves: cursors then last until the restart.
 */
import { join } from "node:path";
import { ensurePrivateDirSync, readInside, writeFileAtomic } from "../durable/mod.ts";

/** The key file's name inside the cache root. */
export const CURSOR_KEY_FILE = "cursor.key";
/** Length of the HMAC key. */
export const CURSOR_KEY_BYTES = 32;

const REFUSAL_WORDS: Record<string, string> = {
  symlink: "a symbolic link",
  not_regular: "not a regular file",
  hardlinked: "a hard link",
  too_large: "larger than a key",
  swapped: "swapped while being read",
  parent: "behind a symbolic link",
};

/** Options for {@link loadCursorKey}. */
export interface CursorKeyOptions {
  /** Told (one line) when a bad key file is replaced. */
  logger?: (line: string) => void;
}

/** Loads (or creates, 0600) the HMAC key that signs search cursors. */
export async function loadCursorKey(
  cacheRoot: string,
  o: CursorKeyOptions = {},
): Promise<Uint8Array> {
  ensurePrivateDirSync(cacheRoot);
  const path = join(cacheRoot, CURSOR_KEY_FILE);
  const r = await readInside(cacheRoot, CURSOR_KEY_FILE, {
    maxBytes: CURSOR_KEY_BYTES,
    hardlinks: "refuse",
  });
  if (r.ok && r.bytes.length === CURSOR_KEY_BYTES) return r.bytes;
  const key = crypto.getRandomValues(new Uint8Array(CURSOR_KEY_BYTES));
  const what = r.ok
    ? `${r.bytes.length} bytes, not ${CURSOR_KEY_BYTES}`
    : r.reason === "missing"
    ? null
    : (REFUSAL_WORDS[r.reason] ?? r.reason);
  try {
    await writeFileAtomic(path, key);
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    o.logger?.(
      `intendant: cannot replace the search cursor key "${path}" (${err.message}); using a key kept in memory until restart`,
    );
    return key;
  }
  if (what !== null) {
    o.logger?.(
      `intendant: the search cursor key "${path}" was ${what}; a new key was written (open search pages start over)`,
    );
  }
  return key;
}
