import assert from "node:assert/strict";
import fc from "fast-check";
import { deriveActive, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { type DerivedRecord, rederiveSession, type SeenEntry } from "./sqlite_rederive.ts";

function derived(id: string, text: string, superseded = false): DerivedRecord {
  return {
    id,
    role: "user",
    ts_ms: 1,
    text,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: id,
      file: "x.db",
      hash: "0123456789abcdef",
    },
    subagent: false,
    superseded,
  };
}

/** Applies successive store versions the way the store does; returns the shard. */
function run(versions: DerivedRecord[][]) {
  let records: MessageRecord[] = [];
  let marks: SupersessionMark[] = [];
  let seen: SeenEntry[] | null = null;
  let shard = false;
  const steps: { records: MessageRecord[]; marks: SupersessionMark[]; kind: string }[] = [];
  for (const current of versions) {
    const r = rederiveSession({
      source: "opencode",
      sessionId: "s",
      current,
      priorRecords: shard ? records.length : null,
      priorSeen: seen,
    });
    if (r.kind === "replace") {
      records = r.records;
      marks = r.marks;
    } else {
      records = [...records, ...r.records];
      marks = [...marks, ...r.marks];
    }
    records.forEach((rec, i) => assert.equal(rec.order, i, "orders are positions"));
    shard = true;
    seen = r.seen;
    steps.push({ records, marks, kind: r.kind });
  }
  return steps;
}

Deno.test("rederiveSession: a vanished row stays, superseded; a returning one is active again", () => {
  const [a, b, c, d] = run([
    [derived("1", "one"), derived("2", "two")],
    [derived("1", "one")],
    [derived("1", "one"), derived("2", "two")],
    [derived("1", "one, edited"), derived("2", "two")],
  ]);
  const view = (s: typeof a) => {
    const act = deriveActive(s!.records, s!.marks);
    return s!.records.map((r, i) => `${r.text}:${act[i] ? "A" : "S"}`);
  };
  assert.equal(a!.kind, "replace");
  assert.deepEqual(view(b), ["one:A", "two:S"]);
  assert.equal(b!.kind, "append");
  assert.deepEqual(view(c), ["one:A", "two:S", "two:A"]);
  assert.deepEqual(view(d), ["one:S", "two:S", "two:A", "one, edited:A"]);
});

Deno.test("rederiveSession: in-place growth with nothing vanished is a clean replace", () => {
  const [, b] = run([[derived("1", "The ans")], [derived("1", "The answer.")]]);
  assert.equal(b!.kind, "replace");
  assert.deepEqual(b!.records.map((r) => r.text), ["The answer."]);
});

const ID = fc.constantFrom("a", "b", "c", "d", "e", "f");
const VERSION = fc.uniqueArray(
  fc.record({
    id: ID,
    text: fc.constantFrom("x", "y", "zz", "日本", "e\u0301"),
    sup: fc.boolean(),
  }),
  { selector: (r) => r.id, maxLength: 6 },
);

Deno.test("rederiveSession (property): after every version, each current row is indexed exactly once with the right flag, and no text ever published is lost", () => {
  fc.assert(
    fc.property(fc.array(VERSION, { minLength: 1, maxLength: 8 }), (versions) => {
      const steps = run(versions.map((v) => v.map((r) => derived(r.id, r.text, r.sup))));
      const everLast = new Map<string, string>();
      steps.forEach((s, k) => {
        const act = deriveActive(s.records, s.marks);
        const current = versions[k]!;
        for (const r of current) everLast.set(r.id, r.text);
        for (const r of current) {
          const activeCopies = s.records.filter((x, i) => x.id === r.id && act[i]);
          if (r.sup) assert.equal(activeCopies.length, 0, `${r.id} hidden`);
          else {
            assert.equal(activeCopies.length, 1, `${r.id} active once`);
            assert.equal(activeCopies[0]!.text, r.text);
          }
        }
        const ids = new Set<string>(current.map((r) => r.id));
        assert.ok(s.records.every((x, i) => !act[i] || ids.has(x.id)), "nothing gone is active");
        for (const [id, text] of everLast) {
          assert.ok(s.records.some((x) => x.id === id && x.text === text), `${id}:${text} kept`);
        }
      });
    }),
    { numRuns: 300 },
  );
});
