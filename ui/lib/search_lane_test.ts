import assert from "node:assert/strict";
import { ApiError, type SearchGroup, type SearchPage, type SearchParams } from "../api_client.ts";
import { createSearchLane, type LaneQuery, type LaneState } from "./search_lane.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function group(key: string): SearchGroup {
  return {
    session_key: key,
    source: "codex",
    session_id: key,
    best_ts_ms: 1,
    total_hits: 1,
    source_gone: false,
    title: key,
    project: null,
    hits: [],
  };
}

function page(keys: string[], extra: Partial<SearchPage> = {}): SearchPage {
  return {
    state: "ready",
    window_days: 14,
    groups: keys.map(group),
    cursor: null,
    took_ms: 1,
    ...extra,
  };
}

const Q = (q: string, includeSuperseded = false): LaneQuery => ({
  q,
  includeSuperseded,
  source: [],
  role: [],
});

/** A fake server: each call is recorded and answered by `answer` (possibly late). */
function rig(answer: (p: SearchParams, n: number) => Promise<SearchPage>) {
  const calls: { p: SearchParams; signal: AbortSignal }[] = [];
  const states: LaneState[] = [];
  const lane = createSearchLane({
    limit: 2,
    debounceMs: 5,
    onChange: (s) => states.push(s),
    search: (p, signal) => {
      calls.push({ p, signal });
      return answer(p, calls.length);
    },
  });
  return { lane, calls, states, last: () => states[states.length - 1]! };
}

Deno.test("typing is debounced: only the final query is sent", async () => {
  const r = rig((p) => Promise.resolve(page([p.q])));
  for (const q of ["c", "ca", "caf", "café"]) r.lane.set(Q(q));
  await wait(30);
  assert.deepEqual(r.calls.map((c) => c.p.q), ["café"]);
  assert.equal(r.last().status, "ready");
  assert.equal(r.last().shownQuery?.q, "café");
  r.lane.dispose();
});

Deno.test("new input aborts the in-flight request and a late older answer is never shown", async () => {
  let releaseSlow!: () => void;
  const r = rig((p) =>
    p.q === "ca"
      ? new Promise((res) => (releaseSlow = () => res(page(["broad-1", "broad-2"]))))
      : Promise.resolve(page(["café-1"]))
  );
  r.lane.set(Q("ca"));
  await wait(20); // "ca" is in flight
  r.lane.set(Q("café"));
  assert.ok(r.calls[0]!.signal.aborted, "the older request was aborted");
  await wait(20);
  releaseSlow(); // the server answers the old query anyway, after the new one
  await wait(5);
  assert.equal(r.last().shownQuery?.q, "café");
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["café-1"]);
  r.lane.dispose();
});

Deno.test("a query without a 2-character term never reaches the server", async () => {
  const r = rig(() => Promise.resolve(page(["x"])));
  r.lane.set(Q("a"));
  r.lane.set(Q("a b"));
  await wait(20);
  assert.equal(r.calls.length, 0);
  assert.equal(r.last().status, "idle");
});

Deno.test("410 on load more drops the cursor and results and restarts from page 1", async () => {
  const r = rig((p, n) => {
    if (n === 1) return Promise.resolve(page(["a", "b"], { cursor: "c1" }));
    if (p.cursor) return Promise.reject(new ApiError("Cursor expired", 410, "cursor_expired"));
    return Promise.resolve(page(["new", "a"], { cursor: "c2" }));
  });
  r.lane.set(Q("cookie"));
  await wait(20);
  assert.equal(r.last().cursor, "c1");
  r.lane.loadMore();
  await wait(20);
  assert.deepEqual(r.calls.map((c) => c.p.cursor ?? null), [null, "c1", null]);
  const s = r.last();
  assert.equal(s.status, "ready");
  assert.deepEqual(s.groups.map((g) => g.session_key), ["new", "a"]);
  assert.equal(s.cursor, "c2");
  assert.match(s.notice ?? "", /restarted/);
  assert.ok(
    r.states.some((x) => x.groups.length === 0 && x.cursor === null),
    "old results dropped",
  );
  r.lane.dispose();
});

Deno.test("timeout-partial pages are retried transparently while the arena warms: no banner when it settles", async () => {
  // The cold daemon's first answers time out with growing subsets; the fourth is complete.
  const r = rig((_, n) =>
    Promise.resolve(
      n < 4
        ? page(["a", "b"].slice(0, n), { state: "partial", partial_reason: "timeout" })
        : page(["a", "b", "c"]),
    )
  );
  r.lane.set(Q("kubernetes"));
  await wait(40);
  assert.equal(r.calls.length, 4, "retried until complete (the old lane retried once)");
  assert.ok(r.states.every((s) => s.notice === null), "never a partial banner");
  assert.ok(
    r.states.some((s) => s.status === "loading" && s.groups.length === 1),
    "what has arrived is shown while retrying",
  );
  assert.equal(r.last().status, "ready");
  assert.equal(r.last().partial, null);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["a", "b", "c"]);
  r.lane.dispose();
});

Deno.test("a page still timeout-partial after the retry window is reported honestly", async () => {
  let clock = 0;
  const partial = page(["p"], { state: "partial", partial_reason: "timeout" });
  const calls: number[] = [];
  const states: LaneState[] = [];
  const lane = createSearchLane({
    limit: 2,
    debounceMs: 5,
    now: () => clock,
    onChange: (s) => states.push(s),
    search: () => {
      calls.push(clock);
      clock += 400; // each attempt spends 400 ms of the 2 s window
      return Promise.resolve(partial);
    },
  });
  lane.set(Q("the"));
  await wait(40);
  assert.equal(calls.length, 5, "attempts at 0, 400, 800, 1200, 1600 ms; none after 2 s");
  assert.ok(states.slice(0, -1).every((s) => s.notice === null), "no banner while retrying");
  const last = states[states.length - 1]!;
  assert.equal(last.status, "ready");
  assert.equal(last.partial, "timeout");
  assert.match(last.notice ?? "", /ran out of time/);
  lane.dispose();
});

Deno.test("a timed-out load-more page is retried in place, keeping the groups before it", async () => {
  const r = rig((p, n) => {
    if (!p.cursor) return Promise.resolve(page(["a", "b"], { cursor: "k" }));
    return Promise.resolve(
      n === 2 ? page(["d"], { state: "partial", partial_reason: "timeout" }) : page(["c", "d"]),
    );
  });
  r.lane.set(Q("flaky"));
  await wait(30);
  r.lane.loadMore();
  await wait(30);
  assert.equal(r.calls.length, 3);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["a", "b", "c", "d"]);
  assert.equal(r.last().notice, null);
  r.lane.dispose();
});

Deno.test("a budget-partial page keeps its cursor so load more continues it", async () => {
  const r = rig((p) =>
    Promise.resolve(
      p.cursor
        ? page(["c"])
        : page(["a", "b"], { state: "partial", partial_reason: "budget", cursor: "k" }),
    )
  );
  r.lane.set(Q("the"));
  await wait(20);
  assert.equal(r.last().partial, "budget");
  r.lane.loadMore();
  await wait(20);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["a", "b", "c"]);
  assert.equal(r.last().partial, null);
  r.lane.dispose();
});

Deno.test("429 busy is retried while the query is still the latest", async () => {
  const r = rig((_, n) =>
    n === 1 ? Promise.reject(new ApiError("busy", 429, "busy", 5)) : Promise.resolve(page(["ok"]))
  );
  r.lane.set(Q("cookie"));
  await wait(40);
  assert.equal(r.calls.length, 2);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["ok"]);
  r.lane.dispose();
});

Deno.test("changing a filter is a new query", async () => {
  const r = rig((p) => Promise.resolve(page([String(p.includeSuperseded)])));
  r.lane.set(Q("cookie"));
  await wait(20);
  r.lane.set(Q("cookie", true));
  await wait(20);
  assert.deepEqual(r.calls.map((c) => c.p.includeSuperseded), [false, true]);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["true"]);
  r.lane.dispose();
});

Deno.test("a degraded page says how many sessions could not be searched and heals by asking again", async () => {
  const degraded = {
    count: 3,
    lost: 1,
    sessions: [
      { session_key: "codex:a", source: "codex" as const, reason: "damaged" as const },
      { session_key: "pi:b", source: "pi" as const, reason: "rebuilding" as const },
      { session_key: "kimi:c", source: "kimi" as const, reason: "source_gone" as const },
    ],
  };
  const states: LaneState[] = [];
  let n = 0;
  const lane = createSearchLane({
    limit: 2,
    debounceMs: 5,
    degradedRetryMs: 10,
    onChange: (s) => states.push(s),
    search: () =>
      Promise.resolve(
        ++n === 1
          ? page([], { state: "partial", partial_reason: "degraded", degraded })
          : page(["codex:a"]),
      ),
  });
  lane.set(Q("cookie"));
  await wait(15);
  const first = states.find((s) => s.partial === "degraded")!;
  assert.equal(first.status, "ready");
  assert.deepEqual(first.degraded, degraded);
  assert.match(
    first.notice ?? "",
    /^2 sessions could not be searched: their index data was damaged and is being rebuilt — searching again shortly\. 1 session could not be searched and cannot be rebuilt: its index data was damaged and the source files are gone\.$/,
  );
  await wait(40);
  assert.equal(n, 2, "asked again once the repair sweep had time to run");
  const last = states[states.length - 1]!;
  assert.equal(last.partial, null);
  assert.equal(last.degraded, null);
  assert.equal(last.notice, null);
  assert.deepEqual(last.groups.map((g) => g.session_key), ["codex:a"]);
  lane.dispose();
});

Deno.test("a page degraded only by lost sessions is not retried", async () => {
  const degraded = {
    count: 1,
    lost: 1,
    sessions: [{ session_key: "kimi:c", source: "kimi" as const, reason: "source_gone" as const }],
  };
  let n = 0;
  const states: LaneState[] = [];
  const lane = createSearchLane({
    limit: 2,
    debounceMs: 5,
    degradedRetryMs: 5,
    onChange: (s) => states.push(s),
    search: () => {
      n++;
      return Promise.resolve(page([], { state: "partial", partial_reason: "degraded", degraded }));
    },
  });
  lane.set(Q("cookie"));
  await wait(40);
  assert.equal(n, 1);
  assert.match(states[states.length - 1]!.notice ?? "", /cannot be rebuilt/);
  lane.dispose();
});

Deno.test("total_sessions is kept across load-more pages; its absence stays null", async () => {
  const r = rig((p) =>
    Promise.resolve(
      p.cursor
        ? page(["c"], { cursor: null }) // a later page need not repeat the total
        : page(["a", "b"], { cursor: "next", total_sessions: 3 }),
    )
  );
  r.lane.set(Q("zebra"));
  await wait(30);
  assert.equal(r.last().totalSessions, 3);
  r.lane.loadMore();
  await wait(10);
  assert.deepEqual(r.last().groups.map((g) => g.session_key), ["a", "b", "c"]);
  assert.equal(r.last().totalSessions, 3);
  const old = rig(() => Promise.resolve(page(["a"], { cursor: "next" })));
  old.lane.set(Q("zebra"));
  await wait(30);
  assert.equal(old.last().totalSessions, null, "an older server says nothing");
  r.lane.dispose();
  old.lane.dispose();
});

Deno.test("an empty ready page keeps only the suggestions that find something", async () => {
  const answers: SearchPage[] = [
    page([], {
      suggestions: {
        include_superseded: { sessions: 3, more: false },
        all_roles: { sessions: 0, more: false },
      },
    }),
    page([]),
    page(["a"], { suggestions: { include_superseded: { sessions: 1, more: false } } }),
  ];
  const r = rig((_, n) => Promise.resolve(answers[n - 1]!));
  r.lane.set(Q("zebra"));
  await wait(30);
  assert.deepEqual(r.last().suggestions, { include_superseded: { sessions: 3, more: false } });
  r.lane.set(Q("zebra2"));
  await wait(30);
  assert.equal(r.last().suggestions, null, "no suggestions: nothing to offer");
  r.lane.set(Q("zebra3"));
  await wait(30);
  assert.equal(r.last().suggestions, null, "a page with results offers no widening");
  r.lane.dispose();
});
