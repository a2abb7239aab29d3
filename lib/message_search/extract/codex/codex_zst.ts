/**
 * Compressed Codex rollouts (`rollout-….jsonl.zst`, newer Codex; FORMAT.md §1,
 * from codex-rs/rollout/src/compression.rs). A compressed rollout is immutable: it is read
 * whole through the safe open (codex_source.ts readRegular), bounded both compressed and
 * decompressed (fail-closed with a reason, never a partial parse), decompressed with
 * node:zlib `zstdDecompressSync`, and split into lines like a plain file. Its FileCursor
 * covers the COMPRESSED bytes with offset = size, so classifyCursor says "unchanged"
 * without decompressing; any other verdict re-reads the whole file. The content mark is
 * over the DECOMPRESSED bytes, so a thread that moves between `x.jsonl` and
 * `x.jsonl.zst` continues where it was. An unterminated last line inside a compressed
 * file can never complete: it is dropped and counted (`torn_tail`).
 */
import { zstdDecompressSync } from "node:zlib";
import { lineText, splitCompleteLines } from "../../../durable/mod.ts";
import { ANCHOR_SPAN_BYTES, PREFIX_SPAN_BYTES } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { hash16Of } from "../../locator.ts";
import { type ContentMark, readRegular, type SourceRead } from "./codex_source.ts";

/** Largest `.jsonl.zst` accepted, compressed and decompressed. */
export const MAX_ZST_BYTES = 256 * 1024 * 1024;

/** A decompressed `.jsonl.zst`, or why it was refused (with a cursor either way). */
export type ZstLoad =
  | { ok: true; content: Uint8Array; cursor: FileCursor }
  | { ok: false; reason: "zst_too_large" | "zst_corrupt"; cursor: FileCursor };

/** Reads and decompresses a whole `.jsonl.zst`, bounded by `maxBytes` both ways. */
export async function loadZst(
  path: string,
  o: { rewriteEpoch: number; maxBytes?: number },
): Promise<ZstLoad> {
  const max = o.maxBytes ?? MAX_ZST_BYTES;
  // Over the cap only the 4 KiB head and tail are read: enough for a cursor.
  const r = await readRegular(
    path,
    (size) => ({ start: 0, len: size > max ? Math.min(PREFIX_SPAN_BYTES, size) : size }),
    (size) => {
      const len = Math.min(ANCHOR_SPAN_BYTES, size);
      return size > max ? [{ start: size - len, len }] : [];
    },
  );
  const size = r.extra.length ? r.stat.size : r.bytes.length;
  const tail = r.extra[0] ?? r.bytes.subarray(r.bytes.length - Math.min(ANCHOR_SPAN_BYTES, size));
  const head = r.bytes.subarray(0, Math.min(PREFIX_SPAN_BYTES, r.bytes.length));
  const cursorOf = (nextLine: number): FileCursor => ({
    dev: r.stat.dev,
    ino: r.stat.ino,
    size,
    mtime_ms: r.stat.mtime_ms,
    captured_at_ms: r.capturedAt,
    prefix_len: head.length,
    prefix_hash: hash16Of(head),
    offset: size,
    anchor_len: tail.length,
    anchor_hash: hash16Of(tail),
    next_line: nextLine,
    rewrite_epoch: o.rewriteEpoch,
  });
  if (r.extra.length) return { ok: false, reason: "zst_too_large", cursor: cursorOf(1) };
  let content: Uint8Array;
  try {
    content = zstdDecompressSync(r.bytes, { maxOutputLength: max });
  } catch (err) {
    // node:zlib throws RangeError (ERR_BUFFER_TOO_LARGE) past maxOutputLength and a plain
    // Error for a bad frame: both are data, reported by reason.
    if (!(err instanceof Error)) throw err;
    const reason = err instanceof RangeError ? "zst_too_large" : "zst_corrupt";
    return { ok: false, reason, cursor: cursorOf(1) };
  }
  const lines = splitCompleteLines(content).lines.length;
  return { ok: true, content, cursor: cursorOf(lines + 1) };
}

/** True when `content` still holds the bytes `mark` consumed. */
export function markHolds(content: Uint8Array, mark: ContentMark): boolean {
  if (content.length < mark.offset || mark.prefix_len > mark.offset) return false;
  if (mark.anchor_len > mark.offset) return false;
  if (hash16Of(content.subarray(0, mark.prefix_len)) !== mark.prefix_hash) return false;
  const a = content.subarray(mark.offset - mark.anchor_len, mark.offset);
  return hash16Of(a) === mark.anchor_hash;
}

/** The complete lines of decompressed `content` after `from` (null: all of them). */
export function zstLines(
  content: Uint8Array,
  from: ContentMark | null,
  cursor: FileCursor,
): SourceRead {
  const start = from?.offset ?? 0;
  const firstLine = from?.next_line ?? 1;
  const split = splitCompleteLines(content.subarray(start), start, firstLine);
  const skipped: Record<string, number> = {};
  if (split.consumedOffset < content.length) skipped.torn_tail = 1;
  const offset = split.consumedOffset;
  const prefixLen = Math.min(PREFIX_SPAN_BYTES, offset);
  const anchorLen = Math.min(ANCHOR_SPAN_BYTES, offset);
  const mark: ContentMark = {
    prefix_len: prefixLen,
    prefix_hash: hash16Of(content.subarray(0, prefixLen)),
    offset,
    anchor_len: anchorLen,
    anchor_hash: hash16Of(content.subarray(offset - anchorLen, offset)),
    next_line: firstLine + split.lines.length,
  };
  const lines = split.lines.map((s) => ({ lineNo: s.lineNo, text: lineText(content, s) }));
  return { lines, cursor, mark, skipped };
}
