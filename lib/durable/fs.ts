/**
 * The narrow file-system interface every durable writer goes through. The real
 * implementation maps 1:1 onto Deno's async APIs; tests substitute a wrapper that
 * injects errnos, kills the process at the k-th operation, or simulates power loss.
 * Invariant: callers never reach around it for store files (conventions: durability).
 * Store files a reader must not trust blindly (manifest.json, manifest.journal) are read
 * with `readFileCapped`: through the contained reader, never past a size cap.
 */
import { openContained, refusalError } from "./contained_open.ts";

/** An open, write-only handle created by {@link Fs.createNew}. */
export interface FsWriteHandle {
  /** Writes all of `bytes` (loops over short writes). */
  writeAll(bytes: Uint8Array): Promise<void>;
  /**
   * fsync(2) the file. A failure is final: never retry then rename — after a failed fsync
   * the kernel may have dropped the dirty pages and marked them clean, so a retry can
   * succeed over lost data.
   */
  sync(): Promise<void>;
  close(): void;
}

/** Minimal stat result the store and cursors need. */
export interface FsStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  size: number;
  mtimeMs: number | null;
  dev: number;
  ino: number;
}

/** What {@link Fs.readFileCapped} read. */
export interface CappedRead {
  bytes: Uint8Array;
  /** The stat of the file the bytes came from (fstat of the handle). */
  stat: FsStat;
}

/** Directory entry as returned by {@link Fs.readDir}. */
export interface FsDirEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

/** The operations durable writers and the store perform, nothing more. */
export interface Fs {
  createNew(path: string, mode: number): Promise<FsWriteHandle>;
  /**
   * Opens an EXISTING regular file for appending (O_APPEND, never creates: a new file's
   * directory entry would need its own fsync, so callers create through writeFileAtomic).
   */
  openAppend(path: string): Promise<FsWriteHandle>;
  readFile(path: string): Promise<Uint8Array>;
  /**
   * Reads a whole regular file of at most `maxBytes` without following a symlink or
   * waiting on a FIFO: a symlink, FIFO, device or directory throws ContainedReadError
   * ("symlink" / "not_regular"), a larger file too ("too_large", never read past the
   * cap); a missing one throws Deno.errors.NotFound. Hard links are allowed (store files
   * are ours and validated). Returns the bytes and the stat of the handle they came from.
   */
  readFileCapped(path: string, maxBytes: number): Promise<CappedRead>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  stat(path: string): Promise<FsStat>;
  lstat(path: string): Promise<FsStat>;
  readDir(path: string): Promise<FsDirEntry[]>;
  mkdir(path: string, mode: number): Promise<void>;
  /** fsync(2) a directory so a rename or create inside it survives power loss. */
  syncDir(path: string): Promise<void>;
}

/** `fs.stat(path)`, or null when nothing is there. */
export async function statOrNull(fs: Fs, path: string): Promise<FsStat | null> {
  try {
    return await fs.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** `fs.readFile(path)`, or null when nothing is there. */
export async function readFileOrNull(fs: Fs, path: string): Promise<Uint8Array | null> {
  try {
    return await fs.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Converts a Deno.FileInfo into the interface's stat shape. */
export function toFsStat(info: Deno.FileInfo): FsStat {
  return {
    isFile: info.isFile,
    isDirectory: info.isDirectory,
    isSymlink: info.isSymlink,
    size: info.size,
    mtimeMs: info.mtime ? info.mtime.getTime() : null,
    dev: info.dev ?? 0,
    ino: info.ino ?? 0,
  };
}

class RealWriteHandle implements FsWriteHandle {
  #file: Deno.FsFile;
  constructor(file: Deno.FsFile) {
    this.#file = file;
  }
  async writeAll(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) off += await this.#file.write(bytes.subarray(off));
  }
  async sync(): Promise<void> {
    await this.#file.sync();
  }
  close(): void {
    this.#file.close();
  }
}

/** The real file system. */
export const realFs: Fs = {
  async createNew(path, mode) {
    const file = await Deno.open(path, { createNew: true, write: true, mode });
    return new RealWriteHandle(file);
  },
  async openAppend(path) {
    const file = await Deno.open(path, { append: true });
    return new RealWriteHandle(file);
  },
  readFile: (path) => Deno.readFile(path),
  readFileCapped,
  rename: (from, to) => Deno.rename(from, to),
  remove: (path) => Deno.remove(path),
  stat: async (path) => toFsStat(await Deno.stat(path)),
  lstat: async (path) => toFsStat(await Deno.lstat(path)),
  async readDir(path) {
    const out: FsDirEntry[] = [];
    for await (const e of Deno.readDir(path)) {
      out.push({
        name: e.name,
        isFile: e.isFile,
        isDirectory: e.isDirectory,
        isSymlink: e.isSymlink,
      });
    }
    return out;
  },
  async mkdir(path, mode) {
    await Deno.mkdir(path, { recursive: true, mode });
  },
  async syncDir(path) {
    const dir = await Deno.open(path, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
  },
};

/** A path renamed over while being opened is retried this often before it is refused. */
const SWAP_RETRIES = 3;

/** Fs.readFileCapped of the real file system. */
async function readFileCapped(path: string, maxBytes: number): Promise<CappedRead> {
  for (let attempt = 1;; attempt++) {
    const opened = await openContained(path, { hardlinks: "allow", maxSize: maxBytes });
    // "swapped": a writer renamed a new file in between the lstat and the open (the
    // store's own lockless readers meet this): read the new one instead.
    if (!opened.ok && opened.reason === "swapped" && attempt < SWAP_RETRIES) continue;
    if (!opened.ok) throw refusalError(path, opened.reason);
    const f = opened.file;
    try {
      // One byte past the cap detects a file that grew after its fstat.
      const bytes = await f.read(0, Math.min(f.size, maxBytes) + 1);
      if (bytes.length > maxBytes) throw refusalError(path, "too_large");
      return {
        bytes,
        stat: {
          isFile: true,
          isDirectory: false,
          isSymlink: false,
          size: f.size,
          // Whole ms, as toFsStat gives them: identities built from either must agree.
          mtimeMs: Number.isFinite(f.mtimeMs) ? Math.floor(f.mtimeMs) : null,
          dev: f.dev,
          ino: f.ino,
        },
      };
    } finally {
      await f.close();
    }
  }
}
