import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  CopilotSessionWriter,
  MemShard,
  sweepInto,
  tickClock,
  uuidFrom,
} from "../../../../tests/helpers/fixtures/copilot.ts";
import { createCopilotExtractor } from "./copilot.ts";

const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).filter((s) =>
  s.trim() !== ""
);
const op = fc.oneof(
  fc.record({ k: fc.constant("user" as const), t: text }),
  fc.record({
    k: fc.constant("assistant" as const),
    t: text,
    reasoning: fc.boolean(),
    tool: fc.boolean(),
  }),
  fc.record({ k: fc.constant("sub" as const), t: text }),
  fc.record({ k: fc.constant("noise" as const) }),
  fc.record({ k: fc.constant("compaction" as const) }),
);

Deno.test("copilot property: random sessions, read in two sweeps, yield every prose message exactly once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "copilot-prop-" });
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), fc.nat(), async (ops, splitSeed) => {
        const home = join(dir, `h${run++}`);
        const w = new CopilotSessionWriter({
          sessionId: uuidFrom(`prop:${run}`),
          cwd: "/w",
          clock: tickClock(),
        });
        for (const o of ops) {
          if (o.k === "user") w.user(o.t);
          else if (o.k === "assistant") {
            w.assistant(o.t, {
              reasoning: o.reasoning,
              tools: o.tool ? [{ name: "bash", args: { c: "ls" }, result: "NEVER-INDEX" }] : [],
            });
          } else if (o.k === "sub") w.subagent(o.t, `${o.t}!`);
          else if (o.k === "noise") w.noise();
          else w.compaction();
        }
        const all = w.text();
        const lines = all.split("\n").slice(0, -1);
        const split = splitSeed % (lines.length + 1);
        const path = await w.write(home);
        await Deno.writeTextFile(path, lines.slice(0, split).map((l) => l + "\n").join(""));
        const ex = createCopilotExtractor({ homes: [home] });
        const shard = new MemShard();
        const key = `copilot:${w.o.sessionId}`;
        await sweepInto(ex, shard, key);
        await Deno.writeTextFile(path, all);
        await sweepInto(ex, shard, key);
        assert.deepEqual(shard.view(), w.expected());
        const ids = shard.records.map((r) =>
          r.locator.kind === "external_record_id" ? r.locator.record_id : ""
        );
        assert.deepEqual(ids, w.prose.map((p) => p.eventId));
        assert.deepEqual(shard.skipped, {});
      }),
      { numRuns: 40 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("copilot property: a random rewind keeps current prose active once and every vanished one superseded", async () => {
  const dir = await Deno.makeTempDir({ prefix: "copilot-prop-rw-" });
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 25 }),
        fc.nat(),
        fc.array(op, { maxLength: 6 }),
        async (before, cutSeed, after) => {
          const home = join(dir, `h${run++}`);
          const w = new CopilotSessionWriter({
            sessionId: uuidFrom(`rw:${run}`),
            cwd: "/w",
            clock: tickClock(),
          });
          const apply = (ops: typeof before) => {
            for (const o of ops) {
              if (o.k === "user") w.user(o.t);
              else if (o.k === "assistant") w.assistant(o.t, { reasoning: o.reasoning });
              else if (o.k === "sub") w.subagent(o.t, `${o.t}!`);
              else if (o.k === "noise") w.noise();
              else w.compaction();
            }
          };
          apply(before);
          const path = await w.write(home);
          const ex = createCopilotExtractor({ homes: [home] });
          const shard = new MemShard();
          const key = `copilot:${w.o.sessionId}`;
          await sweepInto(ex, shard, key);
          // Rewind to any event after session.start, then continue.
          const cut = 1 + (cutSeed % Math.max(1, w.events.length - 1));
          if (cut < w.events.length) w.rewindTo(w.events[cut]!.id as string);
          apply(after);
          await Deno.writeTextFile(path, w.text());
          await sweepInto(ex, shard, key);
          const current = w.prose.filter((p) => p.inFile).map((p) => [p.role, p.text]);
          assert.deepEqual(shard.active(), current);
          const superseded = shard.view().filter(([, , a]) => !a).map(([, t]) => t);
          for (const p of w.prose.filter((p) => !p.inFile)) {
            assert.ok(superseded.includes(p.text), `vanished kept: ${p.text}`);
          }
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
