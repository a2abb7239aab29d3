import assert from "node:assert/strict";
import { RECORD_TEXT_CAP_BYTES } from "../../lib/message_search/mod.ts";
import { RECORD_CAP_KIB, RECORD_CAP_LABEL, sessionsCount, shortId } from "./format.ts";

Deno.test("the dashboard names the index's real record cap", () => {
  assert.equal(RECORD_CAP_KIB * 1024, RECORD_TEXT_CAP_BYTES);
  assert.equal(RECORD_CAP_LABEL, "cut at 256 KiB");
});

Deno.test("shortId() shows 8 characters that tell sessions apart", () => {
  assert.equal(shortId("5e55a0f1-2b3c-4d5e-8f90-123456789abc"), "5e55a0f1");
  assert.equal(shortId("session_9b2f4e1a-0000-4000-8000-000000000000"), "9b2f4e1a");
  assert.equal(shortId("019e3010-aaaa-7bbb-8ccc-dddddddddddd"), "019e3010");
  assert.equal(shortId("short"), "short");
  assert.equal(shortId("plain_words_id"), "plain_wo", "a prefix is only dropped before hex");
});

Deno.test("sessionsCount() settles: of N when known, N+ while more exist, N when done", () => {
  assert.equal(sessionsCount(20, { total: 57, more: true }), "20 of 57 sessions");
  assert.equal(sessionsCount(20, { total: null, more: true }), "20+ sessions");
  assert.equal(sessionsCount(12, { total: null, more: false }), "12 sessions");
  assert.equal(sessionsCount(12, { total: 12, more: false }), "12 sessions");
  assert.equal(sessionsCount(1, { total: 1, more: false }), "1 session");
  assert.equal(sessionsCount(20, { total: 20, more: true }), "20 sessions", "all shown");
  assert.equal(sessionsCount(1200, { total: 3400, more: true }), "1,200 of 3,400 sessions");
  for (const more of [true, false]) {
    for (const total of [null, 57]) {
      assert.doesNotMatch(sessionsCount(20, { total, more }), /so far/);
    }
  }
});
