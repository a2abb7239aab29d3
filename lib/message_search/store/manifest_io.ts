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
 * Reading (issue 16): the snapshot is parsed one session entry at a time — the object's
 * members are found as byte ranges (json_members.ts), each entry's bytes are decoded,
 * JSON.parse'd and checked on their own (checkManifestEntry: ManifestEntrySchema's
 * verdict and value, without zod's cost in a cold process), and kept as a
 * ResidentEntry (resident_entry.ts: cursors and state as text). The outcome is the one
 * JSON.parse + ManifestSchema of the whole text would give (valid iff that is valid), but
 * the whole text is never one decoded string (two bytes per character as soon as one
 * title is CJK) and the manifest never exists as objects and as a validated copy at once.
 * Writing splices each resident's texts in without parsing them.
 * Errors: I/O errors (EIO, EMFILE, …) propagate and are never mistaken for corruption —
 * quarantining a healthy manifest because a read failed would throw the index away.
 */
import { join } from "node:path";
import { ContainedReadError, type Fs, type FsStat, writeFileAtomic } from "../../durable/mod.ts";
import { ManifestCorruptError } from "../../errors.ts";
import { type JsonMember, objectMembers, topLevelMembers } from "./json_members.ts";
import { checkManifestEntry } from "./manifest_check.ts";
import { entryJson, ResidentEntry, setEntry } from "./resident_entry.ts";
import { type Manifest, MANIFEST_SCHEMA, type ManifestEntry, ManifestSchema } from "./types.ts";

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

/**
 * Validates manifest bytes without touching the disk (see the header: entry by entry,
 * the same verdict as JSON.parse + ManifestSchema of the whole text). As with the whole
 * text, a syntax error anywhere is reported as such even when an earlier part fails the
 * schema: after the first schema failure the remaining entries are only parsed.
 */
export function parseManifestBytes(bytes: Uint8Array): ManifestRead {
  const dec = new TextDecoder("utf-8", { fatal: true });
  const parse = (start: number, end: number): unknown =>
    JSON.parse(dec.decode(bytes.subarray(start, end)));
  const head: Record<string, unknown> = {};
  let entries: JsonMember[] = [];
  try {
    for (const m of topLevelMembers(bytes)) {
      if (m.key !== "sessions") {
        setField(head, m.key, parse(m.start, m.end));
      } else if (bytes[m.start] === 0x7b) {
        // The last "sessions" wins, as in JSON.parse. An object's entries are parsed below,
        // one at a time; anything else is parsed whole for the schema to refuse.
        entries = objectMembers(bytes, m.start).members;
        head.sessions = {};
      } else {
        entries = [];
        head.sessions = parse(m.start, m.end);
      }
    }
  } catch (err) {
    // SyntaxError, TypeError (bad UTF-8) or RangeError (pathological nesting): all corrupt.
    return corrupt("manifest is not UTF-8 JSON", err);
  }
  const top = ManifestSchema.safeParse(head);
  let schemaError: unknown = top.success ? null : top.error;
  const sessions: Record<string, ManifestEntry> = {};
  // A key given twice: JSON.parse keeps the last value, so only that one is checked (every
  // one is parsed: a syntax error in any makes the whole text invalid).
  const last = new Map<string, number>();
  const strings = new Map<string, string>();
  entries.forEach((e, i) => last.set(e.key, i));
  for (const [i, e] of entries.entries()) {
    let raw: unknown;
    try {
      raw = parse(e.start, e.end);
    } catch (err) {
      return corrupt("manifest is not UTF-8 JSON", err);
    }
    if (schemaError !== null || last.get(e.key) !== i) continue;
    const checked = checkManifestEntry(raw);
    if (!checked.ok) {
      schemaError = new TypeError(`Session ${JSON.stringify(e.key)} is invalid: ${checked.error}`);
    } else {
      setEntry(
        sessions,
        e.key,
        new ResidentEntry(checked.value, strings) as unknown as ManifestEntry,
      );
    }
  }
  if (schemaError !== null || !top.success) {
    return corrupt("manifest does not match the schema", schemaError);
  }
  return { kind: "ok", manifest: { ...top.data, sessions } };
}

/** head[key] = value as an own property (JSON.parse's semantics, "__proto__" included). */
function setField(head: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(head, key, { value, enumerable: true, writable: true, configurable: true });
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
  await writeFileAtomic(join(root, MANIFEST_FILE), manifestJson(manifest), { fs });
}

/**
 * JSON.stringify(manifest), with each resident entry's cursors and state spliced in as
 * the text they are kept as (a snapshot of 1,700 sessions would otherwise parse 5 MB of
 * state only to serialize it again). The top-level fields are stringified as they are, so
 * a field added to the schema is written without a change here.
 */
export function manifestJson(manifest: Manifest): string {
  const { sessions, ...rest } = manifest;
  const parts: string[] = [];
  for (const [k, e] of Object.entries(sessions)) parts.push(`${JSON.stringify(k)}:${entryJson(e)}`);
  const head = JSON.stringify(rest);
  const body = `"sessions":{${parts.join(",")}}`;
  return head === "{}" ? `{${body}}` : `${head.slice(0, -1)},${body}}`;
}

function corrupt(message: string, cause?: unknown): ManifestRead {
  return { kind: "corrupt", error: new ManifestCorruptError(message, { cause }) };
}
