/**
 * Contained reads built on contained_open.ts: opens below a root (every component a real
 * directory), bounded whole-file reads, and directory listings that never follow links.
 *
 * Invariants:
 *  - `rel` is at most `maxDepth` plain components (no "", ".", "..", "\\", "/" or NUL,
 *    at most 255 bytes each); anything else is "bad_name" before any syscall;
 *  - the root and every intermediate component lstat as real directories ("parent"
 *    otherwise: a symlinked turns/ or session directory would lead outside); the final
 *    component then goes through the one contained open (lstat, O_NOFOLLOW|O_NONBLOCK,
 *    fstat dev+ino, link count, size cap);
 *  - a bounded read never holds more than `maxBytes` + 1 bytes: with `overflow:
 *    "refuse"` (the default) a larger file is "too_large" (one byte past the cap detects a
 *    file that grew after its fstat); with "truncate" its first `maxBytes` come back and
 *    `truncated` says so. A read never returns bytes past the fstat size.
 * Errors: as contained_open.ts (refusals are values; EACCES → PermissionDenied; other
 * I/O errors propagate).
 */
import { join } from "node:path";
import {
  type ContainedFile,
  type ContainedFileSync,
  type ContainedOpen,
  type ContainedOpenOptions,
  type ContainedOpenSync,
  openContained,
  openContainedSync,
  type ReadRefusal,
} from "./contained_open.ts";

/** Options of a rooted open. */
export interface InsideOptions extends ContainedOpenOptions {
  /** Most components `rel` may have. @default 8 */
  maxDepth?: number;
}

/** Options of a bounded read. */
export interface BoundedReadOptions {
  /** Most bytes returned. */
  maxBytes: number;
  /** Where the read starts (clamped to the size). @default 0 */
  offset?: number;
  /** What a file larger than `offset + maxBytes` gets. @default "refuse" */
  overflow?: "refuse" | "truncate";
}

/** Outcome of a bounded read. */
export type ContainedRead =
  | {
    ok: true;
    bytes: Uint8Array<ArrayBuffer>;
    /** The fstat size. */
    size: number;
    /** True when bytes past `offset + bytes.length` exist (overflow "truncate" only). */
    truncated: boolean;
    mtimeMs: number;
    dev: number;
    ino: number;
  }
  | { ok: false; reason: ReadRefusal };

/** True for one plain path component. */
export function isPlainComponent(c: string): boolean {
  return c.length > 0 && c.length <= 255 && c !== "." && c !== ".." && !c.includes("/") &&
    !c.includes("\\") && !c.includes("\0");
}

function splitRel(rel: string, maxDepth: number): string[] | null {
  const parts = rel.split("/");
  return parts.length <= maxDepth && parts.every(isPlainComponent) ? parts : null;
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

function lstatOrNullSync(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
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

/** The refusal for the directories leading to `root/parts`, or null when all are real. */
function dirsRefusal(st: (Deno.FileInfo | null)[]): ReadRefusal | null {
  for (const s of st) {
    if (s === null) return "missing";
    if (s.isSymlink || !s.isDirectory) return "parent";
  }
  return null;
}

function dirChain(root: string, parts: string[]): string[] {
  const out = [root];
  for (let i = 1; i < parts.length; i++) out.push(join(root, ...parts.slice(0, i)));
  return out;
}

/** Opens `root/rel` (see the header); `rel` is relative, "/"-separated. */
export async function openInside(
  root: string,
  rel: string,
  o: InsideOptions = {},
): Promise<ContainedOpen> {
  const parts = splitRel(rel, o.maxDepth ?? 8);
  if (parts === null) return { ok: false, reason: "bad_name" };
  const dirs: (Deno.FileInfo | null)[] = [];
  for (const d of dirChain(root, parts)) {
    const st = await lstatOrNull(d);
    dirs.push(st);
    if (st === null || st.isSymlink || !st.isDirectory) break;
  }
  const refused = dirsRefusal(dirs);
  if (refused) return { ok: false, reason: refused };
  return await openContained(join(root, ...parts), o);
}

/** {@link openInside} with blocking syscalls. */
export function openInsideSync(
  root: string,
  rel: string,
  o: InsideOptions = {},
): ContainedOpenSync {
  const parts = splitRel(rel, o.maxDepth ?? 8);
  if (parts === null) return { ok: false, reason: "bad_name" };
  const dirs: (Deno.FileInfo | null)[] = [];
  for (const d of dirChain(root, parts)) {
    const st = lstatOrNullSync(d);
    dirs.push(st);
    if (st === null || st.isSymlink || !st.isDirectory) break;
  }
  const refused = dirsRefusal(dirs);
  if (refused) return { ok: false, reason: refused };
  return openContainedSync(join(root, ...parts), o);
}

function assertBounds(o: BoundedReadOptions): void {
  if (!Number.isSafeInteger(o.maxBytes) || o.maxBytes < 0) {
    throw new RangeError(`Option "maxBytes" must be a non-negative integer: got ${o.maxBytes}`);
  }
  if (o.offset !== undefined && (!Number.isSafeInteger(o.offset) || o.offset < 0)) {
    throw new RangeError(`Option "offset" must be a non-negative integer: got ${o.offset}`);
  }
}

/** The span a bounded read asks for: [offset, offset + want), `probe` one more byte. */
function plan(size: number, o: BoundedReadOptions): { offset: number; want: number } | null {
  const offset = Math.min(o.offset ?? 0, size);
  const rest = size - offset;
  if ((o.overflow ?? "refuse") === "refuse" && rest > o.maxBytes) return null;
  return { offset, want: Math.min(rest, o.maxBytes) };
}

function finish(
  file: { size: number; mtimeMs: number; dev: number; ino: number },
  o: BoundedReadOptions,
  offset: number,
  want: number,
  got: Uint8Array<ArrayBuffer>,
): ContainedRead {
  // One byte past the fstat's view: in refuse mode, a file that grew past the cap.
  if ((o.overflow ?? "refuse") === "refuse" && got.length > o.maxBytes) {
    return { ok: false, reason: "too_large" };
  }
  const bytes = got.length > want ? got.subarray(0, want) : got;
  return {
    ok: true,
    bytes,
    size: file.size,
    truncated: offset + bytes.length < file.size,
    mtimeMs: file.mtimeMs,
    dev: file.dev,
    ino: file.ino,
  };
}

async function readOpen(
  opened: ContainedOpen,
  o: BoundedReadOptions,
): Promise<ContainedRead> {
  if (!opened.ok) return opened;
  const file: ContainedFile = opened.file;
  try {
    const p = plan(file.size, o);
    if (p === null) return { ok: false, reason: "too_large" };
    const probe = (o.overflow ?? "refuse") === "refuse" ? 1 : 0;
    return finish(file, o, p.offset, p.want, await file.read(p.offset, p.want + probe));
  } finally {
    await file.close();
  }
}

function readOpenSync(opened: ContainedOpenSync, o: BoundedReadOptions): ContainedRead {
  if (!opened.ok) return opened;
  const file: ContainedFileSync = opened.file;
  try {
    const p = plan(file.size, o);
    if (p === null) return { ok: false, reason: "too_large" };
    const probe = (o.overflow ?? "refuse") === "refuse" ? 1 : 0;
    return finish(file, o, p.offset, p.want, file.read(p.offset, p.want + probe));
  } finally {
    file.close();
  }
}

/** A bounded read of `path` (its parents are not checked: use readInside for that). */
export async function readContained(
  path: string,
  o: ContainedOpenOptions & BoundedReadOptions,
): Promise<ContainedRead> {
  assertBounds(o);
  return await readOpen(await openContained(path, o), o);
}

/** {@link readContained} with blocking syscalls. */
export function readContainedSync(
  path: string,
  o: ContainedOpenOptions & BoundedReadOptions,
): ContainedRead {
  assertBounds(o);
  return readOpenSync(openContainedSync(path, o), o);
}

/** A bounded read of `root/rel` (see the header). */
export async function readInside(
  root: string,
  rel: string,
  o: InsideOptions & BoundedReadOptions,
): Promise<ContainedRead> {
  assertBounds(o);
  return await readOpen(await openInside(root, rel, o), o);
}

/** {@link readInside} with blocking syscalls. */
export function readInsideSync(
  root: string,
  rel: string,
  o: InsideOptions & BoundedReadOptions,
): ContainedRead {
  assertBounds(o);
  return readOpenSync(openInsideSync(root, rel, o), o);
}

/** A directory entry seen without following symlinks. */
export interface ContainedDirEntry {
  name: string;
  kind: "file" | "dir" | "symlink" | "other";
}

/** Lists `root/rel` (a real directory reached through real directories); null when refused. */
export async function listInside(root: string, rel: string): Promise<ContainedDirEntry[] | null> {
  const parts = rel === "" ? [] : rel.split("/");
  if (!parts.every(isPlainComponent)) return null;
  for (let i = 0; i <= parts.length; i++) {
    if (!(await isRealDir(join(root, ...parts.slice(0, i))))) return null;
  }
  const out: ContainedDirEntry[] = [];
  for await (const e of Deno.readDir(join(root, ...parts))) {
    const kind = e.isSymlink ? "symlink" : e.isFile ? "file" : e.isDirectory ? "dir" : "other";
    out.push({ name: e.name, kind });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
