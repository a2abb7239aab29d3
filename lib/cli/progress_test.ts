import assert from "node:assert/strict";
import type { SweepProgress } from "../message_search/mod.ts";
import { progressLine } from "./progress.ts";

function at(source: SweepProgress["source"], files: number, records: number, elapsedMs: number) {
  return { source, files, sessions: 0, records, elapsedMs };
}

Deno.test("progressLine() off a TTY prints plain lines per period once the sweep runs long", () => {
  let now = 0;
  const out: string[] = [];
  const p = progressLine((s) => out.push(s), {
    isTty: false,
    afterMs: 5_000,
    plainEveryMs: 10_000,
    now: () => now,
  });
  p.onProgress(at("intendant", 3, 40, 1_000));
  assert.deepEqual(out, [], "a quick start prints nothing");
  now = 6_000;
  p.onProgress(at("codex", 10, 300, 6_000));
  now = 9_000;
  p.onProgress(at("codex", 20, 600, 9_000));
  now = 16_500;
  p.onProgress(at("codex", 30, 900, 16_500));
  assert.deepEqual(out, [
    "indexing codex: 10 files, 300 messages (340 messages in all, 57/s)\n",
    "indexing codex: 30 files, 900 messages (940 messages in all, 57/s)\n",
  ]);
  p.done();
  assert.equal(out.length, 2, "nothing to clear off a TTY");
});

Deno.test("progressLine() on a TTY redraws one line in place and clears it", () => {
  let now = 1;
  const out: string[] = [];
  const p = progressLine((s) => out.push(s), { isTty: true, now: () => now });
  p.onProgress(at("codex", 1, 5, 100));
  assert.deepEqual(out, []);
  p.onProgress(at("codex", 4, 50, 1_000));
  now = 100;
  p.onProgress(at("codex", 5, 60, 1_100)); // within the redraw period: skipped
  assert.deepEqual(out, [
    "\r\x1b[2Kindexing codex: 4 files, 50 messages (50 messages in all, 50/s)",
  ]);
  p.done();
  assert.equal(out.at(-1), "\r\x1b[2K");
});
