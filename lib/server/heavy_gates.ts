/**
 * Concurrency caps of the heavy routes (issue 15 F4): besides message search's own gate
 * (routes.ts, spec: 2), Deep Search, the catalog listing, the session detail, replay and
 * the report zip each get a small SearchGate. Past it a request is answered at once with
 * 429 `busy` and Retry-After — the shape message search answers — never queued, so a burst
 * of any size costs at most `capacity` requests' memory per route. Parameters are
 * validated BEFORE a slot is taken (a bad request is a 400 and costs no slot).
 *
 * Capacities (per-request memory is what the caps multiply; the F4 test measures the sum):
 *  - deep: 2 — reads up to 64 MiB per page in 1 MiB chunks; CPU-bound like message search.
 *  - catalog: 4 — reads every native meta (≤ 1 MiB) and a 64 KiB spine tail, 16 sessions at a
 *    time, plus the manifest; the dashboard asks for a page, a filter and the next page.
 *  - detail: 4 — a page of ≤ 1000 rows over the session's cached spine index (the index is
 *    shared, built once); the dashboard asks for the page, the hits and an export at once.
 *  - replay: 2 — a page parses at most 8 MiB of lines (native_replay.ts).
 *  - report: 2 — a zip streams with ~2 MiB in flight; the slot is held until the download
 *    ends, errors, is cancelled, or stalls for REPORT_STALL_MS (a client that stops reading
 *    must not hold a slot forever).
 * Every gated answer says how many requests of its route were in flight when it was
 * admitted (`X-Intendant-In-Flight: n/capacity`): the daemon's own account of its bound,
 * which the F4 test reads from outside the process.
 */
import type { Context } from "hono";
import { SearchGate } from "./search_gate.ts";

/** The heavy routes' gates. */
export interface HeavyGates {
  deep: SearchGate;
  catalog: SearchGate;
  detail: SearchGate;
  replay: SearchGate;
  report: SearchGate;
}

/** Slots per heavy route (see the module header for why each). */
export const HEAVY_GATE_CAPACITY: Readonly<Record<keyof HeavyGates, number>> = {
  deep: 2,
  catalog: 4,
  detail: 4,
  replay: 2,
  report: 2,
};

/** A streamed answer whose consumer reads nothing for this long is aborted. */
export const REPORT_STALL_MS = 60_000;

/** Seconds a refused client is told to wait. */
export const BUSY_RETRY_AFTER_S = "1";

/** Header naming the in-flight count a gated request was admitted at. */
export const IN_FLIGHT_HEADER = "X-Intendant-In-Flight";

const BUSY_MESSAGE: Record<keyof HeavyGates, string> = {
  deep: "Too many Deep Searches in flight; retry shortly",
  catalog: "Too many session listings in flight; retry shortly",
  detail: "Too many session detail reads in flight; retry shortly",
  replay: "Too many replays in flight; retry shortly",
  report: "Too many report downloads in flight; retry shortly",
};

/** One gate per heavy route. */
export function createHeavyGates(
  capacity: Readonly<Record<keyof HeavyGates, number>> = HEAVY_GATE_CAPACITY,
): HeavyGates {
  return {
    deep: new SearchGate(capacity.deep),
    catalog: new SearchGate(capacity.catalog),
    detail: new SearchGate(capacity.detail),
    replay: new SearchGate(capacity.replay),
    report: new SearchGate(capacity.report),
  };
}

/** The 429 every gate answers (message search's shape: `busy`, a message, Retry-After). */
export function busy(c: Context, message: string): Response {
  return c.json({ error: "busy", message }, 429, { "Retry-After": BUSY_RETRY_AFTER_S });
}

/** Runs `fn` in a slot of `gates[route]`, or answers 429 at once. */
export async function gated(
  c: Context,
  gates: HeavyGates,
  route: keyof HeavyGates,
  fn: () => Promise<Response>,
): Promise<Response> {
  const gate = gates[route];
  const release = gate.tryAcquire();
  if (!release) return busy(c, BUSY_MESSAGE[route]);
  const admittedAt = `${gate.inFlight}/${gate.capacity}`;
  try {
    const res = await fn();
    res.headers.set(IN_FLIGHT_HEADER, admittedAt);
    return res;
  } finally {
    release();
  }
}

/**
 * Like {@link gated} for a streamed answer: `fn` gets the slot's release function and
 * must hand it to {@link holdWhileStreaming}; if `fn` throws, the slot is freed here.
 */
export async function gatedStream(
  c: Context,
  gates: HeavyGates,
  route: keyof HeavyGates,
  fn: (release: () => void) => Promise<Response>,
): Promise<Response> {
  const gate = gates[route];
  const release = gate.tryAcquire();
  if (!release) return busy(c, BUSY_MESSAGE[route]);
  const admittedAt = `${gate.inFlight}/${gate.capacity}`;
  try {
    const res = await fn(release);
    res.headers.set(IN_FLIGHT_HEADER, admittedAt);
    return res;
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * `source` as a stream that calls `release` once it ends, errors, is cancelled, or its
 * reader stalls for `stallMs` (then the stream errors and the source is closed).
 */
export function holdWhileStreaming(
  source: ReadableStream<Uint8Array>,
  release: () => void,
  o: { stallMs?: number } = {},
): ReadableStream<Uint8Array> {
  const { stallMs = REPORT_STALL_MS } = o;
  const reader = source.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    clearTimeout(timer);
    release();
  };
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      clearTimeout(timer);
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (err) {
        stop();
        throw err;
      }
      if (r.done) {
        stop();
        ctrl.close();
        return;
      }
      ctrl.enqueue(r.value);
      // Pull is asked again only when the consumer takes a chunk: no pull, no progress.
      timer = setTimeout(() => {
        stop();
        ctrl.error(new Error(`The download stalled for ${stallMs} ms`));
        void reader.cancel().catch(() => {/* the source is gone already */});
      }, stallMs);
    },
    async cancel(reason) {
      stop();
      await reader.cancel(reason);
    },
  }, { highWaterMark: 1 });
}
