/**
 * Who holds a flock: the kernel's own table (/proc/locks) read for the pid holding a
 * FLOCK on a given file. Lives in durable/ because it opens a file by hand (/proc/locks
 * reports size 0, so the size-capped contained reader cannot read it; nothing can be
 * planted in /proc) and fstats a lock handle — the two shapes the house rule keeps here.
 * Best effort by contract: the pid only helps a user find the other writer, so every
 * failure (not Linux, a profile without /proc, an unknown line shape) yields null.
 */

/** A file's identity as the kernel's lock table names it. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** /proc/locks is a few lines per lock held on the machine; past this we stop looking. */
const PROC_LOCKS_MAX_BYTES = 1024 * 1024;

/** The identity of an open handle (null where the platform reports no inode). */
export function identityOf(file: Deno.FsFile): FileIdentity | null {
  const st = file.statSync();
  return st.ino === null ? null : { dev: st.dev, ino: st.ino };
}

/**
 * The pid holding a FLOCK on the file `id` according to the kernel (/proc/locks lines:
 * `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`, device numbers in hex;
 * waiters are prefixed "->" and skipped), or null when unknown.
 */
export async function flockHolder(id: FileIdentity): Promise<number | null> {
  let text: string;
  try {
    text = await readProcLocks();
  } catch (err) {
    // NotFound (not Linux), NotCapable/PermissionDenied (a profile without /proc): no pid.
    void err;
    return null;
  }
  // Linux dev_t: minor = bits 0-7 and 20-31, major = bits 8-19 (glibc gnu_dev_major/minor).
  const major = Math.floor(id.dev / 256) % 4096;
  const minor = (id.dev % 256) + (Math.floor(id.dev / 1048576) % 4096) * 256;
  const want = `${major.toString(16).padStart(2, "0")}:${
    minor.toString(16).padStart(2, "0")
  }:${id.ino}`;
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f[1] !== "FLOCK" || f[5] !== want) continue;
    const pid = Number(f[4]);
    if (Number.isSafeInteger(pid) && pid > 0) return pid;
  }
  return null;
}

async function readProcLocks(): Promise<string> {
  const f = await Deno.open("/proc/locks", { read: true });
  try {
    const buf = new Uint8Array(PROC_LOCKS_MAX_BYTES);
    let n = 0;
    while (n < buf.length) {
      const got = await f.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    return new TextDecoder().decode(buf.subarray(0, n));
  } finally {
    f.close();
  }
}
