/**
 * Gemini CLI extractor bounds, resolved through the framework's one resolver. Defaults
 * (FORMAT.md §2): tool output inside records is already capped at 50 KiB by the
 * CLI (`MAX_TOOL_OUTPUT_SIZE`), but `$set.messages` checkpoints repeat the whole history
 * on one line and can reach many MiB, so a line may be 32 MiB; a file over 256 MiB or
 * with more than 200k distinct message ids publishes nothing (fail-closed, counted).
 * Errors: an unknown key or a non-positive-integer value is a RangeError.
 */
import { resolveLimits } from "../framework/plugin.ts";

/** Bounds on what one sweep reads. */
export type GeminiLimits = {
  /** @default 256 MiB */
  maxFileBytes: number;
  /** Longer lines are skipped and counted (`oversized_line`). @default 32 MiB */
  maxLineBytes: number;
  /** Distinct message ids per session file. @default 200_000 */
  maxMessages: number;
  /** Directory entries visited per discovery. @default 200_000 */
  maxEntries: number;
  /** Bytes read of a file's metadata line (and of `.project_root`). @default 64 KiB */
  maxHeaderBytes: number;
  /** Bytes read of `projects.json`. @default 4 MiB */
  maxRegistryBytes: number;
};

/** The defaults of {@link GeminiLimits}. */
export const GEMINI_LIMITS: Readonly<GeminiLimits> = Object.freeze({
  maxFileBytes: 256 << 20,
  maxLineBytes: 32 << 20,
  maxMessages: 200_000,
  maxEntries: 200_000,
  maxHeaderBytes: 64 << 10,
  maxRegistryBytes: 4 << 20,
});

/** The defaults overlaid with `overrides`, validated. */
export function resolveGeminiLimits(overrides: Partial<GeminiLimits> = {}): GeminiLimits {
  return resolveLimits("Gemini", GEMINI_LIMITS, overrides);
}
