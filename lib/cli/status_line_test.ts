import assert from "node:assert/strict";
import { statusLine } from "./status_line.ts";

function rig(isTty: boolean) {
  let clock = 0;
  const out: string[] = [];
  const line = statusLine((s) => out.push(s), { isTty, now: () => clock });
  return { line, out, advance: (ms: number) => (clock += ms) };
}

Deno.test("statusLine() stays silent for the first second, then redraws at most 4 times a second", () => {
  const r = rig(true);
  r.line.update("searching 1");
  r.advance(999);
  r.line.update("searching 2");
  assert.deepEqual(r.out, [], "quiet before 1 s");
  r.advance(1);
  r.line.update("searching 3");
  r.advance(100);
  r.line.update("searching 4"); // inside the redraw interval: skipped
  r.advance(150);
  r.line.update("searching 5");
  assert.deepEqual(r.out, ["\r\x1b[2Ksearching 3", "\r\x1b[2Ksearching 5"]);
  r.line.done();
  assert.equal(r.out.at(-1), "\r\x1b[2K", "erased when done");
});

Deno.test("statusLine() never writes when stderr is not a terminal", () => {
  const r = rig(false);
  r.advance(5_000);
  r.line.update("searching");
  r.line.done();
  assert.deepEqual(r.out, []);
});
