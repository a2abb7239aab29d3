import assert from "node:assert/strict";
import { SESSION_STATUSES } from "../../lib/session_log/mod.ts";
import { isLiveStatus as serverIsLive } from "../../lib/catalog/mod.ts";
import { isLiveStatus } from "./session_status.ts";

Deno.test("isLiveStatus() agrees with the server on every status, and refuses unknowns", () => {
  for (const s of SESSION_STATUSES) assert.equal(isLiveStatus(s), serverIsLive(s), s);
  assert.deepEqual(SESSION_STATUSES.filter((s) => isLiveStatus(s)), ["running", "waiting"]);
  for (const s of [null, undefined, "", "toString", "__proto__", "RUNNING"]) {
    assert.equal(isLiveStatus(s), false, String(s));
    assert.equal(serverIsLive(s), false, String(s));
  }
});
