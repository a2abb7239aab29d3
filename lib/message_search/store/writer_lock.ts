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
 *  - taking the lock writes nothing (issue 16: a no-op sweep writes 0 bytes; the file
 *    used to be rewritten with `{pid, acquired_at_ms}` on every acquisition, 43 B per
 *    no-op `intendant index`). The holder named in LockHeldError comes from the kernel's
 *    own table instead (/proc/locks: the pid holding a FLOCK on the file's dev+ino),
 *    which is exact and never stale; where it cannot be read (not Linux, or a profile
 *    that does not grant it) the error simply names no pid. Content left in the file by
 *    an older version is ignored.
 * The lock file is opened directly, not through the injectable Fs: Fs has no lock
 * operation and the file carries no store data. It is opened with the durable creation
 * hygiene (created O_EXCL, or an existing regular single-link file with its dev+ino
 * re-checked): a symlink planted at its name (to /dev/zero, or to a file outside) is
 * refused with a ContainmentError, never followed (reliability C1, F5).
 */
import { join } from "node:path";
import {
  type FileIdentity,
  flockHolder,
  identityOf,
  openRegularFileSync,
} from "../../durable/mod.ts";
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
    let id: FileIdentity | null = null;
    try {
      locked = await file.tryLock(true);
      if (!locked) id = identityOf(file);
    } finally {
      if (!locked) file.close();
    }
    if (locked) return handleFor(path, file);
    if (Date.now() >= deadline) {
      const holder = id ? await flockHolder(id) : null;
      throw new LockHeldError(
        `Writer lock "${path}" is held by another writer${holder ? ` (pid ${holder})` : ""}: ` +
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
