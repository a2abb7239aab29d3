import assert from "node:assert/strict";
import { createLatestGate, isAbort } from "./latest.ts";

/** A request whose response the test releases by hand, in any order. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

Deno.test("begin() aborts the previous request and makes its ticket stale", () => {
  const gate = createLatestGate();
  const a = gate.begin();
  assert.ok(a.current());
  const b = gate.begin();
  assert.ok(a.signal.aborted);
  assert.ok(!a.current());
  assert.ok(b.current() && !b.signal.aborted);
  assert.ok(b.seq > a.seq);
});

Deno.test("an older response that resolves last is never applied over a newer one", async () => {
  const gate = createLatestGate();
  const shown: string[] = [];
  const search = async (q: string, response: Promise<string>) => {
    const t = gate.begin();
    const body = await response; // the "server" answers whenever it answers
    if (t.current()) shown.push(`${q}:${body}`);
  };
  const slow = deferred<string>();
  const fast = deferred<string>();
  const p1 = search("ca", slow.promise);
  const p2 = search("café", fast.promise);
  fast.resolve("6 groups");
  await p2;
  slow.resolve("40 groups"); // arrives after the newer query's answer
  await p1;
  assert.deepEqual(shown, ["café:6 groups"]);
});

Deno.test("cancel() leaves no current ticket and aborts the request", () => {
  const gate = createLatestGate();
  const a = gate.begin();
  gate.cancel();
  assert.ok(a.signal.aborted && !a.current());
  assert.ok(gate.begin().current());
});

Deno.test("isAbort() recognises an aborted fetch and nothing else", () => {
  assert.ok(isAbort(new DOMException("aborted", "AbortError")));
  assert.ok(!isAbort(new Error("boom")));
  assert.ok(!isAbort(new DOMException("x", "NetworkError")));
});
