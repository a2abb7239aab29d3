import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { closeSharedSnapshots } from "../framework/sqlite_snapshot.ts";
import {
  type OcFixturePart,
  type OcFixtureSession,
  writeOpenCodeDb,
} from "../../../../tests/helpers/fixtures/opencode.ts";
import { ShardModel } from "../../../../tests/helpers/fixtures/sqlite_sweep.ts";
import { createOpenCodeExtractor } from "./opencode.ts";

const TEXT = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom("café", "cafe\u0301", "注文の行が重複", "🙂 ok", "line\nbreak"),
);
const PART: fc.Arbitrary<OcFixturePart> = fc.oneof(
  TEXT.map((text) => ({ type: "text" as const, text })),
  TEXT.map((text) => ({ type: "text" as const, text, synthetic: true })),
  TEXT.map((text) => ({ type: "reasoning" as const, text })),
  TEXT.map((output) => ({ type: "tool" as const, output })),
  fc.constant({ type: "step-start" as const }),
);
const SESSION: fc.Arbitrary<OcFixtureSession> = fc.array(
  fc.record({
    role: fc.constantFrom("user" as const, "assistant" as const),
    parts: fc.array(PART, { maxLength: 4 }),
  }),
  { minLength: 1, maxLength: 6 },
).chain((messages) =>
  fc.option(fc.nat({ max: messages.length - 1 }), { nil: undefined }).map((rev) => ({
    messages,
    ...(rev === undefined ? {} : { revert: { message: rev } }),
  }))
);

Deno.test("opencode (property): every prose part of random sessions is extracted exactly once, flags right", async () => {
  const root = await Deno.makeTempDir({ prefix: "oc-prop-" });
  let n = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(SESSION, { minLength: 1, maxLength: 3 }), async (sessions) => {
        const data = join(root, `d${n++}`);
        const { expected } = writeOpenCodeDb(data, sessions);
        const model = new ShardModel();
        await model.sweep(
          createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: join(root, "state") }),
        );
        for (const [key, want] of Object.entries(expected)) assert.deepEqual(model.view(key), want);
        closeSharedSnapshots();
      }),
      { numRuns: 40 },
    );
  } finally {
    closeSharedSnapshots();
    await Deno.remove(root, { recursive: true });
  }
});
