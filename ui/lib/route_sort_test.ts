import assert from "node:assert/strict";
import { EMPTY_LIST, listHref, parseRoute, withSort } from "./route.ts";
import { laneKey } from "./search_lane.ts";

Deno.test("Best match round-trips through the URL as sort=relevance", () => {
  const list = { ...EMPTY_LIST, q: "where is the marmot lantern", sort: "relevance" as const };
  const href = listHref(list);
  assert.equal(href, "#/?q=where+is+the+marmot+lantern&sort=relevance");
  assert.deepEqual(parseRoute(href), { name: "list", list });
  // With every other filter, in the same canonical order.
  const full = {
    q: "x",
    sources: ["codex" as const],
    roles: ["user" as const],
    includeSuperseded: true,
    sort: "relevance" as const,
  };
  assert.equal(listHref(full), "#/?q=x&source=codex&role=user&superseded=1&sort=relevance");
  assert.deepEqual(parseRoute(listHref(full)), { name: "list", list: full });
});

Deno.test("Newest is the default: never written, and every older link still means newest", () => {
  assert.equal(listHref({ ...EMPTY_LIST, q: "x" }), "#/?q=x");
  assert.equal(listHref(withSort({ ...EMPTY_LIST, q: "x" }, "newest")), "#/?q=x");
  for (const hash of ["#/?q=x", "#/?q=x&sort=newest", "#/?q=x&sort=bogus", "#/?q=x&sort="]) {
    const r = parseRoute(hash);
    assert.deepEqual(r, { name: "list", list: { ...EMPTY_LIST, q: "x" } }, hash);
    // The field is absent, not "newest": a newest state is exactly the pre-switch one.
    assert.ok(!("sort" in (r as { list: object }).list), hash);
  }
});

Deno.test("withSort() sets and clears the order without touching the rest of the state", () => {
  const team = { ...EMPTY_LIST, q: "x", scope: "team" as const, machines: ["a"] };
  const best = withSort(team, "relevance");
  assert.deepEqual(best, { ...team, sort: "relevance" });
  assert.deepEqual(withSort(best, "newest"), team);
  assert.ok(!("sort" in withSort(best, "newest")));
  // The preference survives team scope in the URL (the lane says it cannot apply it).
  assert.equal(listHref(best), "#/?q=x&sort=relevance&scope=team&machine=a");
  assert.deepEqual(parseRoute(listHref(best)), { name: "list", list: best });
});

Deno.test("laneKey() of a newest query is the pre-switch key; a relevance query differs", () => {
  const newest = { q: "x", includeSuperseded: false, source: [], role: [] };
  assert.equal(laneKey(newest), JSON.stringify(["x", false, [], []]));
  const best = { ...newest, sort: "relevance" as const };
  assert.notEqual(laneKey(best), laneKey(newest));
  assert.equal(laneKey(best), JSON.stringify(["x", false, [], [], "sort", "relevance"]));
  assert.notEqual(laneKey({ ...best, scope: "team" }), laneKey({ ...newest, scope: "team" }));
});
