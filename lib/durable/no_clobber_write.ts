/**
 * Creating a file that must not replace anything (a restore into an agent's directory):
 * the bytes go to a private temp file beside the target (O_EXCL, the given mode), are
 * fsynced, and the temp is then hard-linked to the target name — link(2) fails with
 * EEXIST instead of replacing, so a file that appeared meanwhile is never overwritten —
 * and unlinked; the directory is fsynced. A reader of the target sees nothing or the
 * whole file, never a torn one; a kill leaves at most the temp (`.<name>.tmp-<pid>-…`,
 * which removeOrphanTemps recognises). Missing parent directories are created with
 * `dirMode`.
 * Errors: Deno.errors.AlreadyExists when the target exists (nothing written there);
 * others propagate after the temp is removed.
 */
import { basename, dirname, join } from "node:path";

/** Options for {@link writeFileNoClobber}. */
export interface NoClobberOptions {
  /** @default 0o600 */
  mode?: number;
  /** Mode of parent directories created on the way. @default 0o700 */
  dirMode?: number;
  /** Sets the file's modification time (epoch ms) before it is linked in. */
  mtimeMs?: number;
}

/** Writes `parts` as the new file `path` (see the header); returns the bytes written. */
export async function writeFileNoClobber(
  path: string,
  parts: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  o: NoClobberOptions = {},
): Promise<number> {
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: o.dirMode ?? 0o700 });
  const rand = crypto.getRandomValues(new Uint32Array(2)).join("");
  const tmp = join(dir, `.${basename(path)}.tmp-${Deno.pid}-${rand}`);
  const file = await Deno.open(tmp, { createNew: true, write: true, mode: o.mode ?? 0o600 });
  let bytes = 0;
  try {
    try {
      for await (const p of parts) {
        let at = 0;
        while (at < p.length) at += await file.write(p.subarray(at));
        bytes += p.length;
      }
      await file.sync();
    } finally {
      file.close();
    }
    if (o.mtimeMs !== undefined) await Deno.utime(tmp, new Date(), new Date(o.mtimeMs));
    await Deno.link(tmp, path);
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
  const d = await Deno.open(dir, { read: true });
  try {
    await d.sync();
  } finally {
    d.close();
  }
  return bytes;
}
