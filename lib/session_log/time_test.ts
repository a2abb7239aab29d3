import assert from "node:assert/strict";
import {
  createEpochInferrer,
  formatLocalDateTime,
  formatTimeOfDay,
  parseLocalDateTime,
  parseTimeOfDay,
} from "./time.ts";

Deno.test("time-of-day and local datetime round-trip", () => {
  const ms = new Date(2026, 4, 24, 10, 30, 5, 123).getTime();
  assert.equal(formatTimeOfDay(ms), "10:30:05.123");
  assert.equal(formatLocalDateTime(ms), "2026-05-24T10:30:05");
  assert.equal(parseLocalDateTime("2026-05-24T10:30:05"), ms - 123);
  assert.equal(parseTimeOfDay("10:30:05.123"), ((10 * 60 + 30) * 60 + 5) * 1000 + 123);
  assert.equal(parseTimeOfDay("25:00:00"), null);
});

Deno.test("legacy timestamps infer the date from created_at and wrap at midnight", () => {
  const created = new Date(2026, 5, 1, 23, 50, 0).getTime();
  const inf = createEpochInferrer(created);
  assert.equal(inf.infer("23:55:00.000"), new Date(2026, 5, 1, 23, 55).getTime());
  // Jitter backwards by seconds stays on the same day.
  assert.equal(inf.infer("23:54:58.000"), new Date(2026, 5, 1, 23, 54, 58).getTime());
  assert.equal(inf.infer("00:05:00.000"), new Date(2026, 5, 2, 0, 5).getTime());
  // State carries over to a resumed reader.
  const resumed = createEpochInferrer(created, inf.state());
  assert.equal(resumed.infer("00:10:00.000"), new Date(2026, 5, 2, 0, 10).getTime());
  assert.equal(resumed.infer("not a time"), null);
});
