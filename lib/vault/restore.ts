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
 * A session kept as an export of its database rows (OpenCode, Goose: db_export.ts) is
 * refused without `to` (NotRestorableError: its agent keeps sessions as rows of a
 * database, which cannot be restored file by file); with `to` its kept export is written
 * as `<to>/<source>-<session id>.json` — the one still in its store, else the one that
 * changed last (a session that moved to another database has an export of each).
 */
import { basename, dirname, isAbsolute, join, normalize, relative } from "node:path";
import { realFs, writeFileNoClobber } from "../durable/mod.ts";
import { InvalidInputError, NotRestorableError } from "../errors.ts";
import { type Source, SOURCE_TABLE } from "../message_search/mod.ts";
import { type Catalog, type KeptFile, latest } from "./catalog.ts";
import { exportDbOf, exportFileName, isExportFile } from "./db_export.ts";
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

/** One kept file and where a restore writes it. */
export interface RestoreTarget {
  from: string;
  target: string;
  file: KeptFile;
}

/** The export a restore writes (see the header), or why it cannot go in place. */
function exportTarget(c: Catalog, exports: KeptFile[], to: string | null | undefined) {
  const present = exports.find((f) => f.gone_ms === null);
  const file = present ??
    exports.reduce((a, b) => latest(b).changed_ms > latest(a).changed_ms ? b : a);
  if (!to) {
    const agent = SOURCE_TABLE[c.source as Source]?.label ?? c.source;
    throw new NotRestorableError(
      `Cannot restore "${c.key}" in place: ${agent} keeps sessions as rows of its database ` +
        `("${basename(exportDbOf(file.path))}"), which cannot be restored file by file; ` +
        `--to DIR writes the kept export of its rows there`,
    );
  }
  return [{ from: file.path, target: join(to, exportFileName(c.source, c.session_id)), file }];
}

/** Where each kept file goes (see the header). */
export function restoreTargets(
  c: Catalog,
  o: { to?: string | null; homes: readonly string[] },
): RestoreTarget[] {
  const main = c.files[0];
  if (!main) throw new InvalidInputError(`The vault holds no file of "${c.key}"`);
  const exports = c.files.filter(isExportFile);
  if (exports.length > 0) return exportTarget(c, exports, o.to);
  const base = dirname(main.path);
  return c.files.map((f) => {
    if (o.to) {
      const rel = inside(base, f.path) ? relative(base, f.path) : basename(f.path);
      return { from: f.path, target: join(o.to, rel), file: f };
    }
    if (!o.homes.some((h) => inside(h, f.path))) {
      throw new InvalidInputError(
        `"${f.path}" is not under the ${c.source} home Intendant reads now ` +
          `(${o.homes.length ? o.homes.join(", ") : "none configured"}): restore it with --to DIR`,
      );
    }
    return { from: f.path, target: f.path, file: f };
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
  for (const t of targets) {
    const v = latest(t.file);
    const bytes = await writeFileNoClobber(t.target, o.vault.bytesOf(v), {
      mode: 0o600,
      mtimeMs: v.mtime_ms,
    });
    out.push({ path: t.target, bytes, from: t.from });
  }
  return out;
}
