/**
 * Contained reads inside a session directory. Every path the network can influence
 * (locators, session.jsonl file references, Deep Search cursors, the report walk) is
 * opened here and nowhere else.
 *
 * Invariants (reliability-plan D5/D7, E2: Deno permissions do not contain symlinks):
 *  - `rel` is plain components only (no "", ".", "..", "\\", NUL); the root and every
 *    intermediate component lstat as real directories (never symlinks);
 *  - the final component lstats as a regular file with one link (a hardlink could name
 *    an inode outside the directory);
 *  - the open uses O_NOFOLLOW | O_NONBLOCK (node:fs passes numeric flags through): a
 *    symlink swapped in after the lstat fails with ELOOP instead of being followed, and a
 *    FIFO swapped in cannot block the open;
 *  - the opened handle's fstat must be a regular file with the lstat's dev+ino, so a
 *    parent directory swapped for a symlink between the checks is caught too.
 * Refusals are values, not exceptions: callers degrade (stale/unavailable, skip with a
 * note). Only unexpected I/O errors (EIO, EACCES) propagate.
 */
import fs, { type Stats } from "node:fs";
import fsp, { type FileHandle } from "node:fs/promises";
import { join } from "node:path";

/** Why a path was not opened. */
export type Refusal =
  | "missing"
  | "bad_name"
  | "parent"
  | "symlink"
  | "not_regular"
  | "hardlinked"
  | "swapped";

/** An open, verified regular file. */
export interface SafeFile {
  readonly size: number;
  readonly mtimeMs: number;
  /** Device and inode of the opened file (from fstat): its identity for caches. */
  readonly dev: number;
  readonly ino: number;
  /** Reads up to `length` bytes at `offset` (fewer at end of file). */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Outcome of {@link openInside}. */
export type OpenResult = { ok: true; file: SafeFile } | { ok: false; reason: Refusal };

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK |
  fs.constants.O_NOCTTY;

/** True for one plain path component. */
export function isPlainComponent(c: string): boolean {
  return c.length > 0 && c.length <= 255 && c !== "." && c !== ".." && !c.includes("/") &&
    !c.includes("\\") && !c.includes("\0");
}

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw err;
  }
}

/** True when `dir` is a real directory (not a symlink to one). */
export async function isRealDir(dir: string): Promise<boolean> {
  const st = await lstatOrNull(dir);
  return st !== null && st.isDirectory && !st.isSymlink;
}

/** Opens `root/rel` for reading under the module's invariants. */
export async function openInside(root: string, rel: string): Promise<OpenResult> {
  const parts = rel.split("/");
  if (parts.length > 8 || !parts.every(isPlainComponent)) return { ok: false, reason: "bad_name" };
  if (!(await isRealDir(root))) return { ok: false, reason: "parent" };
  for (let i = 1; i < parts.length; i++) {
    const st = await lstatOrNull(join(root, ...parts.slice(0, i)));
    if (st === null) return { ok: false, reason: "missing" };
    if (st.isSymlink || !st.isDirectory) return { ok: false, reason: "parent" };
  }
  const path = join(root, ...parts);
  const before = await lstatOrNull(path);
  if (before === null) return { ok: false, reason: "missing" };
  if (before.isSymlink) return { ok: false, reason: "symlink" };
  if (!before.isFile) return { ok: false, reason: "not_regular" };
  if ((before.nlink ?? 1) > 1) return { ok: false, reason: "hardlinked" };
  let handle: FileHandle;
  try {
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // ELOOP: a symlink was swapped in after the lstat (O_NOFOLLOW refused it).
    if (code === "ELOOP") return { ok: false, reason: "swapped" };
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, reason: "missing" };
    throw err;
  }
  let st: Stats;
  try {
    st = await handle.stat();
  } catch (err) {
    await handle.close();
    throw err;
  }
  if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino || st.nlink > 1) {
    await handle.close();
    return { ok: false, reason: st.nlink > 1 && st.isFile() ? "hardlinked" : "swapped" };
  }
  return { ok: true, file: wrap(handle, st) };
}

function wrap(handle: FileHandle, st: Stats): SafeFile {
  return {
    size: st.size,
    mtimeMs: st.mtimeMs,
    dev: st.dev,
    ino: st.ino,
    async read(offset: number, length: number): Promise<Uint8Array> {
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

/** Outcome of {@link readInside}. */
export type ReadResult =
  | { ok: true; bytes: Uint8Array; size: number; truncated: boolean; mtimeMs: number }
  | { ok: false; reason: Refusal };

/** Reads `root/rel` from `offset`, at most `maxBytes` (the rest is reported as truncated). */
export async function readInside(
  root: string,
  rel: string,
  o: { maxBytes: number; offset?: number },
): Promise<ReadResult> {
  const opened = await openInside(root, rel);
  if (!opened.ok) return opened;
  const { file } = opened;
  try {
    const offset = Math.min(o.offset ?? 0, file.size);
    const want = Math.min(file.size - offset, o.maxBytes);
    const bytes = await file.read(offset, want);
    return {
      ok: true,
      bytes,
      size: file.size,
      truncated: offset + bytes.length < file.size,
      mtimeMs: file.mtimeMs,
    };
  } finally {
    await file.close();
  }
}

/** A directory entry seen without following symlinks. */
export interface SafeDirEntry {
  name: string;
  kind: "file" | "dir" | "symlink" | "other";
}

/** Lists `root/rel` (a real directory reached through real directories); null when refused. */
export async function listInside(root: string, rel: string): Promise<SafeDirEntry[] | null> {
  const parts = rel === "" ? [] : rel.split("/");
  if (!parts.every(isPlainComponent)) return null;
  for (let i = 0; i <= parts.length; i++) {
    if (!(await isRealDir(join(root, ...parts.slice(0, i))))) return null;
  }
  const out: SafeDirEntry[] = [];
  for await (const e of Deno.readDir(join(root, ...parts))) {
    const kind = e.isSymlink ? "symlink" : e.isFile ? "file" : e.isDirectory ? "dir" : "other";
    out.push({ name: e.name, kind });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
