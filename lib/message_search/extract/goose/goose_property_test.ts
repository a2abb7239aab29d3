import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { closeSharedSnapshots } from "../framework/sqlite_snapshot.ts";
import {
  type GooseFixtureSession,
  type GooseItem,
  writeGooseDb,
} from "../../../../tests/helpers/fixtures/goose.ts";
import { ShardModel } from "../../../../tests/helpers/fixtures/sqlite_sweep.ts";
import { createGooseExtractor } from "./goose.ts";

const TEXT = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom("café", "cafe\u0301", "輸出が遅い", "tag\u{E0041}ged", "🙂"),
);
const ITEM: fc.Arbitrary<GooseItem> = fc.oneof(
  TEXT.map((text) => ({ type: "text" as const, text })),
  TEXT.map((thinking) => ({ type: "thinking" as const, thinking })),
  TEXT.map((output) => ({ type: "toolResponse" as const, output })),
  fc.constant({ type: "toolRequest" as const }),
);
const SESSION: fc.Arbitrary<GooseFixtureSession> = fc.record({
  type: fc.constantFrom("user" as const, "sub_agent" as const, "scheduled" as const),
  messages: fc.array(
    fc.record({
      role: fc.constantFrom("user" as const, "assistant" as const),
      content: fc.array(ITEM, { maxLength: 3 }),
      userVisible: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  ),
});

for (const schemaVersion of [13, 5]) {
  Deno.test(`goose (property, v${schemaVersion}): every visible prose row of random sessions is extracted exactly once`, async () => {
    const root = await Deno.makeTempDir({ prefix: "goose-prop-" });
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(SESSION, { minLength: 1, maxLength: 3 }), async (sessions) => {
          const data = join(root, `d${n++}`);
          const { expected } = writeGooseDb(data, sessions, { schemaVersion });
          const model = new ShardModel();
          await model.sweep(
            createGooseExtractor({ dataDirs: [data] }, { snapshotDir: join(root, "state") }),
          );
          for (const [key, want] of Object.entries(expected)) {
            assert.deepEqual(model.view(key), want);
          }
          closeSharedSnapshots();
        }),
        { numRuns: 30 },
      );
    } finally {
      closeSharedSnapshots();
      await Deno.remove(root, { recursive: true });
    }
  });
}
