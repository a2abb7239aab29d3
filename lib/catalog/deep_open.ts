/**
 * Opening one Deep Search file as a ScanFile (a size and positioned reads):
 *  - an agent's file: through the contained reader (lib/durable openContained: lstat,
 *    O_NOFOLLOW, regular file, the handle re-checked), so a symlink or FIFO planted where
 *    a transcript was is refused, never read. Hard links are allowed, as the indexer
 *    allows them for transcripts (Claude Code links a subagent's file into a twin
 *    folder); the path comes from the index's manifest or the vault's catalog, never
 *    from the cursor;
 *  - a `.zst` rollout (Codex archives): read whole, at most ZST_MAX_COMPRESSED_BYTES,
 *    and decompressed (node:zlib, as the extractor does) to at most
 *    ZST_MAX_DECOMPRESSED_BYTES; offsets and lines are the decompressed ones;
 *  - a vault version: its chunks decompressed one at a time on demand (the one held is
 *    cached), each verified by the vault against its name; chunks before the resume
 *    offset are skipped by their stated lengths, never read.
 * Refusals are values (`reason`), like safe_fs.ts: missing, symlink, hardlink, too_large,
 * corrupt. Unexpected I/O errors propagate to the caller, which skips the file.
 */
import { zstdDecompressSync } from "node:zlib";
import { isAbsolute } from "node:path";
import { openContained } from "../durable/mod.ts";
import type { Vault, Version } from "../vault/mod.ts";
import type { ScanFile } from "./deep_scan.ts";
import { concatBytes } from "../text/mod.ts";

/** Largest `.zst` rollout read (compressed). */
export const ZST_MAX_COMPRESSED_BYTES = 64 * 1024 * 1024;
/** Largest `.zst` rollout scanned (decompressed): it is held in memory while scanned. */
export const ZST_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/** An opened scan file. */
export interface OpenScan extends ScanFile {
  close(): Promise<void>;
}

/** How an open went. */
export type DeepOpen = { ok: true; file: OpenScan } | { ok: false; reason: string };

function memoryFile(bytes: Uint8Array): OpenScan {
  return {
    size: bytes.length,
    read: (at, n) => Promise.resolve(bytes.subarray(at, Math.min(bytes.length, at + n))),
    close: () => Promise.resolve(),
  };
}

/** Opens the agent's file at absolute `path` (see the header). */
export async function openAgentFile(path: string): Promise<DeepOpen> {
  if (!isAbsolute(path)) return { ok: false, reason: "bad_name" };
  const opened = await openContained(path, { hardlinks: "allow" });
  if (!opened.ok) return { ok: false, reason: opened.reason };
  const { file } = opened;
  if (!path.endsWith(".zst")) return { ok: true, file };
  try {
    if (file.size > ZST_MAX_COMPRESSED_BYTES) return { ok: false, reason: "too_large" };
    const raw = await file.read(0, file.size);
    return {
      ok: true,
      file: memoryFile(zstdDecompressSync(raw, { maxOutputLength: ZST_MAX_DECOMPRESSED_BYTES })),
    };
  } catch (err) {
    // RangeError: past maxOutputLength; any other Error: not a zstd frame.
    if (!(err instanceof Error)) throw err;
    return { ok: false, reason: err instanceof RangeError ? "too_large" : "corrupt" };
  } finally {
    if (path.endsWith(".zst")) await file.close();
  }
}

/** The vault's version `v` of a file, read chunk by chunk (see the header). */
export function openVersion(vault: Vault, v: Version): OpenScan {
  const starts: number[] = [];
  let at = 0;
  for (const c of v.chunks) {
    starts.push(at);
    at += c.n;
  }
  let held: { i: number; bytes: Uint8Array } | null = null;
  const chunk = async (i: number): Promise<Uint8Array> => {
    if (held?.i === i) return held.bytes;
    const parts: Uint8Array[] = [];
    for await (const b of vault.bytesOf({ ...v, chunks: [v.chunks[i]!] })) parts.push(b);
    const bytes = concatBytes(parts);
    held = { i, bytes };
    return bytes;
  };
  return {
    size: at,
    async read(offset, length) {
      const end = Math.min(at, offset + length);
      const out = new Uint8Array(Math.max(0, end - offset));
      let pos = offset;
      // Last chunk starting at or before pos.
      let i = starts.findLastIndex((s) => s <= pos);
      while (pos < end && i >= 0 && i < starts.length) {
        const bytes = await chunk(i);
        const from = pos - starts[i]!;
        const take = Math.min(bytes.length - from, end - pos);
        out.set(bytes.subarray(from, from + take), pos - offset);
        pos += take;
        i++;
      }
      return out;
    },
    close: () => {
      held = null;
      return Promise.resolve();
    },
  };
}
