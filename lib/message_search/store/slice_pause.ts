/**
 * The cooperative yield of long work on the daemon's one thread (the lexicon build, a
 * team publish): back to the event loop once `sliceMs` of work has run since the last
 * yield, not at every step, and through setImmediate (≈ 13 µs here) rather than a
 * zero-delay timer (≈ 2.2 ms): a timer per generation cost ≈ 15 s of the 53 s lexicon
 * build at 4× (6,802 generations) doing nothing. A query arriving meanwhile waits at most
 * about one slice.
 */
import { setImmediate } from "node:timers";

/** A pause to await between steps; it yields only when a slice is used up. */
export function slicePause(sliceMs: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((r) => setImmediate(r));
    since = performance.now();
  };
}
