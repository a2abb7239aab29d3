/**
 * The lazily opened team database: concurrent first uses share one open, a failure is
 * answered again without a new attempt until the retry delay passed, a later success is
 * kept, and close() ends it and refuses later use.
 */
import assert from "node:assert/strict";
import type { TeamDb } from "./connect.ts";
import { createTeamHandle } from "./team_handle.ts";

Deno.test("team handle: shared open, remembered failure, retry, close", async () => {
  let t = 0;
  let opens = 0;
  let closes = 0;
  let fail = true;
  const db = { close: () => (closes++, Promise.resolve()) } as unknown as TeamDb;
  const h = createTeamHandle({
    open: () => {
      opens++;
      return fail ? Promise.reject(new Error("connection refused")) : Promise.resolve(db);
    },
    retryMs: 100,
    now: () => t,
  });
  await assert.rejects(Promise.all([h.get(), h.get()]), /connection refused/);
  assert.equal(opens, 1, "concurrent first uses share one open");
  t = 50;
  await assert.rejects(h.get(), /connection refused/);
  assert.equal(opens, 1, "no new attempt inside the retry delay");
  assert.match(h.lastError()!.message, /refused/);
  fail = false;
  t = 150;
  assert.equal(await h.get(), db);
  assert.equal(await h.get(), db);
  assert.equal(opens, 2);
  assert.equal(h.lastError(), null);
  await h.close();
  assert.equal(closes, 1);
  await assert.rejects(h.get(), /closed/);
});
