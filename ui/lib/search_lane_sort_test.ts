import assert from "node:assert/strict";
import type { SearchPage, SearchParams } from "../api_client.ts";
import { createSearchLane, type LaneQuery, type LaneState } from "./search_lane.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PAGE: SearchPage = { state: "ready", window_days: 14, groups: [], cursor: null, took_ms: 1 };

function rig(answer: (p: SearchParams) => SearchPage) {
  const calls: SearchParams[] = [];
  const states: LaneState[] = [];
  const lane = createSearchLane({
    limit: 2,
    debounceMs: 5,
    onChange: (s) => states.push(s),
    search: (p) => {
      calls.push(p);
      return Promise.resolve(answer(p));
    },
  });
  return { lane, calls, last: () => states[states.length - 1]! };
}

const Q: LaneQuery = { q: "how did we", includeSuperseded: false, source: [], role: [] };

Deno.test("a newest query sends no sort; switching to Best match re-runs it with sort", async () => {
  const r = rig(() => PAGE);
  r.lane.set(Q);
  await wait(20);
  assert.ok(!("sort" in r.calls[0]!), "the newest request is the pre-switch request");
  r.lane.set({ ...Q, sort: "relevance" });
  await wait(20);
  assert.equal(r.calls.length, 2, "a changed order is a new query");
  assert.equal(r.calls[1]!.sort, "relevance");
  r.lane.dispose();
});

Deno.test("a relevance page's query_terms reach the lane; a newest page has none", async () => {
  const terms = { kept: [], dropped: ["how", "did", "we"], only_common: true };
  const r = rig((p) => p.sort === "relevance" ? { ...PAGE, query_terms: terms } : PAGE);
  r.lane.set({ ...Q, sort: "relevance" });
  await wait(20);
  assert.equal(r.last().status, "ready");
  assert.deepEqual(r.last().queryTerms, terms);
  r.lane.set(Q);
  await wait(20);
  assert.equal(r.last().queryTerms, null);
  r.lane.dispose();
});
