import assert from "node:assert/strict";
import { messageLaneAllowed, parseRoute, sessionHref } from "./route.ts";

Deno.test("sessionHref() and parseRoute() round-trip keys, locators and queries", () => {
  const key = "claude-code:d7ecc652-ccc8-4074-acf2-700c7b3db8c5";
  const href = sessionHref(key, { locate: "eyJ2IjoxfQ", q: "café 修复" });
  assert.deepEqual(parseRoute(href), {
    name: "session",
    key,
    locate: "eyJ2IjoxfQ",
    q: "café 修复",
  });
  assert.deepEqual(parseRoute(sessionHref("pi:a/b?c")), {
    name: "session",
    key: "pi:a/b?c",
    locate: null,
    q: null,
  });
});

Deno.test("parseRoute() falls back to the list for anything else", () => {
  assert.deepEqual(parseRoute(""), { name: "list" });
  assert.deepEqual(parseRoute("#/"), { name: "list" });
  assert.deepEqual(parseRoute("#/session/%E0%A4%A"), { name: "list" });
});

Deno.test("messageLaneAllowed() honours ?message_search=off and =0 only", () => {
  assert.ok(messageLaneAllowed(""));
  assert.ok(messageLaneAllowed("?message_search=on"));
  assert.ok(!messageLaneAllowed("?message_search=off"));
  assert.ok(!messageLaneAllowed("?x=1&message_search=0"));
});
