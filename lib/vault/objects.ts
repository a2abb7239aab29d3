/**
 * The vault's object store: chunks written once under their content hash, read back
 * verified. Every write goes through the injected Fs and writeFileAtomic (a temp file,
 * fsync, rename, directory fsync), so a crash leaves an object whole or absent, never
 * torn; the fan-out directory is created 0700 and its parent fsynced the first time.
 * An object already there is not rewritten (its name is its content): what the
 * catalog records of it (its compressed size) comes from its stat.
 */
import { dirname } from "node:path";
import { type Fs, statOrNull, writeFileAtomic } from "../durable/mod.ts";
import { type Codec, compress, decompress, WRITE_CODEC } from "./codec.ts";
import type { Chunk } from "./catalog.ts";
import { DIR_MODE, FILE_MODE, objectHash, objectPath } from "./layout.ts";

/** Why an object could not be read back. */
export class DamagedObjectError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DamagedObjectError";
  }
}

/** Reads and writes the chunks of one vault directory. */
export class ObjectStore {
  readonly #fs: Fs;
  readonly #vault: string;
  readonly #dirs = new Set<string>();
  /** Compressed bytes this process wrote (new objects only). */
  written = 0;

  constructor(o: { fs: Fs; vault: string }) {
    this.#fs = o.fs;
    this.#vault = o.vault;
  }

  /** Stores `bytes` as one chunk (deduplicated by content) and describes it. */
  async put(bytes: Uint8Array): Promise<Chunk> {
    const o = objectHash(bytes);
    for (const c of [WRITE_CODEC, ...(WRITE_CODEC === "zst" ? ["gz" as const] : [])]) {
      const st = await statOrNull(this.#fs, objectPath(this.#vault, o, c));
      if (st?.isFile && st.size > 0) return { o, n: bytes.length, z: st.size, c };
    }
    const z = compress(bytes);
    const path = objectPath(this.#vault, o, WRITE_CODEC);
    await this.#ensureDir(dirname(path));
    await writeFileAtomic(path, z, { fs: this.#fs, mode: FILE_MODE });
    this.written += z.length;
    return { o, n: bytes.length, z: z.length, c: WRITE_CODEC };
  }

  /** The bytes of `chunk`, checked against its hash and length. */
  async get(chunk: Chunk): Promise<Uint8Array> {
    const path = objectPath(this.#vault, chunk.o, chunk.c);
    let raw: Uint8Array;
    try {
      // Capped at a generous multiple of the stated size: zstd never inflates a chunk.
      raw = (await this.#fs.readFileCapped(path, chunk.z + 1024)).bytes;
    } catch (err) {
      throw new DamagedObjectError(`Vault object ${chunk.o} cannot be read`, { cause: err });
    }
    let bytes: Uint8Array;
    try {
      bytes = decompress(raw, chunk.c as Codec, chunk.n);
    } catch (err) {
      throw new DamagedObjectError(`Vault object ${chunk.o} is damaged`, { cause: err });
    }
    if (objectHash(bytes) !== chunk.o) {
      throw new DamagedObjectError(`Vault object ${chunk.o} does not match its name`);
    }
    return bytes;
  }

  /** Creates a fan-out (or the vault's own) directory once, durably. */
  async #ensureDir(dir: string): Promise<void> {
    if (this.#dirs.has(dir)) return;
    const st = await statOrNull(this.#fs, dir);
    if (!st) {
      await this.#fs.mkdir(dir, DIR_MODE);
      await this.#fs.syncDir(dirname(dir));
    }
    this.#dirs.add(dir);
  }

  /** Creates `dir` (0700) if it is missing; for the catalog directory. */
  ensureDir(dir: string): Promise<void> {
    return this.#ensureDir(dir);
  }
}
