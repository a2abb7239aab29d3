import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { liveStream } from "./live_stream.ts";

Deno.test("liveStream() cancelled while a poll is in flight neither throws nor keeps polling", () =>
  withTempDir(async (dir) => {
    const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ event: "info", n: i }));
    await Deno.writeTextFile(join(dir, "session.jsonl"), lines.join("\n") + "\n");
    // Many short-lived clients, each leaving at a different moment of a tick: an enqueue
    // into a cancelled stream used to escape as an unhandled rejection (which fails this
    // test, and would have ended the daemon).
    for (let i = 0; i < 40; i++) {
      const ac = new AbortController();
      // heartbeatMs 0: every tick writes (a keepalive), so a tick in flight always enqueues.
      const reader = liveStream({ dir, fromLine: 0, signal: ac.signal, pollMs: 1, heartbeatMs: 0 })
        .getReader();
      const first = await reader.read();
      assert.ok(first.value && first.value.length > 0);
      await new Promise((r) => setTimeout(r, i % 4));
      await reader.cancel();
      ac.abort();
    }
    await new Promise((r) => setTimeout(r, 50));
  }));
