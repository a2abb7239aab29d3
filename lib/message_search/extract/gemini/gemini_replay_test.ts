/**
 * The pure Gemini replay: prose rules per record kind, `$rewindTo` semantics (removed ids
 * superseded, un-superseded on return, an unknown target clears all), checkpoints that
 * omit ids superseding nothing, and a property test (fast-check): over random valid
 * sessions every prose message is extracted exactly once with Gemini's own loader's
 * active set, and an append continuation from any split point equals the full pass.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { viewOf } from "../framework/_test_shard.ts";
import { type GeminiEvent, lineEvent } from "./gemini_events.ts";
import { cutReferencedFiles, proseOf } from "./gemini_prose.ts";
import {
  appendPass,
  fullPass,
  type GeminiPassContext,
  type GeminiPassResult,
} from "./gemini_replay.ts";

const CTX: GeminiPassContext = {
  sessionId: "s",
  file: "tmp/p/chats/x.jsonl",
  subagent: false,
  maxMessages: 1000,
};
const TS = "2026-05-18T09:14:07.002Z";

function events(lines: object[]): GeminiEvent[] {
  const skipped = {};
  return lines.flatMap((l, i) =>
    lineEvent(JSON.stringify(l), { line: i + 1, offset: 0 }, skipped) ?? []
  );
}
const msg = (id: string, type: string, content: unknown, extra: object = {}) => ({
  id,
  timestamp: TS,
  type,
  content,
  ...extra,
});
function full(evs: GeminiEvent[]): GeminiPassResult {
  const r = fullPass(evs, CTX);
  assert.ok(!("failed" in r));
  return r;
}

Deno.test("prose rules: display text, nudge, prefixes, tool results, thoughts, notices", () => {
  const sk = {};
  const p = (m: object) => proseOf(m as Record<string, unknown>, sk)?.text ?? null;
  assert.equal(p(msg("1", "user", [{ text: "a" }, { text: "b" }])), "ab");
  assert.equal(
    p(msg("1", "user", [{ text: "long" }], { displayContent: [{ text: "typed" }] })),
    "typed",
  );
  assert.equal(
    p(msg("1", "user", "Please continue.", { displayContent: [{ text: "prev" }] })),
    null,
  );
  for (const t of ["/stats", "?", "<session_context>x", "<hook_context>x", "<state_snapshot>x"]) {
    assert.equal(p(msg("1", "user", [{ text: `  ${t}` }])), null, t);
  }
  assert.equal(
    p(msg("1", "user", [{ functionResponse: { id: "c", name: "n", response: {} } }])),
    null,
  );
  assert.equal(p(msg("1", "user", [{ text: "t", thought: true }, { text: "u" }])), "u");
  assert.equal(p(msg("1", "gemini", "answer", { thoughts: [{ description: "x" }] })), "answer");
  assert.equal(p(msg("1", "gemini", [{ text: "x", thought: true }, { text: "y" }])), "y");
  assert.equal(p(msg("1", "gemini", "Got it. Thanks for the additional context!")), null);
  assert.equal(p(msg("1", "info", "notice")), null);
  assert.equal(p(msg("1", "gemini", "   ")), null);
  assert.equal(
    cutReferencedFiles(
      "q\n--- Content from referenced files ---\nfile\n--- End of content ---\nmore",
    ),
    "q\nmore",
  );
});

Deno.test("$rewindTo supersedes the target and everything after; a returning id is active again", () => {
  const r = full(events([
    { sessionId: "s", projectHash: "h", startTime: TS, lastUpdated: TS },
    msg("u1", "user", [{ text: "one" }]),
    msg("g1", "gemini", "two"),
    msg("u2", "user", [{ text: "three" }]),
    { $rewindTo: "g1" },
    msg("g1", "gemini", "two, again"),
  ]));
  assert.deepEqual(viewOf(r.records, r.marks).map((v) => [v.id, v.text, v.active]), [
    ["u1", "one", true],
    ["g1", "two, again", true],
    ["u2", "three", false],
  ]);
});

Deno.test("a rewind to an unknown id clears everything; checkpoint omission supersedes nothing", () => {
  const r = full(events([
    msg("u1", "user", [{ text: "one" }]),
    { $set: { messages: [msg("x", "user", [{ text: "<state_snapshot>s" }])] } },
    msg("u2", "user", [{ text: "two" }]),
  ]));
  assert.ok(viewOf(r.records, r.marks).every((v) => v.active), "omission is not supersession");
  const c = full(events([msg("u1", "user", [{ text: "one" }]), { $rewindTo: "nope" }]));
  assert.deepEqual(viewOf(c.records, c.marks).map((v) => v.active), [false]);
});

// ---- property: random valid sessions ----

type Op =
  | { k: "user" | "gemini" | "tool"; text: string }
  | { k: "upsert"; pick: number }
  | { k: "rewind"; pick: number }
  | { k: "checkpoint"; keep: number }
  | { k: "summary"; text: string };

const TEXTS = ["café", "cafe\u0301", "漢字の検索", "plain words", "emoji ☕", "x"];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constantFrom("user", "gemini", "tool") as fc.Arbitrary<"user" | "gemini" | "tool">,
      text: fc.constantFrom(...TEXTS),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("upsert" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("rewind" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("checkpoint" as const), keep: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("summary" as const), text: fc.string() }) },
);

/** Lines for the ops, plus Gemini's own loader outcome (a Map) as the oracle. */
function session(ops: Op[]) {
  const lines: object[] = [{ sessionId: "s", projectHash: "h", startTime: TS, lastUpdated: TS }];
  const values = new Map<string, ReturnType<typeof msg>>();
  const live = new Map<string, true>();
  const ever = new Set<string>();
  const removed = new Set<string>();
  let n = 0;
  for (const op of ops) {
    if (op.k === "user" || op.k === "gemini" || op.k === "tool") {
      const id = `m${n++}`;
      const text = `${op.text} #${id}`;
      const m = op.k === "user"
        ? msg(id, "user", [{ text }])
        : op.k === "gemini"
        ? msg(id, "gemini", text, { thoughts: [{ description: "never" }] })
        : msg(id, "user", [{ functionResponse: { id: "c", name: "t", response: { text } } }]);
      values.set(id, m);
      lines.push(m);
      live.set(id, true);
      ever.add(id);
      removed.delete(id);
    } else if (op.k === "upsert" && values.size > 0) {
      const id = [...values.keys()][op.pick % values.size]!;
      lines.push(values.get(id)!);
      live.set(id, true);
      removed.delete(id);
    } else if (op.k === "rewind") {
      const ids = [...live.keys()];
      const target = ids.length > 0 && op.pick % 5 !== 0 ? ids[op.pick % ids.length]! : "unknown";
      lines.push({ $rewindTo: target });
      const at = ids.indexOf(target);
      for (const id of ids.slice(at < 0 ? 0 : at)) {
        live.delete(id);
        removed.add(id);
      }
    } else if (op.k === "checkpoint") {
      const ids = [...live.keys()];
      const kept = ids.filter((_, i) => (op.keep >> (i % 16)) & 1 || i === ids.length - 1);
      lines.push({ $set: { messages: kept.map((id) => values.get(id)!), lastUpdated: TS } });
      live.clear();
      for (const id of kept) live.set(id, true);
    } else if (op.k === "summary") lines.push({ $set: { summary: op.text } });
  }
  const prose = [...ever].filter((id) =>
    values.get(id)!.type === "gemini" ||
    Array.isArray(values.get(id)!.content) && "text" in (values.get(id)!.content as object[])[0]!
  );
  return { lines, prose, removed };
}

Deno.test("property: every prose message extracted exactly once, active set as Gemini's loader", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
      const { lines, prose, removed } = session(ops);
      const r = full(events(lines));
      const view = viewOf(r.records, r.marks);
      assert.deepEqual(
        view.map((v) => v.id),
        prose,
        "each prose id once, in first-appearance order",
      );
      for (const v of view) assert.equal(v.active, !removed.has(v.id), v.id);
    }),
    { numRuns: 300 },
  );
});

Deno.test("property: an append continuation from any split equals the full pass", () => {
  let exact = 0;
  let withMarks = 0;
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), fc.nat(), (ops, cut) => {
      const evs = events(session(ops).lines);
      const k = cut % (evs.length + 1);
      const head = full(evs.slice(0, k));
      const tail = appendPass(evs.slice(k), head.state, head.records.length, CTX);
      const whole = full(evs);
      if (tail === null) return; // Not certain from the bounded state: the caller re-reads.
      exact++;
      if (tail.marks.length > 0) withMarks++;
      assert.deepEqual(
        viewOf([...head.records, ...tail.records], [...head.marks, ...tail.marks]),
        viewOf(whole.records, whole.marks),
      );
      assert.deepEqual(tail.state, whole.state);
    }),
    { numRuns: 500 },
  );
  // Not vacuous: most splits continue exactly, rewinds included.
  assert.ok(exact > 250 && withMarks > 10, `exact ${exact}, with marks ${withMarks}`);
});
