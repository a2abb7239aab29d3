/**
 * Restore: writes a vaulted session's files back, byte for byte, where its agent reads
 * them — or into a directory the user names (`to`). The last version of every file is
 * written (a session's main transcript and its side files: Claude Code's subagent
 * transcripts, Cursor's and Droid's subagent files), mode 0600, with the mtime it had
 * when kept (agents list sessions by it: Claude Code's resume picker sorts on it).
 *
 * Refusals, all decided before anything is written (and each write is no-clobber on
 * its own, so a file that appears meanwhile is still never replaced):
 *  - a target that exists: a restore never overwrites (the user moves it, or uses `to`);
 *  - without `to`, a target outside every home its source is read from now (`homes`):
 *    the catalog's path is the one discovery saw, but a vault is only a backup — a path
 *    that no longer lies under the agent's home (the home moved, the catalog was edited)
 *    is written only where the user says.
 * With `to`, each file keeps its place relative to the main file's directory (Claude
 * Code's `<id>/subagents/…` stays beside `<id>.jsonl`); a file outside it gets its name.
 */
import { basename, dirname, isAbsolute, join, normalize, relative } from "node:path";
import { realFs, writeFileNoClobber } from "../durable/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { type Catalog, latest } from "./catalog.ts";
import type { Vault } from "./vault.ts";

/** One file a restore wrote. */
export interface RestoredFile {
  path: string;
  bytes: number;
  /** Where the vault kept it (the agent's path when it was kept). */
  from: string;
}

/** Options for {@link restoreSession}. */
export interface RestoreOptions {
  vault: Vault;
  catalog: Catalog;
  /** Write into this directory instead of the agent's own paths. */
  to?: string | null;
  /** The directories the session's source is read from now (its homes). */
  homes: readonly string[];
}

/** True when anything (a dangling symlink too) is at `path`. */
async function occupied(path: string): Promise<boolean> {
  try {
    await realFs.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(normalize(root), normalize(path));
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Where each kept file goes (see the header). */
export function restoreTargets(
  c: Catalog,
  o: { to?: string | null; homes: readonly string[] },
): { from: string; target: string }[] {
  const main = c.files[0];
  if (!main) throw new InvalidInputError(`The vault holds no file of "${c.key}"`);
  const base = dirname(main.path);
  return c.files.map((f) => {
    if (o.to) {
      const rel = inside(base, f.path) ? relative(base, f.path) : basename(f.path);
      return { from: f.path, target: join(o.to, rel) };
    }
    if (!o.homes.some((h) => inside(h, f.path))) {
      throw new InvalidInputError(
        `"${f.path}" is not under the ${c.source} home Intendant reads now ` +
          `(${o.homes.length ? o.homes.join(", ") : "none configured"}): restore it with --to DIR`,
      );
    }
    return { from: f.path, target: f.path };
  });
}

/** Restores `o.catalog`'s files (see the header). */
export async function restoreSession(o: RestoreOptions): Promise<RestoredFile[]> {
  const targets = restoreTargets(o.catalog, o);
  const present: string[] = [];
  for (const t of targets) if (await occupied(t.target)) present.push(t.target);
  if (present.length > 0) {
    throw new InvalidInputError(
      `Refusing to overwrite ${present.map((p) => `"${p}"`).join(", ")}: ` +
        (o.to ? "choose an empty directory" : "it is still in place (or restore with --to DIR)"),
    );
  }
  const out: RestoredFile[] = [];
  for (const [i, t] of targets.entries()) {
    const v = latest(o.catalog.files[i]!);
    const bytes = await writeFileNoClobber(t.target, o.vault.bytesOf(v), {
      mode: 0o600,
      mtimeMs: v.mtime_ms,
    });
    out.push({ path: t.target, bytes, from: t.from });
  }
  return out;
}
