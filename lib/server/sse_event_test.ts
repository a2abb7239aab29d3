import assert from "node:assert/strict";
import { eventStreamParser } from "../../tests/helpers/event_stream.ts";
import { sseEvent } from "./sse_event.ts";

/** Random text rich in what an event stream treats specially. */
function hostile(rand: () => number): string {
  const atoms = [
    "\r",
    "\n",
    "\r\n",
    "\n\r",
    "\0",
    "id: 999999999",
    "event: status",
    "retry: 1",
    "data: x",
    ":",
    " ",
    "\u2028",
    "\uFEFF",
    "\ud800",
    "é",
    "a",
    "{}",
  ];
  let s = "";
  const n = Math.floor(rand() * 12);
  for (let i = 0; i < n; i++) s += atoms[Math.floor(rand() * atoms.length)];
  return s;
}

function seeded(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

Deno.test("sseEvent() keeps every field on one line whatever its data and comment hold", () => {
  const rand = seeded(15);
  const names = [undefined, "status", "error", "skipped"];
  for (let i = 0; i < 5000; i++) {
    const data = rand() < 0.9 ? hostile(rand) : undefined;
    const comment = rand() < 0.2 ? hostile(rand) : undefined;
    const event = names[Math.floor(rand() * names.length)];
    const id = rand() < 0.5 ? Math.floor(rand() * 1e6) : undefined;
    if (data === undefined && comment === undefined && event === undefined && id === undefined) {
      continue;
    }
    const wire = sseEvent({ event, id, data, comment });
    // No CR anywhere; every LF-separated line is a field the server chose, then one blank line.
    assert.ok(!wire.includes("\r"), JSON.stringify(wire));
    assert.ok(wire.endsWith("\n\n"));
    const lines = wire.slice(0, -2).split("\n");
    for (const l of lines) assert.match(l, /^(data: |id: \d+$|event: [a-z_]+$|: )/);
    const p = eventStreamParser();
    p.push(wire);
    assert.equal(p.retries.length, 0);
    if (data === undefined) {
      assert.equal(p.events.length, 0);
    } else {
      assert.equal(p.events.length, 1, JSON.stringify(wire));
      assert.equal(p.events[0]!.type, event ?? "message");
      assert.equal(p.events[0]!.data, data.replace(/\r\n|\r/g, "\n"));
      assert.equal(p.events[0]!.lastEventId, id === undefined ? "" : String(id));
    }
    assert.equal(p.lastEventId, id === undefined ? "" : String(id));
  }
});

Deno.test("sseEvent() refuses names and ids that are not the server's own", () => {
  for (const event of ["", "Status", "a b", "x\r", "x\nid: 1", "é", "a".repeat(33)]) {
    assert.throws(() => sseEvent({ event, data: "x" }), RangeError);
  }
  for (const id of [-1, 1.5, Number.NaN, Infinity, 2 ** 53]) {
    assert.throws(() => sseEvent({ id, data: "x" }), RangeError);
  }
  assert.throws(() => sseEvent({}), RangeError);
  assert.equal(sseEvent({ comment: "keepalive" }), ": keepalive\n\n");
  assert.equal(sseEvent({ id: 7, data: '{"a":1}' }), 'id: 7\ndata: {"a":1}\n\n');
});
