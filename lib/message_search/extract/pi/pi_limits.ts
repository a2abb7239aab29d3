/**
 * Pi extractor bounds: what one sweep may read before a file is refused (fail-closed) and
 * how far discovery walks. Defaults follow the spec's "file/line/header/session scans are
 * bounded": Pi sessions are typically a few MiB (Pi truncates tool output before it
 * stores the toolResult [unc: pi-mono tools/truncate.ts, ~50 KiB]; pasted images are the
 * largest lines), so 256 MiB files, 16 MiB lines and 500k entries leave ample headroom
 * while keeping one sweep's memory bounded.
 * Errors: an unknown limit, or a non-positive or non-integer one, is a RangeError naming
 * it (framework/limits.ts, the one resolver).
 */
import { resolveLimits } from "../framework/plugin.ts";

/** Bounds on what one sweep reads. */
export interface PiLimits {
  /** @default 256 MiB */
  maxFileBytes: number;
  /** @default 16 MiB */
  maxLineBytes: number;
  /** @default 500_000 */
  maxEntries: number;
  /** Session directories descended per discovery. @default 10_000 */
  maxDirs: number;
  /** Session files header-checked per discovery. @default 100_000 */
  maxFiles: number;
  /** @default 64 KiB */
  maxHeaderBytes: number;
}

/** The defaults of {@link PiLimits}. */
export const PI_LIMITS: Readonly<PiLimits> = {
  maxFileBytes: 256 << 20,
  maxLineBytes: 16 << 20,
  maxEntries: 500_000,
  maxDirs: 10_000,
  maxFiles: 100_000,
  maxHeaderBytes: 64 << 10,
};

/** The defaults overlaid with `overrides`, validated. */
export function resolvePiLimits(overrides: Partial<PiLimits> = {}): PiLimits {
  return resolveLimits("Pi", PI_LIMITS, overrides);
}
