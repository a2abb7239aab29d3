/**
 * manifest.json (the manifest snapshot): reading, validation, quarantine and writing.
 * On-disk invariants:
 *  - manifest.json is only ever replaced whole by writeFileAtomic, so a reader sees a
 *    complete old or a complete new snapshot (publishes between snapshots are appended
 *    to manifest.journal, see journal.ts and manifest_state.ts);
 *  - it is read only through Fs.readFileCapped (the contained reader, capped at
 *    MANIFEST_MAX_BYTES): a symlink (to /dev/zero, outside), FIFO or device at its name
 *    is never followed, waited on or read past the cap (reliability F5);
 *  - a manifest that is too large, not a regular file, not UTF-8, not JSON or fails
 *    ManifestSchema is corrupt: it is renamed aside as `manifest.corrupt-<ms>` (at most QUARANTINE_KEEP
 *    kept, oldest deleted) and the store rebuilds from empty — generations are
 *    re-derivable from their sources, so losing the index costs a re-sweep, not data;
 *  - the directory is `v1` and the format within it is fixed (`schema: 1`), so a newer
 *    parser_version changes how shards are derived, never the shape: an invalid manifest
 *    is corrupt whatever parser_version it claims.
 * Errors: I/O errors (EIO, EMFILE, …) propagate and are never mistaken for corruption —
 * quarantining a healthy manifest because a read failed would throw the index away.
 */
import { join } from "node:path";
import { ContainedReadError, type Fs, type FsStat, writeFileAtomic } from "../../durable/mod.ts";
import { ManifestCorruptError } from "../../errors.ts";
import { type Manifest, MANIFEST_SCHEMA, ManifestSchema } from "./types.ts";

export const MANIFEST_FILE = "manifest.json";

/** Larger files are corrupt without parsing (a real manifest is a few MiB at most). */
export const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

/** Quarantined manifests kept for post-mortem; older ones are deleted. */
export const QUARANTINE_KEEP = 5;

const QUARANTINE_RE = /^manifest\.corrupt-(\d+)$/;

/** Outcome of reading manifest.json. */
export type ManifestRead =
  | { kind: "ok"; manifest: Manifest; file?: FileFacts }
  | { kind: "missing" }
  | { kind: "corrupt"; error: ManifestCorruptError };

/** The identity (dev:ino:size:mtime) and size of the file a manifest was read from. */
export interface FileFacts {
  id: string;
  size: number;
}

/** A file identity that changes whenever a writer renames a new file in. */
export function fileIdentity(st: FsStat): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** A manifest with no sessions and no tombstones. */
export function emptyManifest(parserVersion: number, revision: number, nowMs: number): Manifest {
  return {
    schema: MANIFEST_SCHEMA,
    parser_version: parserVersion,
    revision,
    updated_at_ms: nowMs,
    sessions: {},
    tombstones: {},
  };
}

/** Reads and validates `<root>/manifest.json`. */
export async function readManifestFile(fs: Fs, root: string): Promise<ManifestRead> {
  const path = join(root, MANIFEST_FILE);
  let bytes: Uint8Array;
  let st: FsStat;
  try {
    ({ bytes, stat: st } = await fs.readFileCapped(path, MANIFEST_MAX_BYTES));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kind: "missing" };
    if (err instanceof ContainedReadError) {
      return corrupt(
        err.reason === "too_large"
          ? `"${path}" is over the ${MANIFEST_MAX_BYTES} byte cap`
          : `"${path}" is not a regular file (${err.reason})`,
        err,
      );
    }
    throw err;
  }
  const r = parseManifestBytes(bytes);
  return r.kind === "ok" ? { ...r, file: { id: fileIdentity(st), size: bytes.length } } : r;
}

/** Validates manifest bytes without touching the disk. */
export function parseManifestBytes(bytes: Uint8Array): ManifestRead {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    // SyntaxError, TypeError (bad UTF-8) or RangeError (pathological nesting): all corrupt.
    return corrupt("manifest is not UTF-8 JSON", err);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) return corrupt("manifest does not match the schema", parsed.error);
  return { kind: "ok", manifest: parsed.data };
}

/** Options for {@link quarantineManifest}. */
export interface QuarantineOptions {
  fs: Fs;
  now: () => number;
}

/**
 * Renames manifest.json aside as `manifest.corrupt-<ms>` and prunes old quarantines to
 * QUARANTINE_KEEP. Returns the quarantine file name, or null when manifest.json vanished
 * meanwhile (a concurrent lockless writer already replaced or quarantined it).
 */
export async function quarantineManifest(
  root: string,
  { fs, now }: QuarantineOptions,
): Promise<string | null> {
  const existing = await listQuarantined(fs, root);
  // Strictly after every existing one: a stalled clock (or two quarantines in one ms)
  // must neither overwrite a quarantine nor sort the newest as the oldest.
  const ms = Math.max(Math.floor(now()), (existing.at(-1)?.ms ?? -1) + 1);
  const name = `manifest.corrupt-${ms}`;
  try {
    await fs.rename(join(root, MANIFEST_FILE), join(root, name));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  await fs.syncDir(root);
  const surplus = existing.length + 1 - QUARANTINE_KEEP;
  for (const old of existing.slice(0, Math.max(0, surplus))) {
    await fs.remove(join(root, old.name)).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
  }
  return name;
}

/** Quarantine files in `root`, oldest first. */
async function listQuarantined(fs: Fs, root: string): Promise<{ name: string; ms: number }[]> {
  const found: { name: string; ms: number }[] = [];
  for (const e of await fs.readDir(root)) {
    const m = QUARANTINE_RE.exec(e.name);
    if (m) found.push({ name: e.name, ms: Number(m[1]) });
  }
  return found.sort((a, b) => a.ms - b.ms);
}

/** Replaces manifest.json atomically (temp + fsync + rename + dir fsync). */
export async function writeManifest(fs: Fs, root: string, manifest: Manifest): Promise<void> {
  await writeFileAtomic(join(root, MANIFEST_FILE), JSON.stringify(manifest), { fs });
}

function corrupt(message: string, cause?: unknown): ManifestRead {
  return { kind: "corrupt", error: new ManifestCorruptError(message, { cause }) };
}
