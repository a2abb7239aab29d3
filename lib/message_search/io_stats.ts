/**
 * Process-wide counters of source-file reads: every open of an agent transcript (or its
 * sidecar metadata) by an extractor or the cursor code counts once. They carry no
 * behaviour; benchmarks and the growth check read them to prove structural facts such as
 * "a no-op sweep opens no source file" (reads the stat-only fast path must avoid).
 * Opens made in an extraction worker are added here when its result arrives.
 */

/** Live counters (monotonic for the life of the process). */
const counters = { opens: 0 };

/** Notes one source-file open (called right after a successful open). */
export function noteSourceOpen(): void {
  counters.opens++;
}

/**
 * Adds `n` opens made on this process's behalf by an extraction worker (its counters
 * live in its own isolate; the pool reports them with each result).
 */
export function noteSourceOpens(n: number): void {
  if (Number.isInteger(n) && n > 0) counters.opens += n;
}

/** A snapshot of the counters. */
export function sourceIoStats(): { opens: number } {
  return { ...counters };
}
