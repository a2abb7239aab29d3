/**
 * Private to session_log/: reading a file of a session directory without following a
 * planted symlink. Deno's permissions are checked at a symlink's location, not its target
 * (reliability-plan §0.10, E2), and Deno.readFile has no O_NOFOLLOW. node:fs passes
 * O_NOFOLLOW through only when the process runs with unscoped --allow-read: under a
 * scoped grant (the daemon's locked profile) Deno 2.9.6 opens the symlink's target anyway
 * [verified here]. So the lstat comes first and the handle's fstat must match its dev+ino;
 * O_NOFOLLOW stays as a second line. O_NONBLOCK keeps a FIFO from blocking the reader.
 * Errors: a symlink, FIFO, socket, device or directory is a ContainmentError; a missing
 * file is Deno.errors.NotFound; a span past the end is a RangeError; other I/O errors
 * propagate.
 */
import nodeFs, { constants as FS, promises as fsp } from "node:fs";
import { ContainmentError } from "../errors.ts";

function codeOf(err: unknown): unknown {
  return err instanceof Error && "code" in err ? err.code : undefined;
}

const OPEN_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK;

/** The open's errno as the module's errors (see the header). */
function openError(path: string, err: unknown): Error {
  const code = codeOf(err);
  if (code === "ENOENT" || code === "ENOTDIR") {
    return new Deno.errors.NotFound(`"${path}" does not exist`, { cause: err });
  }
  if (code === "ELOOP" || code === "ENXIO") {
    return new ContainmentError(`Refusing "${path}": not a regular file`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Reads bytes [offset, offset + length) of a regular file, synchronously (the sweep's
 * per-record sidecar reads; a blocking open would freeze the event loop, hence O_NONBLOCK).
 * Fewer bytes come back only if the file shrank after its fstat.
 */
export function readRegularSpanSync(path: string, offset: number, length: number): Uint8Array {
  let before: nodeFs.Stats;
  let fd: number;
  try {
    before = nodeFs.lstatSync(path);
    if (!before.isFile()) throw new ContainmentError(`Refusing "${path}": not a regular file`);
    fd = nodeFs.openSync(path, OPEN_FLAGS);
  } catch (err) {
    if (err instanceof ContainmentError) throw err;
    throw openError(path, err);
  }
  try {
    const st = nodeFs.fstatSync(fd);
    if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) {
      throw new ContainmentError(`Refusing "${path}": not the regular file it was`);
    }
    if (offset + length > st.size) {
      throw new RangeError(
        `Span ${offset}+${length} is past the end of "${path}" (${st.size} bytes)`,
      );
    }
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = nodeFs.readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    nodeFs.closeSync(fd);
  }
}

/** Reads a regular file whole; `maxBytes` bounds what is read (the rest is ignored). */
export async function readRegularFile(
  path: string,
  maxBytes = Number.MAX_SAFE_INTEGER,
): Promise<Uint8Array> {
  let before: Awaited<ReturnType<typeof fsp.lstat>>;
  let handle: Awaited<ReturnType<typeof fsp.open>>;
  try {
    before = await fsp.lstat(path);
    if (!before.isFile()) throw new ContainmentError(`Refusing "${path}": not a regular file`);
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (err) {
    if (err instanceof ContainmentError) throw err;
    throw openError(path, err);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) {
      throw new ContainmentError(`Refusing "${path}": not the regular file it was`);
    }
    const buf = new Uint8Array(Math.min(st.size, maxBytes));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}
