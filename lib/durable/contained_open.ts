/**
 * The one contained open: every file the program reads that someone else could have
 * planted, swapped or linked (session logs, transcripts, the state root's own files) is
 * opened here, synchronously or not, and nowhere else (tests/house_rules_test.ts).
 *
 * The sequence, and why each step is needed (tests/RELIABILITY.md D5, D7, E2, F1):
 *  1. lstat the path: a symlink, FIFO, socket, device or directory is refused unopened.
 *     Deno checks permissions at a symlink's location, not its target, and under a scoped
 *     --allow-read (the locked daemon) Deno 2.9.6 drops O_NOFOLLOW and opens the target
 *     [verified], so this lstat is the first line, not O_NOFOLLOW;
 *  2. open O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY through node:fs (Deno.open has
 *     none of them): a symlink swapped in after the lstat fails with ELOOP where the flag
 *     is honoured, and a FIFO swapped in cannot block the open waiting for a writer;
 *  3. fstat the handle: it must be a regular file with the lstat's dev+ino ("swapped"
 *     otherwise), so a swap of the file or of a parent directory between 1 and 2 is
 *     caught whatever the open did;
 *  4. with `hardlinks: "refuse"` (the default) a file with more than one link is refused:
 *     its dev+ino match, but another name of the inode may lie outside the directory the
 *     caller trusts (`ln /outside/secret <session>/turns/x` needs no access to the
 *     session's reader, and the locked profile cannot see that the bytes came from
 *     outside). External transcripts pass "allow": their hardlinked twins are real and
 *     the indexer deduplicates them by identity (tests/RELIABILITY.md B10);
 *  5. with `maxSize`, a file larger than that is refused ("too_large") before any read.
 * Refusals are values (a typed {@link ReadRefusal}); callers that prefer exceptions turn
 * one into an error with {@link refusalError}. EACCES/EPERM become
 * Deno.errors.PermissionDenied; other I/O errors propagate unchanged.
 */
import nodeFs, { constants as FS, type Stats } from "node:fs";
import fsp, { type FileHandle } from "node:fs/promises";
import { ContainmentError } from "../errors.ts";

/** Why a file was not opened (or read). */
export type ReadRefusal =
  /** Nothing there (ENOENT, or a parent component is not a directory). */
  | "missing"
  /** The relative name is not plain components (`..`, `/x`, NUL, `\\`, too deep). */
  | "bad_name"
  /** The root or a path component is a symlink or not a directory: it would leave the root. */
  | "parent"
  /** The final component is a symbolic link. */
  | "symlink"
  /** A FIFO, socket, device or directory. */
  | "not_regular"
  /** The handle is not the file the lstat saw (dev/ino changed, or a symlink appeared). */
  | "swapped"
  /** A regular file with more than one link, opened with `hardlinks: "refuse"`. */
  | "hardlinked"
  /** Larger than the caller's cap. */
  | "too_large";

/** Every refusal, in a fixed order (figures, exhaustive tests). */
export const READ_REFUSALS: readonly ReadRefusal[] = [
  "missing",
  "bad_name",
  "parent",
  "symlink",
  "not_regular",
  "swapped",
  "hardlinked",
  "too_large",
];

/** Options of every contained open. */
export interface ContainedOpenOptions {
  /**
   * "refuse": a file with more than one link is refused ("hardlinked"). "allow": for
   * files whose twins are legitimate and deduplicated by identity (external transcripts).
   * @default "refuse"
   */
  hardlinks?: "refuse" | "allow";
  /** Refuse ("too_large") a file whose size exceeds this many bytes. @default no cap */
  maxSize?: number;
  /**
   * Identity from an lstat the caller already made (a sweep's stat pass): the open is
   * checked against it instead of a fresh lstat, so what was classified is what is read.
   */
  expected?: { dev: number; ino: number };
}

/** What the fstat of an opened file said. */
export interface ContainedFileInfo {
  readonly path: string;
  readonly size: number;
  /** Modification time in ms (fractional, as fstat gives it). */
  readonly mtimeMs: number;
  readonly dev: number;
  readonly ino: number;
  readonly nlink: number;
}

/** An open, verified regular file (async reads). */
export interface ContainedFile extends ContainedFileInfo {
  /** Reads up to `length` bytes at `offset`; fewer only at end of file. */
  read(offset: number, length: number): Promise<Uint8Array<ArrayBuffer>>;
  /** One positioned read into `buf[0, length)`; returns the bytes read (0 at end of file). */
  readInto(buf: Uint8Array, position: number, length?: number): Promise<number>;
  close(): Promise<void>;
}

/** An open, verified regular file (sync reads, for the sweep's per-record sidecar reads). */
export interface ContainedFileSync extends ContainedFileInfo {
  read(offset: number, length: number): Uint8Array<ArrayBuffer>;
  readInto(buf: Uint8Array, position: number, length?: number): number;
  close(): void;
}

/** Outcome of {@link openContained}. */
export type ContainedOpen = { ok: true; file: ContainedFile } | { ok: false; reason: ReadRefusal };
/** Outcome of {@link openContainedSync}. */
export type ContainedOpenSync =
  | { ok: true; file: ContainedFileSync }
  | { ok: false; reason: ReadRefusal };

/**
 * A refusal as an exception: `reason` says which. Its `name` stays "ContainmentError"
 * (it is one: logs, error mappers and tests match on that name); `reason` is the type.
 */
export class ContainedReadError extends ContainmentError {
  readonly reason: ReadRefusal;
  readonly path: string;
  constructor(path: string, reason: ReadRefusal, options?: ErrorOptions) {
    super(`Refusing "${path}": ${REFUSAL_TEXT[reason]}`, options);
    this.reason = reason;
    this.path = path;
  }
}

const REFUSAL_TEXT: Record<ReadRefusal, string> = {
  missing: "it does not exist",
  bad_name: "not a plain relative name",
  parent: "a parent is a symbolic link or not a directory",
  symlink: "it is a symbolic link",
  not_regular: "not a regular file",
  swapped: "it was swapped while opening",
  hardlinked: "it has more than one link (a hard link may name a file outside)",
  too_large: "it is larger than the cap",
};

/** The refusal as the error callers expect: NotFound for "missing", else ContainedReadError. */
export function refusalError(path: string, reason: ReadRefusal): Error {
  if (reason === "missing") return new Deno.errors.NotFound(`"${path}" does not exist`);
  return new ContainedReadError(path, reason);
}

/** The refusal of a thrown ContainedReadError/NotFound, or null for any other error. */
export function refusalOf(err: unknown): ReadRefusal | null {
  if (err instanceof ContainedReadError) return err.reason;
  if (err instanceof Deno.errors.NotFound) return "missing";
  return null;
}

const OPEN_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | FS.O_NOCTTY;

function codeOf(err: unknown): unknown {
  return err instanceof Error && "code" in err ? err.code : undefined;
}

/** lstat/open errors: a refusal, or the error to throw. */
function classifyError(err: unknown, path: string, atOpen: boolean): ReadRefusal | Error {
  const code = codeOf(err);
  if (
    code === "ENOENT" || code === "ENOTDIR" || err instanceof Deno.errors.NotFound ||
    err instanceof Deno.errors.NotADirectory
  ) return "missing";
  // At the open: a symlink (ELOOP) or a socket (ENXIO) appeared after the lstat. At the
  // lstat, ELOOP means a loop among the parents: the path leaves every root.
  if (code === "ELOOP") return atOpen ? "swapped" : "parent";
  if (code === "ENXIO" && atOpen) return "swapped";
  if (code === "EACCES" || code === "EPERM") {
    return new Deno.errors.PermissionDenied(`Cannot read "${path}": permission denied`, {
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** What the lstat alone refuses. */
function lstatRefusal(st: Stats, o: ContainedOpenOptions): ReadRefusal | null {
  if (st.isSymbolicLink()) return "symlink";
  if (!st.isFile()) return "not_regular";
  if (st.nlink > 1 && (o.hardlinks ?? "refuse") === "refuse") return "hardlinked";
  if (o.maxSize !== undefined && st.size > o.maxSize) return "too_large";
  return null;
}

/** What the handle's fstat refuses, against the identity the open was meant for. */
function fstatRefusal(
  st: Stats,
  before: { dev: number; ino: number },
  o: ContainedOpenOptions,
): ReadRefusal | null {
  if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) return "swapped";
  if (st.nlink > 1 && (o.hardlinks ?? "refuse") === "refuse") return "hardlinked";
  if (o.maxSize !== undefined && st.size > o.maxSize) return "too_large";
  return null;
}

function assertOptions(o: ContainedOpenOptions): void {
  if (o.maxSize !== undefined && !(o.maxSize >= 0)) {
    throw new RangeError(`Option "maxSize" must be a non-negative number: got ${o.maxSize}`);
  }
}

/** Opens `path` under the module's sequence (see the header). */
export async function openContained(
  path: string,
  o: ContainedOpenOptions = {},
): Promise<ContainedOpen> {
  assertOptions(o);
  let before = o.expected;
  if (before === undefined) {
    let st: Stats;
    try {
      st = await fsp.lstat(path);
    } catch (err) {
      const r = classifyError(err, path, false);
      if (r instanceof Error) throw r;
      return { ok: false, reason: r };
    }
    const refused = lstatRefusal(st, o);
    if (refused) return { ok: false, reason: refused };
    before = st;
  }
  let handle: FileHandle;
  try {
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (err) {
    const r = classifyError(err, path, true);
    if (r instanceof Error) throw r;
    return { ok: false, reason: r };
  }
  let st: Stats;
  try {
    st = await handle.stat();
  } catch (err) {
    await handle.close();
    throw err;
  }
  const refused = fstatRefusal(st, before, o);
  if (refused) {
    await handle.close();
    return { ok: false, reason: refused };
  }
  return { ok: true, file: asyncFile(path, handle, st) };
}

/** {@link openContained} with blocking syscalls (no thread-pool round trip per file). */
export function openContainedSync(
  path: string,
  o: ContainedOpenOptions = {},
): ContainedOpenSync {
  assertOptions(o);
  let before = o.expected;
  if (before === undefined) {
    let st: Stats;
    try {
      st = nodeFs.lstatSync(path);
    } catch (err) {
      const r = classifyError(err, path, false);
      if (r instanceof Error) throw r;
      return { ok: false, reason: r };
    }
    const refused = lstatRefusal(st, o);
    if (refused) return { ok: false, reason: refused };
    before = st;
  }
  let fd: number;
  try {
    fd = nodeFs.openSync(path, OPEN_FLAGS);
  } catch (err) {
    const r = classifyError(err, path, true);
    if (r instanceof Error) throw r;
    return { ok: false, reason: r };
  }
  let st: Stats;
  try {
    st = nodeFs.fstatSync(fd);
  } catch (err) {
    nodeFs.closeSync(fd);
    throw err;
  }
  const refused = fstatRefusal(st, before, o);
  if (refused) {
    nodeFs.closeSync(fd);
    return { ok: false, reason: refused };
  }
  return { ok: true, file: syncFile(path, fd, st) };
}

function info(path: string, st: Stats): ContainedFileInfo {
  return { path, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino, nlink: st.nlink };
}

function asyncFile(path: string, handle: FileHandle, st: Stats): ContainedFile {
  const readInto = async (buf: Uint8Array, position: number, length = buf.length) =>
    (await handle.read(buf, 0, length, position)).bytesRead;
  return {
    ...info(path, st),
    readInto,
    async read(offset, length) {
      const buf = new Uint8Array(Math.max(0, length));
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await handle.read(buf, got, buf.length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === buf.length ? buf : buf.subarray(0, got);
    },
    close: () => handle.close(),
  };
}

function syncFile(path: string, fd: number, st: Stats): ContainedFileSync {
  let open = true;
  return {
    ...info(path, st),
    readInto: (buf, position, length = buf.length) => nodeFs.readSync(fd, buf, 0, length, position),
    read(offset, length) {
      const buf = new Uint8Array(Math.max(0, length));
      let got = 0;
      while (got < buf.length) {
        const n = nodeFs.readSync(fd, buf, got, buf.length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return got === buf.length ? buf : buf.subarray(0, got);
    },
    close() {
      // Idempotent: a second close must not close a descriptor number reused meanwhile.
      if (!open) return;
      open = false;
      nodeFs.closeSync(fd);
    },
  };
}
