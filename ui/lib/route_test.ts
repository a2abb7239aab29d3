import assert from "node:assert/strict";
import { EMPTY_LIST, listHref, messageLaneAllowed, parseRoute, sessionHref } from "./route.ts";

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
  const plain = { name: "list", list: EMPTY_LIST };
  assert.deepEqual(parseRoute(""), plain);
  assert.deepEqual(parseRoute("#/"), plain);
  assert.deepEqual(parseRoute("#/session/%E0%A4%A"), plain);
  assert.deepEqual(parseRoute("#/elsewhere"), plain);
});

Deno.test("listHref() and parseRoute() round-trip the home view's query and filters", () => {
  const list = {
    q: 'café "connection pool" & more',
    sources: ["codex" as const, "pi" as const],
    roles: ["user" as const],
    includeSuperseded: true,
  };
  const href = listHref(list);
  assert.deepEqual(parseRoute(href), { name: "list", list });
  assert.equal(listHref(EMPTY_LIST), "#/");
  // A pasted link's unknown or repeated filters are dropped and ordered, never trusted.
  assert.deepEqual(
    parseRoute("#/?q=x&source=pi,evil,codex,pi&role=root,assistant&superseded=yes"),
    {
      name: "list",
      list: { q: "x", sources: ["codex", "pi"], roles: ["assistant"], includeSuperseded: false },
    },
  );
});

Deno.test("messageLaneAllowed() honours ?message_search=off and =0 only", () => {
  assert.ok(messageLaneAllowed(""));
  assert.ok(messageLaneAllowed("?message_search=on"));
  assert.ok(!messageLaneAllowed("?message_search=off"));
  assert.ok(!messageLaneAllowed("?x=1&message_search=0"));
});
