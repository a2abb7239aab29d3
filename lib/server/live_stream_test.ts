import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { eventStreamParser } from "../../tests/helpers/event_stream.ts";
import { LIVE_LINE_MAX_BYTES, liveStream } from "./live_stream.ts";

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

Deno.test("liveStream() announces a line over the cap as skipped and goes on with the next", () =>
  withTempDir(async (dir) => {
    // Longer than one read: the old stream waited forever for a newline inside one read.
    const long = "x".repeat(LIVE_LINE_MAX_BYTES + 1024 * 1024);
    const after = JSON.stringify({ event: "info", message: "after" });
    await Deno.writeTextFile(join(dir, "session.jsonl"), `${long}\n${after}\nnot json\n`);
    const ac = new AbortController();
    const reader = liveStream({ dir, fromLine: 0, signal: ac.signal, pollMs: 5 }).getReader();
    const p = eventStreamParser();
    // The old stream never got past the long line: fail in bounded time instead of hanging.
    const deadline = setTimeout(() => reader.cancel(), 10_000);
    while (p.lastEventId !== "3") {
      const { value, done } = await reader.read();
      if (done) break;
      p.push(value);
    }
    clearTimeout(deadline);
    await reader.cancel();
    ac.abort();
    assert.deepEqual(p.events.map((e) => [e.type, e.lastEventId, JSON.parse(e.data)]), [
      ["skipped", "1", { line: 1, reason: "too_long", skipped: 1 }],
      ["message", "2", { event: "info", message: "after" }],
      ["skipped", "3", { line: 3, reason: "not_json", skipped: 2 }],
    ]);
  }));
