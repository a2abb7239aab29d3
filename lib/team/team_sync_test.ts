/**
 * The daemon's team sync loop, with the revision and the publish injected: it publishes
 * once per local revision change (never for an unchanged revision), backs off while the
 * database fails and logs each distinct failure once, recovers (and says so), and stop()
 * waits for a publish in flight.
 */
import assert from "node:assert/strict";
import type { PublishReport } from "./publish.ts";
import { startTeamSync } from "./team_sync.ts";

const report = { batches: 1 } as unknown as PublishReport;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("team sync: one publish per revision change, backoff on failure, recovery", async () => {
  let rev = 1;
  let publishes = 0;
  let failing = false;
  const logs: string[] = [];
  const sync = startTeamSync({
    readRevision: () => Promise.resolve(rev),
    publish: () => {
      publishes++;
      return failing ? Promise.reject(new Error("connection refused")) : Promise.resolve(report);
    },
    logger: (l) => logs.push(l),
    pollMs: 5,
    maxBackoffMs: 40,
  });
  try {
    await sleep(60);
    assert.equal(publishes, 1, "an unchanged revision is published once");
    assert.equal(sync.status().publishedRevision, 1);
    rev = 2;
    await sleep(60);
    assert.equal(publishes, 2);
    failing = true;
    rev = 3;
    await sleep(200);
    const failed = publishes - 2;
    // Backoff: 5·2, 5·4, 5·8, then 40 ms steps: far fewer attempts than 200/5 polls.
    assert.ok(failed >= 2 && failed <= 10, `attempts while failing: ${failed}`);
    assert.equal(logs.filter((l) => l.includes("connection refused")).length, 1);
    assert.equal(sync.status().publishedRevision, 2);
    assert.ok(sync.status().failures >= 2);
    failing = false;
    await sleep(120);
    assert.equal(sync.status().publishedRevision, 3);
    assert.equal(sync.status().lastError, null);
    assert.ok(logs.some((l) => l.includes("works again")));
  } finally {
    await sync.stop();
  }
  const after = publishes;
  rev = 9;
  await sleep(30);
  assert.equal(publishes, after, "nothing runs after stop()");
});
