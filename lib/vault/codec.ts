/**
 * How vault chunks are compressed. zstd (node:zlib, which Deno 2.9.6 provides) at level 3
 * with long-distance matching over a 16 MiB window: measured on the bench corpus's
 * transcripts (a 6.8 MB Claude Code session, a 3 MB Codex rollout), 0.149–0.165 of the
 * original at 133–180 MB/s, against gzip -6's 0.259 at 93 MB/s, gzip -1's 0.393 at 281
 * MB/s and brotli -4's 0.159 at 44 MB/s; zstd -9 reached 0.154 at a third of the speed.
 * Transcripts repeat themselves across long distances (the same file contents, tool
 * outputs and system prompts many turns apart), which is what the long window finds.
 * gzip stays readable (a chunk names its codec), for a runtime without zstd: a vault
 * written there reads everywhere.
 * Decompression is bounded: a chunk never inflates past the length its catalog states
 * (a damaged or planted object cannot exhaust memory).
 */
import * as zlib from "node:zlib";

export type Codec = "zst" | "gz";

const Z = zlib.constants as unknown as Record<string, number>;
const HAS_ZSTD = typeof (zlib as unknown as { zstdCompressSync?: unknown }).zstdCompressSync ===
  "function";

/** The codec new chunks are written with here. */
export const WRITE_CODEC: Codec = HAS_ZSTD ? "zst" : "gz";

/** Compresses one chunk with {@link WRITE_CODEC}. */
export function compress(bytes: Uint8Array): Uint8Array {
  if (WRITE_CODEC === "zst") {
    return new Uint8Array(zlib.zstdCompressSync(bytes, {
      params: {
        [Z.ZSTD_c_compressionLevel!]: 3,
        [Z.ZSTD_c_windowLog!]: 24,
        [Z.ZSTD_c_enableLongDistanceMatching!]: 1,
        [Z.ZSTD_c_checksumFlag!]: 1,
      },
    }));
  }
  return new Uint8Array(zlib.gzipSync(bytes, { level: 6 }));
}

/** Decompresses one chunk of `codec` that must inflate to exactly `length` bytes. */
export function decompress(bytes: Uint8Array, codec: Codec, length: number): Uint8Array {
  // One byte of room past the stated length tells "longer than stated" from "exact".
  const maxOutputLength = Math.max(1, length + 1);
  const out = codec === "zst"
    ? zlib.zstdDecompressSync(bytes, { maxOutputLength })
    : zlib.gunzipSync(bytes, { maxOutputLength });
  if (out.length !== length) {
    throw new RangeError(`A vault chunk inflated to ${out.length} bytes, not ${length}`);
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
