/**
 * A session's catalog: every file of the session the vault has seen and, per file, its
 * kept versions. A version is one lineage of the file's content: it grows by appends
 * (a new chunk holds only the new tail) and a rewrite (the file shrank, or bytes before
 * its old end changed) starts a new version, the old one kept. The last version of a
 * file is what a restore writes back.
 *
 * Invariants (checked by parseCatalog, which refuses anything else as damaged):
 *  - `v` is CATALOG_VERSION; the key is `<source>:<session_id>`;
 *  - a version's chunks are in file order, their lengths sum to its `size`, every
 *    length ≥ 1 and ≤ CHUNK_MAX_BYTES, every object a hash objectHash can produce;
 *  - `head` and `tail` are the hash16 of the version's first HEAD_BYTES and of its last
 *    TAIL_BYTES (keep.ts recognises an append by them);
 *  - times are epoch milliseconds; `gone_ms` is set while the file is missing.
 * Pure: no I/O.
 */
import { isAbsolute } from "node:path";
import { CHUNK_MAX_BYTES, isObjectHash } from "./layout.ts";
import type { Codec } from "./codec.ts";

export const CATALOG_VERSION = 1;

/** One stored chunk: `n` bytes of the file, kept as object `o` (`z` bytes on disk). */
export interface Chunk {
  o: string;
  n: number;
  z: number;
  c: Codec;
}

/** One kept version of a file. */
export interface Version {
  /** When this version was first kept and when it last grew or was confirmed. */
  kept_ms: number;
  changed_ms: number;
  size: number;
  /** The file's mtime when last kept (a change of size or mtime makes keep look again). */
  mtime_ms: number;
  head: string;
  tail: string;
  chunks: Chunk[];
  /** Appends folded into this version since it was first kept. */
  appends: number;
}

/** One file of the session, at the path its agent reads it from. */
export interface KeptFile {
  path: string;
  role: string;
  versions: Version[];
  /** Set while the file is missing from its place (deleted by its agent, moved away). */
  gone_ms: number | null;
}

/** A session's catalog. */
export interface Catalog {
  v: typeof CATALOG_VERSION;
  key: string;
  source: string;
  session_id: string;
  first_kept_ms: number;
  last_kept_ms: number;
  files: KeptFile[];
}

/** A new, empty catalog. */
export function newCatalog(o: { key: string; source: string; sessionId: string; now: number }) {
  const c: Catalog = {
    v: CATALOG_VERSION,
    key: o.key,
    source: o.source,
    session_id: o.sessionId,
    first_kept_ms: o.now,
    last_kept_ms: o.now,
    files: [],
  };
  return c;
}

/** The last version of `f` (every kept file has at least one). */
export function latest(f: KeptFile): Version {
  return f.versions[f.versions.length - 1]!;
}

/** True when every file of the session is missing from its place. */
export function sessionGone(c: Catalog): boolean {
  return c.files.length > 0 && c.files.every((f) => f.gone_ms !== null);
}

/** When the session went (its last file's disappearance), or null while any file is there. */
export function goneAt(c: Catalog): number | null {
  if (!sessionGone(c)) return null;
  return Math.max(...c.files.map((f) => f.gone_ms!));
}

const isTime = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
const isHash16 = (x: unknown) => typeof x === "string" && /^[0-9a-f]{16}$/.test(x);

function checkChunk(x: unknown): string | null {
  const c = x as Chunk;
  if (typeof c !== "object" || c === null) return "chunk";
  if (typeof c.o !== "string" || !isObjectHash(c.o)) return "chunk.o";
  if (!Number.isSafeInteger(c.n) || c.n < 1 || c.n > CHUNK_MAX_BYTES) return "chunk.n";
  if (!Number.isSafeInteger(c.z) || c.z < 1) return "chunk.z";
  if (c.c !== "zst" && c.c !== "gz") return "chunk.c";
  return null;
}

function checkVersion(x: unknown): string | null {
  const v = x as Version;
  if (typeof v !== "object" || v === null) return "version";
  for (const k of ["kept_ms", "changed_ms", "mtime_ms", "size", "appends"] as const) {
    if (!isTime(v[k])) return `version.${k}`;
  }
  if (!isHash16(v.head) || !isHash16(v.tail)) return "version.head";
  if (!Array.isArray(v.chunks)) return "version.chunks";
  let sum = 0;
  for (const c of v.chunks) {
    const bad = checkChunk(c);
    if (bad) return bad;
    sum += c.n;
  }
  return sum === v.size ? null : "version.size";
}

/**
 * Parses a catalog's text; throws TypeError naming the first field that breaks an
 * invariant (the caller reports the catalog as damaged and leaves it untouched).
 */
export function parseCatalog(text: string): Catalog {
  const c = JSON.parse(text) as Catalog;
  const fail = (what: string): never => {
    throw new TypeError(`Damaged vault catalog: invalid "${what}"`);
  };
  if (typeof c !== "object" || c === null || c.v !== CATALOG_VERSION) fail("v");
  if (typeof c.source !== "string" || typeof c.session_id !== "string") fail("source");
  if (c.key !== `${c.source}:${c.session_id}`) fail("key");
  if (!isTime(c.first_kept_ms) || !isTime(c.last_kept_ms)) fail("first_kept_ms");
  if (!Array.isArray(c.files)) fail("files");
  for (const f of c.files) {
    if (typeof f !== "object" || f === null) fail("file");
    if (typeof f.path !== "string" || !isAbsolute(f.path) || f.path.includes("\0")) {
      fail("file.path");
    }
    if (typeof f.role !== "string") fail("file.role");
    if (f.gone_ms !== null && !isTime(f.gone_ms)) fail("file.gone_ms");
    if (!Array.isArray(f.versions) || f.versions.length === 0) fail("file.versions");
    for (const v of f.versions) {
      const bad = checkVersion(v);
      if (bad) fail(bad);
    }
  }
  return c;
}
