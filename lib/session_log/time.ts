/**
 * Timestamp formats of the session log. `ts` on every event is LOCAL time of day
 * (HH:MM:SS.mmm, what a human tailing the file wants); `ts_ms` is epoch ms UTC;
 * `created_at` in session_meta.json is a local naive datetime. Legacy events lack ts_ms,
 * so a reader recovers their date from created_at plus the time of day (see
 * {@link inferEpochMs}, which handles the midnight wrap).
 */

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** Local time of day with milliseconds: "10:30:00.123". */
export function formatTimeOfDay(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${
    pad(d.getMilliseconds(), 3)
  }`;
}

/** Local naive datetime: "2026-05-24T10:30:00". */
export function formatLocalDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${
    pad(d.getMinutes())
  }:${pad(d.getSeconds())}`;
}

/** Parses "HH:MM:SS[.fff]" into ms since local midnight, or null. */
export function parseTimeOfDay(ts: string): number | null {
  const m = /^(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/.exec(ts.trim());
  if (!m) return null;
  const [h, mi, s] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (h > 23 || mi > 59 || s > 60) return null;
  const frac = m[4] ? Number(m[4].slice(0, 3).padEnd(3, "0")) : 0;
  return ((h * 60 + mi) * 60 + s) * 1000 + frac;
}

/** Parses a local naive "YYYY-MM-DDTHH:MM:SS[.fff]" (or an ISO string with zone) to epoch ms. */
export function parseLocalDateTime(s: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(s.trim());
  if (m) {
    const frac = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
    const d = new Date(
      Number(m[1]),
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
      frac,
    );
    return Number.isNaN(d.getTime()) ? null : d.getTime();
  }
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t;
}

/** Carry-over of an epoch inferrer, so an incremental reader can continue where it stopped. */
export interface EpochInferState {
  dayStart: number;
  last: number;
}

/** An epoch inferrer: `infer(ts)` in event order; `state()` to persist it. */
export interface EpochInferrer {
  infer(ts: string): number | null;
  state(): EpochInferState;
}

/**
 * Stateful inference of epoch ms for legacy events that only carry a time of day.
 * Starts from the session's creation instant; each event's time of day is placed on the
 * current day, and when it goes backwards by more than an hour we assume midnight passed
 * (events are written in order, so a large backward jump can only be a day boundary; a
 * small one is clock jitter and stays on the same day).
 */
export function createEpochInferrer(createdAtMs: number, resume?: EpochInferState): EpochInferrer {
  const start = new Date(createdAtMs);
  let dayStart = resume?.dayStart ??
    new Date(start.getFullYear(), start.getMonth(), start.getDate()).getTime();
  let last = resume?.last ?? createdAtMs;
  return {
    infer(ts: string) {
      const tod = parseTimeOfDay(ts);
      if (tod === null) return null;
      let candidate = localDayPlus(dayStart, tod);
      if (candidate < last - 3_600_000) {
        dayStart = nextLocalDay(dayStart);
        candidate = localDayPlus(dayStart, tod);
      }
      if (candidate > last) last = candidate;
      return candidate;
    },
    state: () => ({ dayStart, last }),
  };
}

function localDayPlus(dayStartMs: number, tod: number): number {
  const d = new Date(dayStartMs);
  const h = Math.floor(tod / 3_600_000);
  const mi = Math.floor((tod % 3_600_000) / 60_000);
  const s = Math.floor((tod % 60_000) / 1000);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate(), h, mi, s, tod % 1000).getTime();
}

function nextLocalDay(dayStartMs: number): number {
  const d = new Date(dayStartMs);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime();
}

/** One-shot form of {@link createEpochInferrer} for a single timestamp. */
export function inferEpochMs(createdAtMs: number, ts: string): number | null {
  return createEpochInferrer(createdAtMs).infer(ts);
}
