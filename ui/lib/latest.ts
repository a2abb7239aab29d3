/**
 * The stale-response guard of every as-you-type lane. Each request takes a ticket:
 * taking one aborts the previous request (AbortController) and bumps a sequence number,
 * so a response is applied only while its ticket is still the latest. Abort alone is
 * not enough: a response can be fully received (and its JSON being parsed) when the
 * next keystroke lands, and an abort then changes nothing; the sequence check makes
 * "never render an older query over a newer one" hold regardless of timing.
 */

/** One request's right to apply its response. */
export interface Ticket {
  /** Monotonic per gate. */
  readonly seq: number;
  /** Aborted as soon as a newer ticket is taken or the gate is cancelled. */
  readonly signal: AbortSignal;
  /** True while no newer ticket was taken and the gate was not cancelled. */
  current(): boolean;
}

/** A gate handing out tickets. */
export interface LatestGate {
  /** Aborts the previous request and returns the new latest ticket. */
  begin(): Ticket;
  /** Aborts the in-flight request; no outstanding ticket stays current. */
  cancel(): void;
}

/** Creates a gate. */
export function createLatestGate(): LatestGate {
  let seq = 0;
  let ctrl: AbortController | null = null;
  return {
    begin() {
      ctrl?.abort();
      const mine = new AbortController();
      ctrl = mine;
      const my = ++seq;
      return { seq: my, signal: mine.signal, current: () => my === seq };
    },
    cancel() {
      ctrl?.abort();
      ctrl = null;
      seq++;
    },
  };
}

/** True for the rejection an aborted fetch produces (not an error worth showing). */
export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === "AbortError";
}
