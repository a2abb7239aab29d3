/**
 * Reading one plain Codex rollout into numbered lines plus the position to resume from,
 * and the "content mark": a logical cursor over the DECOMPRESSED bytes (prefix + anchor
 * hashes like a FileCursor, but the prefix limited to consumed bytes), kept in the shard
 * state. It lets a thread continue without re-indexing when its bytes moved to another
 * inode (cross-volume move, an atomic rewrite of identical content, a torn tail truncated
 * and replaced) or to another representation (Codex compressing `x.jsonl` into
 * `x.jsonl.zst`, FORMAT.md §1; see codex_zst.ts).
 * Invariants:
 * - Plain files are read ONLY through readIncrement (torn tails wait, oversized lines are
 *   skipped and reported, the open refuses non-regular files).
 * - readIncrement ends an increment early after an oversized line or past its byte cap,
 *   and classifyCursor calls a file whose size equals the captured size "unchanged": so
 *   one read continues until no complete line is left (bounded by MAX_INCREMENT_BYTES in
 *   total); past that bound the cursor's `size` is lowered to its offset, which makes the
 *   next sweep classify the rest as appended instead of stranding it.
 * Errors: CursorMismatchError when a cursor no longer describes the file (the caller
 * falls back); ContainmentError for a non-regular or swapped path.
 */
import { z } from "zod";
import { lineText, openContained, refusalError } from "../../../durable/mod.ts";
import {
  type FileStatLite,
  type Increment,
  MAX_INCREMENT_BYTES,
  PREFIX_SPAN_BYTES,
  readIncrement,
} from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { hash16Of } from "../../locator.ts";
import { countSkip, noteSourceOpen } from "../framework/plugin.ts";

export const ContentMarkSchema = z.object({
  prefix_len: z.number().int().nonnegative(),
  prefix_hash: z.string(),
  offset: z.number().int().nonnegative(),
  anchor_len: z.number().int().nonnegative(),
  anchor_hash: z.string(),
  next_line: z.number().int().positive(),
});
/** Logical cursor over decompressed content; prefix covers min(4096, offset) bytes. */
export type ContentMark = z.infer<typeof ContentMarkSchema>;

/** One complete line of the rollout (without its "\n"). */
export interface RolloutLine {
  lineNo: number;
  text: string;
}

/** What one read consumed. */
export interface SourceRead {
  lines: RolloutLine[];
  cursor: FileCursor;
  mark: ContentMark;
  skipped: Record<string, number>;
}

/** Reads a plain rollout after `from` (null: from the start); throws CursorMismatchError. */
export async function readPlain(
  path: string,
  from: FileCursor | null,
  o: { rewriteEpoch: number; maxLineBytes?: number },
): Promise<SourceRead> {
  const lines: RolloutLine[] = [];
  const skipped: Record<string, number> = {};
  let first: Increment | null = null;
  let cursor = from;
  let total = 0;
  for (;;) {
    const inc = await readIncrement(path, cursor, {
      rewriteEpoch: o.rewriteEpoch,
      maxLineBytes: o.maxLineBytes,
    });
    first ??= inc;
    if (inc.oversizedLines.length) countSkip(skipped, "oversized_line", inc.oversizedLines.length);
    for (const s of inc.lines) {
      lines.push({ lineNo: s.lineNo, text: lineText(inc.bytes, s, inc.baseOffset) });
    }
    const progressed = inc.cursor.offset > (cursor?.offset ?? 0);
    cursor = inc.cursor;
    total += inc.bytes.length;
    if (!progressed || inc.complete) break;
    if (total >= MAX_INCREMENT_BYTES) {
      cursor = { ...cursor, size: cursor.offset };
      break;
    }
  }
  return { lines, cursor, mark: await markOf(path, cursor, first), skipped };
}

async function markOf(path: string, c: FileCursor, first: Increment): Promise<ContentMark> {
  const prefixLen = Math.min(PREFIX_SPAN_BYTES, c.offset);
  let prefixHash: string;
  if (c.prefix_len === prefixLen) prefixHash = c.prefix_hash;
  else if (first.baseOffset === 0 && first.bytes.length >= prefixLen) {
    prefixHash = hash16Of(first.bytes.subarray(0, prefixLen));
  } else {
    // A torn tail inside the first 4 KiB: the cursor's prefix covers unconsumed bytes,
    // the mark must not (a later repair of that tail is not a rewrite of our content).
    prefixHash = hash16Of(await readHead(path, prefixLen));
  }
  return {
    prefix_len: prefixLen,
    prefix_hash: prefixHash,
    offset: c.offset,
    anchor_len: c.anchor_len,
    anchor_hash: c.anchor_hash,
    next_line: c.next_line,
  };
}

/** A FileCursor that resumes a plain file from a content mark (identity taken from `st`). */
export function cursorFromMark(mark: ContentMark, st: FileStatLite, epoch: number): FileCursor {
  return {
    dev: st.dev,
    ino: st.ino,
    size: mark.offset,
    // null: never "clean by stat"; the hashes must prove the consumed bytes are there.
    mtime_ms: null,
    captured_at_ms: 0,
    prefix_len: mark.prefix_len,
    prefix_hash: mark.prefix_hash,
    offset: mark.offset,
    anchor_len: mark.anchor_len,
    anchor_hash: mark.anchor_hash,
    next_line: mark.next_line,
    rewrite_epoch: epoch,
  };
}

/** The first `len` bytes of a regular file (fewer when it is shorter). */
export async function readHead(path: string, len: number): Promise<Uint8Array> {
  return (await readRegular(path, () => ({ start: 0, len }))).bytes;
}

/** A regular file read through a safe open: the fstat, the spans read, and when. */
export interface RegularRead {
  stat: FileStatLite;
  /** The span `plan` picked. */
  bytes: Uint8Array;
  /** The spans `extra` picked, in order. */
  extra: Uint8Array[];
  /** Taken right after the fstat (a cursor's `captured_at_ms`). */
  capturedAt: number;
}

/**
 * Opens `path` through the contained reader (lstat, O_NOFOLLOW | O_NONBLOCK, fstat
 * dev+ino; hardlinked twins allowed, as for every rollout), then reads the span `plan`
 * picks from the size (fewer bytes at end of file). `extra` reads more spans of the same
 * handle. A refusal throws (NotFound, or ContainedReadError with its reason).
 */
export async function readRegular(
  path: string,
  plan: (size: number) => { start: number; len: number },
  extra: (size: number) => { start: number; len: number }[] = () => [],
): Promise<RegularRead> {
  const opened = await openContained(path, { hardlinks: "allow" });
  if (!opened.ok) throw refusalError(path, opened.reason);
  const f = opened.file;
  noteSourceOpen();
  try {
    const capturedAt = Date.now();
    const read = ({ start, len }: { start: number; len: number }) => f.read(start, len);
    const stat: FileStatLite = {
      kind: "file",
      dev: f.dev,
      ino: f.ino,
      size: f.size,
      mtime_ms: Number.isFinite(f.mtimeMs) ? Math.trunc(f.mtimeMs) : null,
      nlink: f.nlink,
    };
    const bytes = await read(plan(f.size));
    const more: Uint8Array[] = [];
    for (const span of extra(f.size)) more.push(await read(span));
    return { stat, bytes, capturedAt, extra: more };
  } finally {
    await f.close();
  }
}
