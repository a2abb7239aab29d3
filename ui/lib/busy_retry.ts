/**
 * Retrying a request the daemon refused as busy (429: every heavy route has a small
 * concurrency cap and answers at once rather than queueing). The wait is the answer's
 * Retry-After when it gave one, else BUSY_RETRY_DEFAULT_MS, growing by half each time and
 * capped at BUSY_RETRY_MAX_WAIT_MS; after `tries` refusals the last one is thrown, so the
 * view shows the daemon's "busy" message instead of spinning. An abort (the view moved
 * on) stops the wait at once and rejects with the signal's reason, like fetch does.
 */

/** Retries of a busy answer before it is shown. */
export const BUSY_RETRIES = 4;
/** Wait when a busy answer names none. */
export const BUSY_RETRY_DEFAULT_MS = 500;
/** Longest single wait. */
export const BUSY_RETRY_MAX_WAIT_MS = 5000;

/** What a refusal says: whether it is a busy answer, and how long it asked to wait. */
export type BusyOf = (err: unknown) => { busy: boolean; retryAfterMs: number | null };

/** Runs `attempt`, retrying busy refusals (see the module header). */
export async function withBusyRetry<T>(
  attempt: () => Promise<T>,
  o: {
    busyOf: BusyOf;
    signal?: AbortSignal;
    tries?: number;
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  },
): Promise<T> {
  const { tries = BUSY_RETRIES, sleep = abortableSleep } = o;
  for (let n = 0;; n++) {
    try {
      return await attempt();
    } catch (err) {
      const b = o.busyOf(err);
      if (!b.busy || n >= tries || o.signal?.aborted) throw err;
      const base = b.retryAfterMs ?? BUSY_RETRY_DEFAULT_MS;
      await sleep(Math.min(BUSY_RETRY_MAX_WAIT_MS, Math.round(base * 1.5 ** n)), o.signal);
    }
  }
}

/** setTimeout as a promise that an abort rejects at once. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
