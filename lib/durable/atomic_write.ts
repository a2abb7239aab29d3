/**
 * writeFileAtomic: the one crash-safe way to replace a file. Protocol: create a sibling
 * temp with O_EXCL (name carries our pid so startup cleanup can tell live writers from
 * orphans), write, fsync, close, rename over the target, fsync the directory. On any
 * failure the temp is removed and the error rethrown; a failed fsync is never retried
 * and never followed by a rename (the kernel may already have dropped the dirty pages).
 * Invariant: a reader sees either the complete old bytes or the complete new bytes.
 */
import { basename, dirname, join } from "node:path";
import { type Fs, realFs } from "./fs.ts";

/** Options for {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** File system to write through. @default realFs */
  fs?: Fs;
  /** Mode of the new file. @default 0o600 */
  mode?: number;
  /** Process id recorded in the temp name. @default Deno.pid */
  pid?: number;
}

const TEMP_MARK = ".tmp-";

/** Atomically replaces `path` with `bytes` (string is UTF-8 encoded). */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array | string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { fs = realFs, mode = 0o600, pid = Deno.pid } = options;
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const dir = dirname(path);
  const rand = crypto.getRandomValues(new Uint32Array(2)).join("");
  const tmp = join(dir, `.${basename(path)}${TEMP_MARK}${pid}-${rand}`);
  const handle = await fs.createNew(tmp, mode);
  let closed = false;
  try {
    await handle.writeAll(data);
    await handle.sync();
    handle.close();
    closed = true;
    await fs.rename(tmp, path);
  } catch (err) {
    if (!closed) {
      try {
        handle.close();
      } catch { /* already closed by a failing op; the temp removal below is what matters */ }
    }
    await fs.remove(tmp).catch(() => {/* best effort: startup cleanup removes orphans */});
    throw err;
  }
  await fs.syncDir(dir);
}

/** True when `name` is a temp left by {@link writeFileAtomic}; returns the writer pid. */
export function parseTempName(name: string): { pid: number } | null {
  const at = name.lastIndexOf(TEMP_MARK);
  if (!name.startsWith(".") || at < 0) return null;
  const m = /^(\d+)-\d+$/.exec(name.slice(at + TEMP_MARK.length));
  return m ? { pid: Number(m[1]) } : null;
}

/** Options for {@link removeOrphanTemps}. */
export interface OrphanCleanupOptions {
  fs?: Fs;
  /** Reports whether a pid is alive; `null` when it cannot tell (no permission). */
  isAlive?: (pid: number) => boolean | null;
  /** Temps older than this are orphans whatever the pid says. @default 600_000 */
  maxAgeMs?: number;
  now?: () => number;
}

/**
 * Removes temps in `dir` left by crashed writers: the writer pid is dead, or the temp is
 * older than `maxAgeMs`. A live writer's fresh temp is never touched. Returns the count.
 */
export async function removeOrphanTemps(
  dir: string,
  options: OrphanCleanupOptions = {},
): Promise<number> {
  const { fs = realFs, isAlive = isPidAlive, maxAgeMs = 600_000, now = Date.now } = options;
  let removed = 0;
  let entries;
  try {
    entries = await fs.readDir(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
  for (const e of entries) {
    const parsed = e.isFile ? parseTempName(e.name) : null;
    if (!parsed) continue;
    const path = join(dir, e.name);
    const alive = isAlive(parsed.pid);
    let old = false;
    try {
      const st = await fs.lstat(path);
      old = st.mtimeMs !== null && now() - st.mtimeMs > maxAgeMs;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    if (alive === false || old) {
      await fs.remove(path).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
      removed++;
    }
  }
  return removed;
}

/** kill(pid, 0): true alive, false dead, null when we may not ask (no run permission). */
export function isPidAlive(pid: number): boolean | null {
  if (pid === Deno.pid) return true;
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    // EPERM means it exists but belongs to someone else.
    if (err instanceof Deno.errors.PermissionDenied) return true;
    return null;
  }
}
