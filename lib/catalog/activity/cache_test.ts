import assert from "node:assert/strict";
import { ActivityCache } from "./cache.ts";
import type { FileActivity } from "./types.ts";

const act = (bytes: number): FileActivity => ({
  items: [],
  ids: new Map(),
  parents: new Map(),
  skipped: {},
  bytes,
});

Deno.test("ActivityCache evicts the least recently used past its file and byte bounds", () => {
  const c = new ActivityCache({ maxFiles: 2, maxBytes: 100 });
  const [a, b, d] = [act(40), act(40), act(40)];
  c.set("a", a);
  c.set("b", b);
  assert.equal(c.get("a"), a); // a is now the most recent
  c.set("d", d); // over 2 files: b goes
  assert.equal(c.get("b"), undefined);
  assert.equal(c.get("a"), a);
  c.set("big", act(90)); // over 100 bytes: everything older goes
  assert.equal(c.size, 1);
  c.set("huge", act(101)); // larger than the whole budget: not kept, nothing evicted
  assert.equal(c.get("huge"), undefined);
  assert.equal(c.size, 1);
  assert.throws(() => new ActivityCache({ maxFiles: -1 }), RangeError);
});
