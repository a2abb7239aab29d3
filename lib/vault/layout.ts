/**
 * Where the vault keeps things under `<state-root>/vault/`, and the limits every writer
 * and reader agree on. Pure: names and numbers only.
 *
 *   vault/                      0700
 *     objects/<h0h1>/<h>.zst    0600  one chunk of a transcript, compressed (codec.ts);
 *                                     <h> is the sha256 (first 32 hex digits) of the
 *                                     UNCOMPRESSED bytes, so equal content is stored once
 *     sessions/<k>.json         0600  one session's catalog (catalog.ts); <k> is the
 *                                     hash16 of its session key (a key may hold any
 *                                     character a file name cannot)
 *
 * Invariants: an object is written whole (writeFileAtomic) before any catalog names it,
 * so a catalog never names a missing or torn object unless something outside us removed
 * it (a read then says so); a catalog is replaced whole, so a reader sees the old one or
 * the new one. Objects no catalog names (a write cut off between the two steps, a pruned
 * version) are removed by Vault.collect.
 */
import { join } from "node:path";
import { createHash } from "node:crypto";

export const OBJECTS_DIR = "objects";
export const SESSIONS_DIR = "sessions";
export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/**
 * Largest uncompressed chunk: a file is read, hashed and compressed this much at a time,
 * which bounds the vault's memory whatever the transcript's size.
 */
export const CHUNK_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A version that grew by appends to more than this many chunks is re-packed into as few
 * as CHUNK_MAX_BYTES allows: a long session appended a line at a time would otherwise be
 * hundreds of tiny objects, each compressed without the context of the rest.
 */
export const REPACK_AFTER_CHUNKS = 24;
/** The windows an append is recognised by (keep.ts): the file's head and its old end. */
export const HEAD_BYTES = 4096;
export const TAIL_BYTES = 64 * 1024;
/** The last pruning's record (budget.ts, Vault.prune): what the budget took, and when. */
export const BUDGET_FILE = "budget.json";
/** A catalog larger than this is refused as damaged (thousands of versions fit). */
export const CATALOG_MAX_BYTES = 8 * 1024 * 1024;

/** sha256 of `bytes`, the first 32 hex digits: an object's name. */
export function objectHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 32);
}

/** True for a name objectHash can produce. */
export function isObjectHash(s: string): boolean {
  return /^[0-9a-f]{32}$/.test(s);
}

/** Path of object `hash` (codec extension `ext`). */
export function objectPath(vault: string, hash: string, ext: string): string {
  return join(vault, OBJECTS_DIR, hash.slice(0, 2), `${hash}.${ext}`);
}

/** Path of the catalog of session `key`. */
export function catalogPath(vault: string, key: string): string {
  const k = createHash("sha256").update(key).digest("hex").slice(0, 16);
  return join(vault, SESSIONS_DIR, `${k}.json`);
}
