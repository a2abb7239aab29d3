/**
 * The pure Qwen tree, by property (fast-check): over random valid sessions (streamed
 * assistant messages, tool results, interleaved subagents, system records, rewinds) every
 * prose message is extracted exactly once, the active set is the writer's own main chain
 * after its rewinds, and an append continuation from any split equals the full pass.
 * Plus the line rules that the fixture cannot show one by one.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { viewOf } from "../framework/_test_shard.ts";
import { mergeLine, nodeOf, parseLine, proseOfNode } from "./qwen_lines.ts";
import { appendPass, fullPass, type QwenPassContext, type QwenPassResult } from "./qwen_tree.ts";

const CTX: QwenPassContext = { sessionId: "s", file: "projects/p/chats/s.jsonl", maxNodes: 10_000 };
const TS = "2026-05-18T10:00:01.000Z";
type Obj = Record<string, unknown>;

function full(lines: string[]): QwenPassResult {
  const r = fullPass(lines.map((text) => ({ text })), CTX);
  assert.ok(!("failed" in r));
  return r;
}

Deno.test("line rules: displayText, hook blocks, provenance, mid-turn prefix, thoughts", () => {
  const prose = (...recs: Obj[]) => {
    const sk = {};
    const ls = recs.map((r) =>
      parseLine(JSON.stringify({ uuid: "u", parentUuid: null, timestamp: TS, ...r }), sk)!
    );
    const n = nodeOf(ls[0]!);
    for (const l of ls.slice(1)) mergeLine(n, l);
    return proseOfNode(n)?.text ?? null;
  };
  const parts = (...p: Obj[]) => ({ message: { role: "user", parts: p } });
  assert.equal(
    prose({
      type: "user",
      ...parts({ text: "expanded" }),
      systemPayload: { displayText: "typed" },
    }),
    "typed",
  );
  assert.equal(
    prose({
      type: "user",
      ...parts({ text: "q<qwen:user-prompt-submit-context>x</qwen:user-prompt-submit-context>" }),
    }),
    "q",
  );
  assert.equal(prose({ type: "user", provenance: "goal_runtime", ...parts({ text: "x" }) }), null);
  assert.equal(prose({ type: "user", subtype: "cron", ...parts({ text: "x" }) }), null);
  assert.equal(
    prose({
      type: "user",
      subtype: "mid_turn_user_message",
      ...parts({ text: "[User message received during tool execution]: hi" }),
    }),
    "hi",
  );
  assert.equal(
    prose({ type: "assistant", ...parts({ text: "a", thought: true }, { text: "b" }) }),
    "b",
  );
  assert.equal(
    prose({ type: "assistant", ...parts({ text: "one " }) }, {
      type: "assistant",
      ...parts({ functionCall: {} }, { text: "two" }),
    }),
    "one two",
  );
  assert.equal(prose({ type: "tool_result", ...parts({ text: "out" }) }), null);
  assert.equal(prose({ type: "system", subtype: "turn_result", ...parts({ text: "copy" }) }), null);
});

// ---- property ----

type Op =
  | { k: "user" | "tool" | "system" }
  | { k: "assistant"; streams: number; textAt: number }
  | { k: "side"; role: "user" | "assistant" }
  | { k: "rewind"; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constantFrom("user", "tool", "system") as fc.Arbitrary<"user" | "tool" | "system">,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("assistant" as const),
      streams: fc.integer({ min: 1, max: 3 }),
      textAt: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("side" as const),
      role: fc.constantFrom("user", "assistant") as fc.Arbitrary<"user" | "assistant">,
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("rewind" as const), pick: fc.nat() }) },
);

/** Lines plus the oracle: prose uuids in first-prose order, and those off the final chain. */
function session(ops: Op[]) {
  const lines: string[] = [];
  let chain: string[] = [];
  const proseIds: string[] = [];
  const mainProse = new Set<string>();
  let sideLeaf: string | null = null;
  let n = 0;
  const write = (r: Obj) =>
    lines.push(
      JSON.stringify({ sessionId: "s", timestamp: TS, cwd: "/p", version: "0.14.2", ...r }),
    );
  const texts = ["café", "cafe\u0301", "漢字", "plain"];
  for (const op of ops) {
    const uuid = `n${n++}`;
    const text = `${texts[n % texts.length]} ${uuid}`;
    const parentUuid = chain.at(-1) ?? null;
    if (op.k === "user") {
      write({
        uuid,
        parentUuid,
        type: "user",
        message: { role: "user", parts: [{ text }] },
        provenance: "real_user",
      });
      proseIds.push(uuid);
      mainProse.add(uuid);
    } else if (op.k === "tool" || op.k === "system") {
      write({
        uuid,
        parentUuid,
        type: op.k === "tool" ? "tool_result" : "system",
        subtype: op.k === "system" ? "ui_telemetry" : undefined,
        message: { role: "user", parts: [{ text: "never" }] },
      });
    } else if (op.k === "assistant") {
      const at = op.textAt % (op.streams + 1); // == streams: no text at all.
      for (let i = 0; i < op.streams; i++) {
        const parts = i === at ? [{ text }] : [{ text: "never", thought: true }];
        write({ uuid, parentUuid, type: "assistant", message: { role: "model", parts } });
      }
      if (at < op.streams) {
        proseIds.push(uuid);
        mainProse.add(uuid);
      }
    } else if (op.k === "side") {
      const role = op.role === "user" ? "user" : "model";
      write({
        uuid,
        parentUuid: sideLeaf,
        type: op.role,
        isSidechain: true,
        agentId: "a-1",
        message: { role, parts: [{ text }] },
      });
      sideLeaf = uuid;
      proseIds.push(uuid);
      continue;
    } else if (op.k === "rewind") {
      const k = chain.length === 0 ? 0 : op.pick % chain.length;
      chain = chain.slice(0, k);
      write({
        uuid,
        parentUuid: chain.at(-1) ?? null,
        type: "system",
        subtype: "rewind",
        systemPayload: { truncatedCount: 1 },
      });
    }
    chain.push(uuid);
  }
  const onChain = new Set(chain);
  const superseded = new Set([...mainProse].filter((id) => !onChain.has(id)));
  return { lines, proseIds, superseded };
}

Deno.test("property: every prose message exactly once; active = the writer's chain after rewinds", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
      const { lines, proseIds, superseded } = session(ops);
      const r = full(lines);
      const view = viewOf(r.records, r.marks);
      assert.deepEqual(view.map((v) => v.id), proseIds);
      for (const v of view) assert.equal(v.active, !superseded.has(v.id), v.id);
      assert.equal(r.skipped.unexplained_branch, undefined);
    }),
    { numRuns: 300 },
  );
});

Deno.test("property: an append continuation from any split equals the full pass", () => {
  let exact = 0;
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), fc.nat(), (ops, cut) => {
      const { lines } = session(ops);
      const k = cut % (lines.length + 1);
      const head = full(lines.slice(0, k));
      const tail = appendPass(
        lines.slice(k).map((text) => ({ text })),
        head.state,
        head.records.length,
        CTX,
      );
      if (tail === null) return; // Not a pure growth: the caller re-reads in full.
      exact++;
      const whole = full(lines);
      assert.deepEqual(
        viewOf([...head.records, ...tail.records], [...head.marks, ...tail.marks]),
        viewOf(whole.records, whole.marks),
      );
      assert.deepEqual(tail.state, whole.state);
    }),
    { numRuns: 500 },
  );
  assert.ok(exact > 150, `exact continuations: ${exact}`);
});
