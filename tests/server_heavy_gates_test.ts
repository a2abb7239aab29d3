/**
 * The heavy routes' caps in process (issue 15 F4; the daemon-level burst is
 * reliability_bounds_test.ts): with its gate full, each of Deep Search, the catalog, the
 * detail, replay and the report answers 429 `busy` with Retry-After — message search's
 * shape — and does no work; a bad parameter is still a 400 (validated before any slot);
 * once a slot is free the route answers 200 and names the in-flight count it was admitted
 * at. A streamed report holds its slot until the download is read to the end or
 * cancelled, and a download nobody reads gives its slot back after the stall timeout.
 */
import assert from "node:assert/strict";
import { createHeavyGates, IN_FLIGHT_HEADER } from "../lib/server/mod.ts";
import { holdWhileStreaming } from "../lib/server/heavy_gates.ts";
import { SearchGate } from "../lib/server/search_gate.ts";
import { withTempDir } from "./helpers/temp.ts";
import { buildWorld } from "./helpers/world.ts";

Deno.test("every heavy route answers 429 busy with Retry-After when its gate is full, 200 with its in-flight count when not", () =>
  withTempDir(async (root) => {
    const gates = createHeavyGates({ deep: 1, catalog: 1, detail: 1, replay: 1, report: 1 });
    const w = await buildWorld(root, { heavyGates: gates });
    const id = w.homes.intendant!.appendTarget.key.split(":")[1]!;
    const routes = {
      deep: "/api/sessions/search?q=NEVER-INDEX",
      catalog: "/api/sessions?limit=5",
      detail: `/api/session/${id}?limit=5`,
      replay: `/api/session/${id}/replay?limit=5`,
      report: `/api/session/${id}/report`,
    } as const;
    for (const [route, path] of Object.entries(routes) as [keyof typeof routes, string][]) {
      const hold = gates[route].tryAcquire()!;
      const refused = await w.get(path);
      assert.equal(refused.status, 429, route);
      assert.equal(refused.headers.get("retry-after"), "1", route);
      const body = await refused.json();
      assert.equal(body.error, "busy", route);
      assert.match(body.message, /in flight; retry shortly$/, route);
      hold();
      const ok = await w.get(path);
      assert.equal(ok.status, 200, route);
      assert.equal(ok.headers.get(IN_FLIGHT_HEADER), "1/1", route);
      await ok.arrayBuffer();
      assert.equal(gates[route].inFlight, 0, `${route}: slot released`);
    }
    // Validation first: a bad request costs no slot and is never a 429.
    const hold = gates.deep.tryAcquire()!;
    assert.equal((await w.get("/api/sessions/search?q=x")).status, 400);
    hold();
    const held = gates.detail.tryAcquire()!;
    assert.equal((await w.get(`/api/session/..%2Fetc?limit=5`)).status, 400);
    held();
  }));

Deno.test("a streamed report holds its slot until read to the end or cancelled", () =>
  withTempDir(async (root) => {
    const gates = createHeavyGates({ deep: 2, catalog: 4, detail: 4, replay: 2, report: 1 });
    const w = await buildWorld(root, { heavyGates: gates });
    const id = w.homes.intendant!.appendTarget.key.split(":")[1]!;
    const first = await w.get(`/api/session/${id}/report`);
    assert.equal(first.status, 200);
    assert.equal(gates.report.inFlight, 1, "held while the body is unread");
    assert.equal((await w.get(`/api/session/${id}/report`)).status, 429);
    await first.arrayBuffer();
    assert.equal(gates.report.inFlight, 0, "released at the end of the body");
    const second = await w.get(`/api/session/${id}/report`);
    const reader = second.body!.getReader();
    await reader.read();
    await reader.cancel();
    assert.equal(gates.report.inFlight, 0, "released on cancel");
  }));

Deno.test("holdWhileStreaming() gives the slot back when the reader stalls", async () => {
  const gate = new SearchGate(1);
  const release = gate.tryAcquire()!;
  let pulls = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(new Uint8Array(1024));
      if (++pulls > 1000) c.close();
    },
  });
  const s = holdWhileStreaming(source, release, { stallMs: 100 });
  const reader = s.getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(gate.inFlight, 0, "a stalled download frees its slot");
  await assert.rejects(async () => {
    for (;;) if ((await reader.read()).done) break;
  }, /stalled/);
});
