/**
 * Creation hygiene for files whose names an outsider could predict (runtime logs, turn
 * files, IPC files). Every file is created with O_EXCL (`createNew`), so a planted
 * symlink at the final path fails with AlreadyExists and its target is untouched. O_EXCL
 * alone does not protect the parent, so the parent must be a real directory (lstat, not a
 * symlink) whose real path lies inside the root we own (figures C1, C2 in tests/RELIABILITY.md).
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { ContainmentError } from "../errors.ts";

/** Throws ContainmentError unless `dir` is a real directory inside (or equal to) `root`. */
export function assertRealDirInside(dir: string, root: string): void {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(dir);
  } catch (err) {
    throw new ContainmentError(`Directory "${dir}" cannot be checked`, { cause: err });
  }
  if (st.isSymlink || !st.isDirectory) {
    throw new ContainmentError(`Refusing "${dir}": not a real directory (symlink or file)`);
  }
  const realRoot = Deno.realPathSync(root);
  const realDir = Deno.realPathSync(dir);
  if (!isInside(realDir, realRoot)) {
    throw new ContainmentError(`Refusing "${dir}": resolves outside "${root}"`);
  }
}

/** True when `child` equals `parent` or lies below it (both absolute, normalized). */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Rejects names that are not one plain path component. */
export function assertPlainName(name: string): void {
  if (
    name.length === 0 || name === "." || name === ".." || name.includes("/") ||
    name.includes("\\") || name.includes("\0") || name.length > 255
  ) {
    throw new ContainmentError(`Refusing file name "${name.slice(0, 80)}": not a plain name`);
  }
}

/** Options for {@link createNewFileSync}. */
export interface CreateNewOptions {
  /** The directory the file must stay inside (usually the session dir). */
  root: string;
  /** @default 0o600 */
  mode?: number;
  /** Open for appending instead of plain writing. @default false */
  append?: boolean;
}

/** Creates `dir/name` as a new file (O_EXCL) after checking `dir` is real and inside root. */
export function createNewFileSync(
  dir: string,
  name: string,
  options: CreateNewOptions,
): Deno.FsFile {
  const { root, mode = 0o600, append = false } = options;
  assertPlainName(name);
  assertRealDirInside(dir, root);
  const file = Deno.openSync(join(dir, name), {
    createNew: true,
    write: true,
    append,
    mode,
  });
  return file;
}

/**
 * Makes `path` a private directory (0700) if absent; refuses an existing symlink or file.
 * Parents are created as needed (also 0700). Returns the path.
 */
export function ensurePrivateDirSync(path: string): string {
  try {
    Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
  const st = Deno.lstatSync(path);
  if (st.isSymlink || !st.isDirectory) {
    throw new ContainmentError(`Refusing "${path}": not a real directory (symlink or file)`);
  }
  // umask may have widened nothing, but a pre-existing dir may be 0755: tighten it.
  if (st.mode !== null && (st.mode & 0o077) !== 0) Deno.chmodSync(path, 0o700);
  return path;
}

/** Writes all bytes to a sync handle, looping over short writes. */
export function writeAllSync(file: Deno.FsFile, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}

/** Options for {@link openRegularFileSync}. */
export interface OpenRegularOptions {
  root: string;
  /** Open for appending (creates the file if absent). */
  append?: boolean;
  /** @default 0o600 */
  mode?: number;
}

/**
 * Opens `dir/name` for writing without ever following a planted symlink: a missing file
 * is created with O_EXCL; an existing one must lstat as a regular file with one link and
 * the opened handle must have the same dev+ino (Deno has no O_NOFOLLOW, so this closes the
 * swap race). A hard link is refused like a symlink: appending to one would write into
 * whatever file outside the directory shares its inode (reliability F1).
 */
export function openRegularFileSync(
  dir: string,
  name: string,
  options: OpenRegularOptions,
): Deno.FsFile {
  // No truncate option, deliberately: O_TRUNC would act at open(2), before the dev+ino
  // check below could refuse a file swapped in meanwhile. Replace files whole with
  // writeFileAtomic instead.
  const { root, append = false, mode = 0o600 } = options;
  try {
    return createNewFileSync(dir, name, { root, mode, append });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
  const path = join(dir, name);
  const before = Deno.lstatSync(path);
  if (before.isSymlink || !before.isFile) {
    throw new ContainmentError(`Refusing "${path}": not a regular file (symlink or special)`);
  }
  if ((before.nlink ?? 1) > 1) {
    throw new ContainmentError(`Refusing "${path}": it has more than one link`);
  }
  const file = Deno.openSync(path, { write: true, append });
  const after = file.statSync();
  if (after.dev !== before.dev || after.ino !== before.ino || (after.nlink ?? 1) > 1) {
    file.close();
    throw new ContainmentError(`Refusing "${path}": it was swapped while opening`);
  }
  return file;
}

/** Removes a file (or a symlink itself, never its target); a missing path is fine. */
export async function removeIfExists(path: string): Promise<boolean> {
  try {
    await Deno.remove(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}
