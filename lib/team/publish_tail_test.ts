/**
 * The append fast path's pure rules: when new generations may be published as plain
 * inserts on top of what the server holds, and the diff and Tail that gives.
 */
import assert from "node:assert/strict";
import { record } from "../../tests/helpers/store_fixtures.ts";
import type { SupersessionMark } from "../message_search/mod.ts";
import { appendDiff, canAppend, extendsList, type Tail, tailOf } from "./publish_tail.ts";

const mark = (after: number): SupersessionMark => ({
  kind: "record_ids",
  after_order: after,
  ids: ["s-r0"],
});

function tail(o: Partial<Tail> = {}): Tail {
  return tailOf({
    sig: "sig-a",
    generations: ["a.seg"],
    count: 3,
    records: [record("s", 0), record("s", 1), record("s", 2)],
    marks: [],
    ...o,
  });
}

Deno.test("extendsList: only a strict extension of the same prefix", () => {
  assert.equal(extendsList(["a"], ["a", "b"]), true);
  assert.equal(extendsList([], ["a"]), true);
  assert.equal(extendsList(["a"], ["a"]), false, "no new generation");
  assert.equal(extendsList(["a", "b"], ["a"]), false, "shrunk");
  assert.equal(extendsList(["a"], ["x", "b"]), false, "prefix rewritten");
});

Deno.test("tailOf: highest order and highest mark anchor, -1 when none", () => {
  const t = tail();
  assert.equal(t.maxOrder, 2);
  assert.equal(t.maxMarkAfter, -1);
  assert.equal(t.count, 3);
  const m = tailOf({
    sig: "s",
    generations: [],
    count: 0,
    records: [],
    marks: [mark(4), mark(9), mark(1)],
  });
  assert.equal(m.maxOrder, -1);
  assert.equal(m.maxMarkAfter, 9);
});

Deno.test("canAppend: refuses marks, records at or before the tail, records before a mark", () => {
  const t = tail();
  assert.equal(canAppend(t, [record("s", 3), record("s", 4)], []), true);
  assert.equal(canAppend(t, [record("s", 3)], [mark(3)]), false, "a new mark may flip old rows");
  assert.equal(canAppend(t, [record("s", 2)], []), false, "order equal to the tail's max");
  assert.equal(canAppend(t, [record("s", 3), record("s", 1)], []), false, "one record behind");
  // An old mark anchored after order 5 supersedes records before 5: a new record at 4
  // would be inactive, so it cannot be a plain insert.
  const marked = tail({ marks: [mark(5)] });
  assert.equal(canAppend(marked, [record("s", 4)], []), false);
  assert.equal(canAppend(marked, [record("s", 5), record("s", 6)], []), true);
});

Deno.test("appendDiff: inserts in order, duplicate ids keep the first, tail moves on", () => {
  const t = tail();
  const dup = { ...record("s", 5), id: "s-r3" };
  const { diff, tail: next } = appendDiff(t, [record("s", 3), record("s", 4), dup], {
    sig: "sig-b",
    generations: ["a.seg", "b.seg"],
  });
  assert.deepEqual(diff.inserts, [0, 1]);
  assert.deepEqual(diff.deletes, []);
  assert.deepEqual(diff.flips, []);
  assert.equal(diff.destructive, false);
  assert.equal(diff.count, 5);
  assert.equal(next.sig, "sig-b");
  assert.deepEqual(next.generations, ["a.seg", "b.seg"]);
  assert.equal(next.count, 5);
  // The skipped duplicate's order does not count: only inserted rows move maxOrder.
  assert.equal(next.maxOrder, 4);
  assert.equal(next.maxMarkAfter, -1);
  // The old tail is untouched (the publisher keeps it until the transaction commits).
  assert.equal(t.sig, "sig-a");
  assert.equal(t.count, 3);
});
