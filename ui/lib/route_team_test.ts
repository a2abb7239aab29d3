import assert from "node:assert/strict";
import { EMPTY_LIST, listHref, parseRoute, remoteHref } from "./route.ts";
import { laneKey } from "./search_lane.ts";

Deno.test("team scope round-trips through the URL; local hrefs and routes are unchanged", () => {
  const list = { ...EMPTY_LIST, q: "zebra", scope: "team" as const, machines: ["ci-b", "a.lap"] };
  const href = listHref(list);
  assert.equal(href, "#/?q=zebra&scope=team&machine=a.lap%2Cci-b");
  assert.deepEqual(parseRoute(href), {
    name: "list",
    list: { ...list, machines: ["a.lap", "ci-b"] },
  });
  // A pasted link's bad machine names are dropped; machine without team scope is ignored.
  assert.deepEqual(parseRoute("#/?q=x&scope=team&machine=ok,no/slash,ok"), {
    name: "list",
    list: { ...EMPTY_LIST, q: "x", scope: "team", machines: ["ok"] },
  });
  assert.deepEqual(parseRoute("#/?q=x&machine=ok"), {
    name: "list",
    list: { ...EMPTY_LIST, q: "x" },
  });
  // Local: no team fields at all, the same href as before team scope existed.
  assert.equal(listHref({ ...EMPTY_LIST, q: "x" }), "#/?q=x");
  assert.deepEqual(Object.keys((parseRoute("#/?q=x") as { list: object }).list).sort(), [
    "includeSuperseded",
    "q",
    "roles",
    "sources",
  ]);
});

Deno.test("remoteHref() and parseRoute() round-trip a remote session", () => {
  const href = remoteHref("ci-b", "pi:a/b?c#d", { q: "café" });
  assert.deepEqual(parseRoute(href), {
    name: "remote",
    machine: "ci-b",
    key: "pi:a/b?c#d",
    q: "café",
  });
  assert.deepEqual(parseRoute("#/remote/bad%2Fname/x"), { name: "list", list: EMPTY_LIST });
});

Deno.test("laneKey() of a local query is the pre-team key; team queries differ", () => {
  const local = { q: "x", includeSuperseded: false, source: [], role: [] };
  assert.equal(laneKey(local), JSON.stringify(["x", false, [], []]));
  assert.notEqual(laneKey({ ...local, scope: "team" }), laneKey(local));
  assert.notEqual(
    laneKey({ ...local, scope: "team", machines: ["a"] }),
    laneKey({ ...local, scope: "team" }),
  );
});
