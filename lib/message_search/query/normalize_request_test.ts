import assert from "node:assert/strict";
import { normalizeRequest, ROLE_ASSISTANT, ROLE_USER } from "./normalize_request.ts";
import type { SearchRequest } from "./types.ts";

Deno.test("normalizeRequest fills defaults and orders scan needles longest first", () => {
  const r = normalizeRequest({ q: "db migration timeout" });
  assert.equal(r.limit, 20);
  assert.deepEqual(r.needles, ["db", "migration", "timeout"]);
  assert.deepEqual(r.scanNeedles, ["migration", "timeout", "db"]);
  assert.equal(r.roleMask, ROLE_USER | ROLE_ASSISTANT);
  assert.equal(r.sources, null);
  assert.equal(r.project, null);
  assert.equal(r.includeSuperseded, false);
  assert.equal(r.cursor, null);
});

Deno.test("the identity ignores cosmetic differences but pins every filter", () => {
  const fp = (r: SearchRequest) => normalizeRequest(r).identity;
  const base = fp({ q: "login bug", source: ["codex", "pi"], role: ["user"] });
  assert.equal(fp({ q: "  BUG   Login ", source: ["pi", "codex", "pi"], role: ["user"] }), base);
  assert.equal(fp({ q: "login bug", source: ["codex", "pi"], role: ["user"], cursor: "x" }), base);
  const variants: SearchRequest[] = [
    { q: "login bugs", source: ["codex", "pi"], role: ["user"] },
    { q: "login bug", source: ["codex"], role: ["user"] },
    { q: "login bug", source: ["codex", "pi"], role: ["assistant"] },
    { q: "login bug", source: ["codex", "pi"], role: ["user"], limit: 21 },
    { q: "login bug", source: ["codex", "pi"], role: ["user"], include_superseded: true },
    { q: "login bug", source: ["codex", "pi"], role: ["user"], project: "shop" },
    { q: "login bug", source: ["codex", "pi"], role: ["user"], since: 1 },
    { q: "login bug", source: ["codex", "pi"], role: ["user"], until: 1 },
    { q: '"login bug"', source: ["codex", "pi"], role: ["user"] },
  ];
  const seen = new Set([base]);
  for (const v of variants) seen.add(fp(v));
  assert.equal(seen.size, variants.length + 1);
  // Empty lists mean "all", like absent ones.
  assert.equal(fp({ q: "x1", source: [], role: [] }), fp({ q: "x1" }));
});

Deno.test("bad request fields are RangeError or TypeError naming the field", () => {
  for (const limit of [0, 101, 1.5, Number.NaN]) {
    assert.throws(() => normalizeRequest({ q: "ok", limit }), /"limit"/);
  }
  assert.throws(() => normalizeRequest({ q: "ok", source: ["aider" as "pi"] }), RangeError);
  assert.throws(() => normalizeRequest({ q: "ok", role: ["system" as "user"] }), RangeError);
  assert.throws(() => normalizeRequest({ q: "ok", since: Number.NaN }), /"since"/);
  assert.throws(() => normalizeRequest({ q: "ok", until: Infinity }), /"until"/);
  assert.throws(() => normalizeRequest({ q: "ok", include_superseded: 1 as unknown as boolean }));
  assert.equal(normalizeRequest({ q: "ok", project: "  Café " }).project, "cafe\u0301");
  assert.equal(normalizeRequest({ q: "ok", role: ["assistant"] }).roleMask, ROLE_ASSISTANT);
  assert.equal(normalizeRequest({ q: "ok", cursor: "" }).cursor, null);
});
