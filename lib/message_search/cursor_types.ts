/**
 * The persisted per-file cursor (what the manifest stores for each source file) and the
 * classification a sweep makes from it. See cursor.ts for the algorithm.
 */
import { z } from "zod";

export const FileCursorSchema = z.object({
  /** File identity at capture. */
  dev: z.number().int(),
  ino: z.number().int(),
  /** File length at capture. */
  size: z.number().int().nonnegative(),
  mtime_ms: z.number().nullable(),
  /** When the cursor was captured (racy-clean detection, like git's index). */
  captured_at_ms: z.number().int(),
  /** Bytes covered by prefix_hash: min(4096, size at capture). */
  prefix_len: z.number().int().nonnegative(),
  prefix_hash: z.string(),
  /** Offset just past the last complete line consumed. */
  offset: z.number().int().nonnegative(),
  /** Bytes covered by anchor_hash: the up-to-4096 bytes just before `offset`. */
  anchor_len: z.number().int().nonnegative(),
  anchor_hash: z.string(),
  /** 1-based number of the next line to read (lines consumed + 1). */
  next_line: z.number().int().positive(),
  /**
   * Bumped each time the file is re-read from scratch (rewritten). Part of the source
   * fingerprint, so the store can tell a legitimate rebuild (new epoch) from a stale
   * writer (same epoch, lower watermark) even when dev+ino are reused.
   */
  rewrite_epoch: z.number().int().nonnegative().default(0),
});
export type FileCursor = z.infer<typeof FileCursorSchema>;

/** What a sweep decides about one file. */
export type CursorClass =
  | { kind: "new" }
  | { kind: "unchanged" }
  | { kind: "appended" }
  | { kind: "rewritten"; reason: string }
  | { kind: "gone" };
