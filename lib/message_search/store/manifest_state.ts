/**
 * The store's current manifest = snapshot (manifest.json) + journal (manifest.journal):
 * reading it (whole, or incrementally from a previous read) and committing a new one
 * (one appended delta line, or a new snapshot when the journal has grown to twice the
 * snapshot — amortized, a publish writes about 1.5 times its changed entries).
 *
 * Ordering invariants (a crash at any point leaves a readable store, reliability-plan I1):
 *  - a full read reads the journal BEFORE the snapshot: a compaction between the two
 *    reads then shows a snapshot newer than the journal's header, which already contains
 *    every line of it (the journal is ignored) — never an old snapshot with its lines
 *    missing;
 *  - a compaction renames the new snapshot in before it resets the journal, so a crash
 *    between them leaves a journal whose header names an older revision: ignored;
 *  - a journal is only ever created or reset through writeFileAtomic (file and directory
 *    fsynced) and appended through appendDurable (fsynced before the publish returns);
 *  - it is read only through Fs.readFileCapped, capped at JOURNAL_MAX_BYTES (the most a
 *    journal may grow to beside the largest snapshot): a symlink, FIFO, device or huge
 *    file at its name counts as no journal, never followed, waited on or read past the
 *    cap (reliability F5), and the next publish replaces it.
 * Cached states are shared between callers and must not be mutated.
 * Resident form (issue 16): every entry of a state this module returns is a ResidentEntry
 * (resident_entry.ts: cursors and state kept as JSON text) — read from the snapshot
 * entry by entry (manifest_io.ts), made resident as journal lines set them, and, for a
 * state a commit returns, converted once the entries the publish built are known.
 */
import { join } from "node:path";
import {
  appendDurable,
  type CappedRead,
  ContainedReadError,
  type Fs,
  statOrNull,
  writeFileAtomic,
} from "../../durable/mod.ts";
import type { ManifestCorruptError } from "../../errors.ts";
import {
  encodeDelta,
  headerRevision,
  JOURNAL_FILE,
  journalHeader,
  replayJournal,
} from "./journal.ts";
import {
  fileIdentity,
  MANIFEST_FILE,
  MANIFEST_MAX_BYTES,
  readManifestFile,
  writeManifest,
} from "./manifest_io.ts";
import { makeResident } from "./resident_entry.ts";
import type { Manifest } from "./types.ts";

/** The journal may grow to JOURNAL_ROOM_FACTOR × the snapshot, and at least this much. */
export const JOURNAL_MIN_BYTES = 256 * 1024;
/**
 * Journal room as a multiple of the snapshot. Amortized, a publish writes its line plus
 * line / factor of snapshot rewrites; a cold read replays up to factor × the snapshot's
 * bytes. At 2 an append to the bench's longest session costs ≈ 1.5 lines (≈ 1.8 KB) and a
 * cold open replays ≤ 8.6 MB of small patch lines.
 */
export const JOURNAL_ROOM_FACTOR = 2;

/** Largest journal read: the room beside the largest snapshot a reader accepts. */
export const JOURNAL_MAX_BYTES = Math.max(
  JOURNAL_MIN_BYTES,
  JOURNAL_ROOM_FACTOR * MANIFEST_MAX_BYTES,
);

/** The journal's bytes and the stat they came from; null when there is no usable one. */
async function readJournal(fs: Fs, jPath: string): Promise<CappedRead | null> {
  try {
    return await fs.readFileCapped(jPath, JOURNAL_MAX_BYTES);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof ContainedReadError) return null;
    throw err;
  }
}

/** A manifest as read from disk, with what an incremental re-read or a commit needs. */
export interface StoreState {
  manifest: Manifest;
  /** Identity of the snapshot file the manifest started from. */
  snapId: string;
  snapBytes: number;
  /** dev:ino of a journal whose header matches the snapshot; null when there is none. */
  journalId: string | null;
  /** The snapshot revision the journal's header names, and the header's length. */
  headerRevision: number;
  headerBytes: number;
  /** The byte offset after the last complete line replayed. */
  consumed: number;
  /** The journal's size when read (a torn tail makes it larger than `consumed`). */
  journalSize: number;
}

export type StateRead =
  | { kind: "ok"; state: StoreState }
  | { kind: "missing" }
  | { kind: "corrupt"; error: ManifestCorruptError };

/**
 * Reads the current manifest. With `prev` (a state read earlier from the same root) an
 * unchanged snapshot and journal cost two stats, and a grown journal costs replaying
 * only its new lines.
 */
export async function readState(fs: Fs, root: string, prev: StoreState | null): Promise<StateRead> {
  const jPath = join(root, JOURNAL_FILE);
  if (prev !== null && prev.journalId !== null) {
    const fast = await incremental(fs, root, jPath, prev);
    if (fast !== null) return { kind: "ok", state: fast };
  }
  const journal = await readJournal(fs, jPath);
  const jst = journal?.stat ?? null;
  const jBytes = journal?.bytes ?? null;
  const snap = await readManifestFile(fs, root);
  if (snap.kind !== "ok") return snap;
  const base: StoreState = {
    manifest: snap.manifest,
    snapId: snap.file!.id,
    snapBytes: snap.file!.size,
    journalId: null,
    headerRevision: -1,
    headerBytes: 0,
    consumed: 0,
    journalSize: 0,
  };
  const header = jBytes ? headerRevision(jBytes) : null;
  if (!jst || !jBytes || !header || header.revision !== snap.manifest.revision) {
    return { kind: "ok", state: base };
  }
  const r = replayJournal(snap.manifest, jBytes, header.length);
  // The snapshot's entries are resident already; the lines' are new objects of our own.
  makeResident(r.manifest.sessions, r.changed);
  return {
    kind: "ok",
    state: {
      ...base,
      manifest: r.manifest,
      journalId: `${jst.dev}:${jst.ino}`,
      headerRevision: header.revision,
      headerBytes: header.length,
      consumed: r.consumed,
      journalSize: jBytes.length,
    },
  };
}

async function incremental(
  fs: Fs,
  root: string,
  jPath: string,
  prev: StoreState,
): Promise<StoreState | null> {
  const jst = await statOrNull(fs, jPath);
  if (!jst || `${jst.dev}:${jst.ino}` !== prev.journalId || jst.size < prev.journalSize) {
    return null;
  }
  const sst = await statOrNull(fs, join(root, MANIFEST_FILE));
  if (!sst || fileIdentity(sst) !== prev.snapId) return null;
  if (jst.size === prev.journalSize) return prev;
  if (jst.size > JOURNAL_MAX_BYTES) return null;
  const read = await readJournal(fs, jPath);
  const bytes = read?.bytes ?? null;
  // Replaced between the stat and the read (a compaction): the identity and header tell.
  const header = bytes ? headerRevision(bytes) : null;
  if (
    !bytes || `${read!.stat.dev}:${read!.stat.ino}` !== prev.journalId ||
    bytes.length < prev.consumed || header?.revision !== prev.headerRevision ||
    header.length !== prev.headerBytes
  ) return null;
  const r = replayJournal(prev.manifest, bytes, prev.consumed);
  // Only when a line applied is r.manifest a copy of ours (the shared one stays untouched).
  if (r.applied > 0) makeResident(r.manifest.sessions, r.changed);
  return { ...prev, manifest: r.manifest, consumed: r.consumed, journalSize: bytes.length };
}

/** Options for {@link commitState}. */
export interface CommitOptions {
  fs: Fs;
  root: string;
  /** The state `next` was derived from under the writer lock (null: write a snapshot). */
  state: StoreState | null;
  next: Manifest;
  /** Stat the result so a later read can start from it (readers that cache). */
  remember: boolean;
}

/**
 * Makes `next` the current manifest. Returns the state a later read may start from, or
 * null when not asked to or when it cannot be known without a read (a concurrent
 * lockless writer changed the files meanwhile).
 */
export async function commitState(o: CommitOptions): Promise<StoreState | null> {
  const { fs, root, state, next } = o;
  const jPath = join(root, JOURNAL_FILE);
  const settled = (s: StoreState, size: number) =>
    o.remember ? identify(fs, root, jPath, s, next, size).catch(() => null) : null;
  const line = state ? encodeDelta(state.manifest, next) : null;
  // The state returned is cached by the reader: its entries become resident (the publish
  // built plain ones). `next` is the committer's own, never a shared cached manifest's
  // sessions with plain entries in it.
  if (o.remember) makeResident(next.sessions);
  if (state && line !== null) {
    const bytes = new TextEncoder().encode(`\n${line}\n`);
    const room = Math.max(JOURNAL_MIN_BYTES, JOURNAL_ROOM_FACTOR * state.snapBytes);
    if (state.journalId !== null && state.journalSize + bytes.length <= room) {
      await appendDurable(jPath, bytes, { fs });
      return await settled(state, state.journalSize + bytes.length);
    }
    if (state.journalId === null) {
      // No usable journal (first publish since a snapshot, or a stale one left by a
      // crash): start one holding this line. The snapshot stays as it is.
      const header = journalHeader(state.manifest.revision);
      const text = new TextEncoder().encode(header + `${line}\n`);
      if (text.length <= room) {
        await writeFileAtomic(jPath, text, { fs });
        const headerBytes = new TextEncoder().encode(header).length;
        const headerRev = state.manifest.revision;
        return await settled({ ...state, headerRevision: headerRev, headerBytes }, text.length);
      }
    }
  }
  await writeManifest(fs, root, next);
  await writeFileAtomic(jPath, journalHeader(next.revision), { fs });
  if (!o.remember) return null;
  const snap = await statOrNull(fs, join(root, MANIFEST_FILE)).catch(() => null);
  if (!snap) return null;
  const base: StoreState = {
    manifest: next,
    snapId: fileIdentity(snap),
    snapBytes: snap.size,
    journalId: null,
    headerRevision: next.revision,
    headerBytes: journalHeader(next.revision).length,
    consumed: 0,
    journalSize: 0,
  };
  return await settled(base, journalHeader(next.revision).length);
}

/**
 * The state after our write, if the journal is exactly what we wrote (else null). Its
 * callers swallow errors: the publish is already durable, and failing to learn its
 * identity only costs the next read a full one.
 */
async function identify(
  fs: Fs,
  root: string,
  jPath: string,
  state: StoreState,
  next: Manifest,
  size: number,
): Promise<StoreState | null> {
  const jst = await statOrNull(fs, jPath);
  const sst = await statOrNull(fs, join(root, MANIFEST_FILE));
  if (!jst || jst.size !== size || !sst || fileIdentity(sst) !== state.snapId) return null;
  return {
    ...state,
    manifest: next,
    journalId: `${jst.dev}:${jst.ino}`,
    consumed: size,
    journalSize: size,
  };
}
