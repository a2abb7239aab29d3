/**
 * The framework's shared pieces on their own: the entry flow's decisions, its one
 * retry and its opt-in re-parse of an unreadable state, the rewrite epoch, the limits
 * resolver and the bounded walker's vocabulary.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CursorMismatchError, readIncrement } from "../../cursor.ts";
import {
  createWalkBudget,
  type ExtractOutcome,
  listDirBounded,
  nextRewriteEpoch,
  resolveLimits,
  runEntryFlow,
  type SessionUnit,
  spendBudget,
} from "./plugin.ts";

const EMPTY: ExtractOutcome = {
  kind: "replace",
  records: [],
  marks: [],
  cursors: {},
  state: null,
  meta: { project: null, title: null, parent_session_id: null, files: [] },
  skipped: {},
};

function unitOf(path: string): SessionUnit {
  return { source: "pi", sessionId: "s", key: "pi:s", files: [{ path, role: "main" }] };
}

Deno.test("runEntryFlow retries the full parse once on CursorMismatchError, not twice", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "{}\n");
    let calls = 0;
    const out = await runEntryFlow(unitOf(path), null, {
      now: Date.now(),
      flow: {
        parseState: () => null,
        full: () => {
          if (++calls === 1) throw new CursorMismatchError("Rewritten", "prefix");
          return Promise.resolve(EMPTY);
        },
      },
    });
    assert.equal(out.kind, "replace");
    assert.equal(calls, 2);
    calls = 0;
    await assert.rejects(
      runEntryFlow(unitOf(path), null, {
        now: Date.now(),
        flow: {
          parseState: () => null,
          full: () => {
            calls++;
            throw new CursorMismatchError("Rewritten", "prefix");
          },
        },
      }),
      CursorMismatchError,
    );
    assert.equal(calls, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runEntryFlow: a missing file is gone; a mismatch in append falls through to full", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const gone = await runEntryFlow(unitOf(join(dir, "missing.jsonl")), null, {
      now: Date.now(),
      flow: { parseState: () => null, full: () => Promise.reject(new Error("Not reached")) },
    });
    assert.equal(gone.kind, "gone");
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "{}\n");
    const prior = { generations: [], cursors: {}, state: { ok: true }, records: 0 };
    let full = 0;
    const out = await runEntryFlow(unitOf(path), prior, {
      now: Date.now(),
      flow: {
        parseState: (raw) => raw,
        append: () => Promise.reject(new CursorMismatchError("Rewritten", "anchor")),
        full: () => (full++, Promise.resolve(EMPTY)),
      },
    });
    assert.equal(out.kind, "replace");
    assert.equal(full, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runEntryFlow: reparseUnreadableState sends an unchanged unit with an unreadable state to full", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "{}\n");
    // The real cursor of the file: `now` well past the racy window below makes
    // "unchanged" a stat-only verdict.
    const cursors = { [path]: (await readIncrement(path, null)).cursor };
    const now = Date.now() + 60_000;
    let full = 0;
    const run = (state: unknown, reparse?: boolean) =>
      runEntryFlow(unitOf(path), { generations: [], cursors, state, records: 0 }, {
        now,
        flow: {
          parseState: (raw) => (raw === "ok" ? raw : null),
          full: () => (full++, Promise.resolve(EMPTY)),
          ...(reparse === undefined ? {} : { reparseUnreadableState: reparse }),
        },
      });
    // Default (every other source): unchanged files are "unchanged", whatever the state.
    assert.equal((await run("bad")).kind, "unchanged");
    assert.equal((await run("bad", false)).kind, "unchanged");
    assert.equal((await run("ok", true)).kind, "unchanged");
    assert.equal(full, 0);
    assert.equal((await run("bad", true)).kind, "replace");
    assert.equal(full, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("nextRewriteEpoch is one past the cursor's, 0 for a new file unless the shard exists", () => {
  assert.equal(nextRewriteEpoch(null), 0);
  assert.equal(nextRewriteEpoch(undefined, { shardExists: true }), 1);
  const c = { rewrite_epoch: 4 } as Parameters<typeof nextRewriteEpoch>[0];
  assert.equal(nextRewriteEpoch(c), 5);
});

Deno.test("resolveLimits rejects unknown keys and non-positive integers, keeps defaults", () => {
  const d: Readonly<{ maxA: number; maxB: number }> = Object.freeze({ maxA: 10, maxB: 20 });
  assert.deepEqual(resolveLimits("X", d, { maxB: 3 }), { maxA: 10, maxB: 3 });
  assert.deepEqual(resolveLimits("X", d, { maxA: undefined }), d);
  assert.throws(
    () => resolveLimits("X", d, { maxC: 1 } as Partial<typeof d>),
    /Unknown X limit "maxC"/,
  );
  assert.throws(() => resolveLimits("X", d, { maxA: 0 }), RangeError);
  assert.throws(() => resolveLimits("X", d, { maxA: 1.5 }), RangeError);
});

Deno.test("the walker counts a cut as walk_truncated: each, once per listing, or not at all", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const n of ["a", "b", "c", "d"]) await Deno.writeTextFile(join(dir, n), "");
    const each: Record<string, number> = {};
    const e = await listDirBounded(dir, { budget: createWalkBudget(1), skipped: each });
    // Which entry survives is the file system's listing order; how many is the budget.
    assert.equal(e!.length, 1);
    assert.deepEqual(each, { walk_truncated: 3 });
    const once: Record<string, number> = {};
    const budget = createWalkBudget(1);
    await listDirBounded(dir, { budget, skipped: once, counting: "once" });
    await listDirBounded(dir, { budget, skipped: once, counting: "once" });
    assert.deepEqual(once, { walk_truncated: 2 });
    const none: Record<string, number> = {};
    const b2 = createWalkBudget(2);
    assert.equal(
      (await listDirBounded(dir, { budget: b2, skipped: none, counting: "none" }))!.length,
      2,
    );
    assert.deepEqual(none, {});
    assert.equal(b2.cut, true);
    assert.equal(spendBudget(createWalkBudget(1), none), true);
    assert.equal(await listDirBounded(join(dir, "missing"), { skipped: none }), null);
    assert.deepEqual(none, {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
