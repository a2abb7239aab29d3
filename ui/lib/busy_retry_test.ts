import assert from "node:assert/strict";
import { ApiError } from "../api_client.ts";
import { abortableSleep, BUSY_RETRIES, withBusyRetry } from "./busy_retry.ts";

const busyOf = (err: unknown) =>
  err instanceof ApiError && err.status === 429
    ? { busy: true, retryAfterMs: err.retryAfterMs }
    : { busy: false, retryAfterMs: null };

Deno.test("a busy answer is retried after its Retry-After, growing, until it succeeds", async () => {
  const waits: number[] = [];
  let n = 0;
  const got = await withBusyRetry(() => {
    n++;
    return n <= 3
      ? Promise.reject(new ApiError("busy", 429, "busy", 1000))
      : Promise.resolve("page");
  }, { busyOf, sleep: (ms) => (waits.push(ms), Promise.resolve()) });
  assert.equal(got, "page");
  assert.deepEqual(waits, [1000, 1500, 2250]);
});

Deno.test("after BUSY_RETRIES refusals the busy error is shown; other errors are not retried", async () => {
  let n = 0;
  const busy = new ApiError("Too many session detail reads in flight", 429, "busy", null);
  await assert.rejects(
    withBusyRetry(() => (n++, Promise.reject(busy)), { busyOf, sleep: () => Promise.resolve() }),
    (e) => e === busy,
  );
  assert.equal(n, BUSY_RETRIES + 1);
  let m = 0;
  const gone = new ApiError("No session", 404, "not_found");
  await assert.rejects(
    withBusyRetry(() => (m++, Promise.reject(gone)), { busyOf, sleep: () => Promise.resolve() }),
    (e) => e === gone,
  );
  assert.equal(m, 1);
});

Deno.test("an abort stops the wait at once", async () => {
  const ctrl = new AbortController();
  const t0 = Date.now();
  const p = withBusyRetry(
    () => Promise.reject(new ApiError("busy", 429, "busy", 60_000)),
    { busyOf, signal: ctrl.signal },
  );
  setTimeout(() => ctrl.abort(), 20);
  await assert.rejects(p, (e) => (e as Error).name === "AbortError");
  assert.ok(Date.now() - t0 < 1000);
  await assert.rejects(
    abortableSleep(10, AbortSignal.abort()),
    (e) => (e as Error).name === "AbortError",
  );
});
