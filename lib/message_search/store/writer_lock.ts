/**
 * Advisory writer lock: `flock(LOCK_EX|LOCK_NB)` on `<root>/writer.lock` via
 * `FsFile.tryLock(true)`. Efficiency, not correctness: every publish re-reads the
 * manifest under the lock and re-validates bases, watermarks and parser versions, so a
 * writer that runs without it (lock "none", or a filesystem where flock is a no-op) loses
 * at most a race that self-heals on the next sweep. The lock buys query-visible stability
 * and spares N daemons duplicate work.
 *
 * Why there is no stale takeover (reliability-plan §0.4): the kernel drops a flock when
 * the last fd of the holding process closes — including on SIGKILL, OOM kill or a crash —
 * so a lock can never outlive its holder and "is it stale?" never has to be guessed from
 * an age, a pid or a hostname. That removes the unlink + recreate takeover whose race
 * §0.4 measures. Two consequences keep it sound:
 *  - writer.lock is never deleted or replaced: a contender that recreated the file would
 *    lock a different inode and two writers would both "hold" the lock;
 *  - the `{pid, acquired_at_ms}` JSON inside is informational only (shown in
 *    LockHeldError); it may be stale after a crash and nothing trusts it.
 * The lock file is opened directly, not through the injectable Fs: Fs has no lock
 * operation and the file carries no store data. It is opened with the durable creation
 * hygiene (created O_EXCL, or an existing regular single-link file with its dev+ino
 * re-checked) and its holder info read through the contained reader, capped: a symlink
 * planted at its name (to /dev/zero, or to a file outside that the holder info would
 * truncate) is refused with a ContainmentError, never followed (reliability C1, F5).
 */
import { join } from "node:path";
import { openRegularFileSync, readContained } from "../../durable/mod.ts";
import { LockHeldError } from "../../errors.ts";

export const LOCK_FILE = "writer.lock";

/** Poll interval bounds while waiting for a busy lock. */
const POLL_MIN_MS = 5;
const POLL_MAX_MS = 50;

/** Options for {@link holdLock}. */
export interface HoldLockOptions {
  /** How long to keep retrying a busy lock. @default 0 (one attempt) */
  wait?: number;
}

/** A held lock. `release()` is idempotent. */
export interface LockHandle {
  readonly path: string;
  release(): void;
}

/**
 * Takes the writer lock of the store at `root`, retrying for up to `wait` ms.
 * Throws LockHeldError when another fd (this process or another) keeps holding it.
 */
export async function holdLock(root: string, options: HoldLockOptions = {}): Promise<LockHandle> {
  const { wait = 0 } = options;
  if (!Number.isFinite(wait) || wait < 0) {
    throw new RangeError(`Lock wait must be a non-negative number of ms: got "${wait}"`);
  }
  const path = join(root, LOCK_FILE);
  const deadline = Date.now() + wait;
  let pause = POLL_MIN_MS;
  for (;;) {
    const file = openRegularFileSync(root, LOCK_FILE, { root, mode: 0o600 });
    let locked = false;
    try {
      locked = await file.tryLock(true);
    } finally {
      if (!locked) file.close();
    }
    if (locked) {
      await recordHolder(file);
      return handleFor(path, file);
    }
    if (Date.now() >= deadline) {
      throw new LockHeldError(
        `Writer lock "${path}" is held by another writer${await describeHolder(path)}: ` +
          `not acquired within ${wait} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
    pause = Math.min(POLL_MAX_MS, pause * 2);
  }
}

function handleFor(path: string, file: Deno.FsFile): LockHandle {
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      // Unlock explicitly before closing: close() only drops Deno's handle, and the fd
      // itself can outlive it briefly while a finished blocking op releases its reference,
      // which would keep the flock held for a moment after release() returned.
      try {
        file.unlockSync();
      } finally {
        file.close();
      }
    },
  };
}

/** Best effort: the holder info is a debugging aid, so a failed write must not fail the lock. */
async function recordHolder(file: Deno.FsFile): Promise<void> {
  const info = JSON.stringify({ pid: Deno.pid, acquired_at_ms: Date.now() }) + "\n";
  try {
    await file.truncate(0);
    await file.write(new TextEncoder().encode(info));
  } catch (err) {
    // ENOSPC/EIO on a 40-byte informational write: the lock itself is held; carry on.
    void err;
  }
}

/** The holder info is ~40 bytes; anything past this is not ours. */
const HOLDER_INFO_MAX_BYTES = 4096;

async function describeHolder(path: string): Promise<string> {
  try {
    const r = await readContained(path, { maxBytes: HOLDER_INFO_MAX_BYTES });
    if (!r.ok) return "";
    const info = JSON.parse(new TextDecoder().decode(r.bytes)) as { pid?: unknown };
    return typeof info.pid === "number" ? ` (pid ${info.pid})` : "";
  } catch (err) {
    // Empty or half-written info (the holder is mid-write, or crashed before writing).
    void err;
    return "";
  }
}
