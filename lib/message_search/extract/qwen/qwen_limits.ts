/**
 * Qwen Code extractor bounds, resolved through the framework's one resolver. Qwen
 * truncates tool result displays and file diffs before recording them (16–100k chars,
 * [src] `sanitizeToolCallResultForRecording`), so lines are modest; the caps below bound
 * one sweep's memory: a line over 32 MiB is skipped and counted, a file over 256 MiB or
 * with more than 500k uuids publishes nothing (fail-closed, counted).
 * Errors: an unknown key or a non-positive-integer value is a RangeError.
 */
import { resolveLimits } from "../framework/plugin.ts";

/** Bounds on what one sweep reads. */
export type QwenLimits = {
  /** @default 256 MiB */
  maxFileBytes: number;
  /** @default 32 MiB */
  maxLineBytes: number;
  /** Distinct uuids per session file. @default 500_000 */
  maxRecords: number;
  /** Directory entries visited per discovery. @default 200_000 */
  maxEntries: number;
};

/** The defaults of {@link QwenLimits}. */
export const QWEN_LIMITS: Readonly<QwenLimits> = Object.freeze({
  maxFileBytes: 256 << 20,
  maxLineBytes: 32 << 20,
  maxRecords: 500_000,
  maxEntries: 200_000,
});

/** The defaults overlaid with `overrides`, validated. */
export function resolveQwenLimits(overrides: Partial<QwenLimits> = {}): QwenLimits {
  return resolveLimits("Qwen", QWEN_LIMITS, overrides);
}
