import assert from "node:assert/strict";
import {
  type LinkStore,
  takeLinkTarget,
  TARGET_KEY,
  TARGET_TTL_MS,
  tokenPageStep,
  withoutRetryMark,
} from "./link_target.ts";

function memory(): LinkStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => void data.set(k, v),
    removeItem: (k) => void data.delete(k),
  };
}

const TARGET = "#/session/codex%3Aabc?locate=xyz&q=zebra";

Deno.test("tokenPageStep() reloads once, fragment kept, only right after the token redirect", () => {
  const s = memory();
  const page = { hash: TARGET, reason: "missing", path: "/", redirected: true };
  assert.equal(tokenPageStep(page, s, 1_000), `/?${TARGET}`);
  // The reload is no redirect: the token page it may meet again stays (no loop).
  assert.equal(tokenPageStep({ ...page, redirected: false }, s, 1_100), null);
  // A wrong token is not fixed by asking again.
  assert.equal(tokenPageStep({ ...page, reason: "invalid" }, s, 1_200), null);
});

Deno.test("the token page remembers the target; the next home mount opens it, once", () => {
  const s = memory();
  tokenPageStep({ hash: TARGET, reason: "missing", path: "/", redirected: false }, s, 1_000);
  assert.equal(takeLinkTarget("", s, 5_000), TARGET);
  assert.equal(takeLinkTarget("", s, 6_000), null, "consumed");
  tokenPageStep({ hash: TARGET, reason: "missing", path: "/", redirected: false }, s, 1_000);
  assert.equal(takeLinkTarget("#/", s, 1_000 + TARGET_TTL_MS), null, "too old");
  assert.equal(s.data.has(TARGET_KEY), false);
  tokenPageStep({ hash: TARGET, reason: "missing", path: "/", redirected: false }, s, 1_000);
  assert.equal(takeLinkTarget("#/session/other", s, 2_000), null, "another route wins");
  assert.equal(s.data.has(TARGET_KEY), false, "and drops it");
});

Deno.test("only dashboard routes are remembered; garbled or refused storage changes nothing", () => {
  const s = memory();
  for (const hash of ["", "#/", "#main", "#token=x"]) {
    tokenPageStep({ hash, reason: "missing", path: "/", redirected: false }, s, 1);
  }
  assert.equal(s.data.size, 0);
  s.data.set(TARGET_KEY, "{not json");
  assert.equal(takeLinkTarget("", s, 2), null);
  s.data.set(TARGET_KEY, JSON.stringify({ hash: "javascript:alert(1)", at: 2 }));
  assert.equal(takeLinkTarget("", s, 3), null);
  const refusing: LinkStore = {
    getItem: () => {
      throw new DOMException("denied", "SecurityError");
    },
    setItem: () => {
      throw new DOMException("denied", "SecurityError");
    },
    removeItem: () => {},
  };
  const page = { hash: TARGET, reason: "missing", path: "/", redirected: true };
  assert.equal(tokenPageStep(page, refusing, 1), `/?${TARGET}`, "the retry needs no storage");
  assert.equal(takeLinkTarget("", refusing, 1), null);
});

Deno.test("withoutRetryMark() drops only the retry's empty query", () => {
  assert.equal(withoutRetryMark(`http://127.0.0.1:9/?${TARGET}`), `http://127.0.0.1:9/${TARGET}`);
  assert.equal(withoutRetryMark("http://127.0.0.1:9/?"), "http://127.0.0.1:9/");
  assert.equal(withoutRetryMark(`http://127.0.0.1:9/${TARGET}`), null);
  assert.equal(withoutRetryMark("http://127.0.0.1:9/?message_search=off#/"), null);
});
