/**
 * The native extractor on real sessions produced by `intendant run` (new era: askHuman,
 * steer, rollback, resume) and on pre-lane legacy directories, including a legacy
 * session resumed into the new era (epoch marker).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createIntendantExtractor,
  deriveActive,
  type ExtractOutcome,
  type MessageRecord,
  type PriorShard,
  type ShardContent,
} from "../lib/message_search/mod.ts";
import { runIntendant, sessionOf, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { writeLegacySession } from "./helpers/legacy_session.ts";
import { withTempDir } from "./helpers/temp.ts";

/** Extracts the only session under `logsDir` from scratch. */
async function extractOne(logsDir: string): Promise<ExtractOutcome> {
  const ex = createIntendantExtractor({ logsDir });
  const { units } = await ex.discover();
  assert.equal(units.length, 1);
  return await ex.extract(units[0]!, null, { now: Date.now() });
}

/** Narrows an outcome to new shard content. */
function content(o: ExtractOutcome): ShardContent {
  if (o.kind !== "replace" && o.kind !== "append") {
    throw new Error(`Expected shard content, got "${o.kind}"`);
  }
  return o;
}

function active(records: MessageRecord[], marks: Parameters<typeof deriveActive>[1]) {
  const flags = deriveActive(records, marks);
  return records.map((r, i) => [r.role, r.text, flags[i]]);
}

Deno.test("new-era session from `intendant run`: task, prose, answer and steer are records; tool output never; rollback cuts", () =>
  withTempDir(async (root) => {
    const script = join(root, "s.jsonc");
    Deno.writeTextFileSync(
      script,
      JSON.stringify({
        turns: [
          { text: "Looking at the tests.", commands: [{ exec: "echo SECRET-TOOL-OUTPUT" }] },
          { ask_human: "Which suite?" },
          { text: "Running the unit suite.", done: true },
        ],
      }),
    );
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Make the tests green"]);
    const dir = await run.dir;
    const id = dir.split("/").at(-1)!;
    await waitFor(() => {
      try {
        Deno.statSync(join(dir, "human_question"));
        return true;
      } catch {
        return false;
      }
    });
    assert.equal((await runIntendant(root, ["ctl", "steer", id, "skip the slow ones"])).code, 0);
    assert.equal((await runIntendant(root, ["ctl", "answer", id, "unit"])).code, 0);
    assert.equal((await run.done).code, 0);
    assert.equal((await runIntendant(root, ["ctl", "rollback", id, "--to-seq", "4"])).code, 0);
    const outcome = content(await extractOne(join(root, "state", "logs")));
    assert.equal(outcome.kind, "replace");
    const rows = active(outcome.records, outcome.marks);
    assert.deepEqual(rows, [
      ["user", "Make the tests green", true],
      ["assistant", "Looking at the tests.", true],
      ["user", "unit", true],
      ["user", "skip the slow ones", false],
      ["assistant", "Running the unit suite.", false],
    ]);
    assert.ok(!outcome.records.some((r) => r.text.includes("SECRET-TOOL-OUTPUT")));
    for (const r of outcome.records) {
      assert.equal(r.locator.kind, "native_message_id");
      assert.equal(r.source, "intendant");
      assert.equal(r.session_id, id);
      assert.ok(r.ts_ms > Date.now() - 60_000);
    }
    assert.deepEqual(outcome.records.map((r) => r.seq), [1, 2, 4, 5, 6]);
    assert.equal(outcome.meta.title, "Make the tests green");
  }));

Deno.test("a resumed session yields resume_task records; an append extracts only the new rows", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "state", "logs");
    const s = sessionOf(await runIntendant(root, ["run", "first"]));
    const ex = createIntendantExtractor({ logsDir });
    const [unit] = (await ex.discover()).units;
    const first = content(await ex.extract(unit!, null, { now: Date.now() }));
    assert.equal(first.kind, "replace");
    const prior: PriorShard = {
      generations: [],
      cursors: first.cursors,
      state: first.state,
      records: first.records.length,
    };
    assert.equal((await ex.extract(unit!, prior, { now: Date.now() + 10_000 })).kind, "unchanged");
    assert.equal((await runIntendant(root, ["run", "--resume", s.id, "second"])).code, 0);
    const next = content(await ex.extract(unit!, prior, { now: Date.now() }));
    assert.equal(next.kind, "append");
    assert.deepEqual(next.records.map((r) => [r.role, r.text, r.order]), [
      ["user", "second", 3],
      ["assistant", "Working on: second", 4],
      ["assistant", "Done.", 5],
    ]);
  }));

Deno.test("legacy era: tasks, joined steers, follow-ups and sidecar spans, with midnight-wrapped timestamps", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "logs");
    const fx = writeLegacySession(logsDir);
    const outcome = content(await extractOne(logsDir));
    assert.equal(outcome.kind, "replace");
    const r = outcome.records;
    assert.deepEqual(r.map((x) => [x.role, x.text]), [
      ["user", fx.texts.task],
      ["assistant", fx.texts.reply1],
      ["user", fx.texts.steer],
      ["assistant", fx.texts.reply2],
      ["user", fx.texts.followUp],
    ]);
    assert.deepEqual(r.map((x) => x.locator.kind), [
      "native_event",
      "native_sidecar_span",
      "native_event",
      "native_sidecar_span",
      "native_event",
    ]);
    // The steer's locator points at the line that holds its text (steer_requested, line 4).
    assert.equal((r[2]!.locator as { line: number }).line, 4);
    assert.deepEqual(
      r[3]!.locator.kind === "native_sidecar_span" && [r[3]!.locator.offset, r[3]!.locator.file],
      [6, "turns/turn_002_model.txt"],
    );
    // Timestamps cross local midnight without going backwards.
    const ts = r.map((x) => x.ts_ms);
    assert.deepEqual(ts, [...ts].sort((a, b) => a - b));
    assert.equal(ts[2]! - fx.createdAtMs, 4 * 60_000);
    assert.equal(outcome.skipped.malformed_line, 1);
    assert.equal(r.every((x) => x.seq === undefined), true);
  }));

Deno.test("a legacy session resumed into the new era: epoch marker correlates seqs so a later cut covers legacy records", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "state", "logs");
    const fx = writeLegacySession(logsDir, { daysAgo: 0, project: root });
    const resumed = await runIntendant(root, [
      "run",
      "--resume",
      fx.id.slice(0, 8),
      "continue with docs",
    ]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const outcome = content(await extractOne(logsDir));
    const r = outcome.records;
    assert.deepEqual(r.map((x) => [x.role, x.text, x.seq]), [
      ["user", fx.texts.task, 1],
      ["assistant", fx.texts.reply1, 2],
      ["user", fx.texts.steer, undefined], // conversation held "[User] …": no hash match, best effort
      ["assistant", fx.texts.reply2, 4],
      ["user", fx.texts.followUp, 5],
      ["user", "continue with docs", 6],
      ["assistant", "Working on: continue with docs", 7],
      ["assistant", "Done.", 9],
    ]);
    // The info lines of the new era are diagnostics: the follow-up appears once.
    assert.equal(r.filter((x) => x.text === fx.texts.followUp).length, 1);
    assert.equal((await runIntendant(root, ["ctl", "rollback", fx.id, "--to-seq", "1"])).code, 0);
    const after = content(await extractOne(logsDir));
    const flags = deriveActive(after.records, after.marks);
    assert.deepEqual(flags, [true, false, true, false, false, false, false, false]);
  }));

Deno.test("wrapper sessions publish nothing; missing session.jsonl is gone", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "state", "logs");
    const s = sessionOf(await runIntendant(root, ["run", "wrapped"]));
    Deno.writeTextFileSync(
      join(s.dir, "session.jsonl"),
      JSON.stringify({
        ts: "10:00:00.000",
        ts_ms: Date.now(),
        event: "session_identity",
        data: { session_id: s.id, source: "codex", backend: "codex", wrapper: true },
      }) + "\n",
      { append: true },
    );
    const outcome = await extractOne(logsDir);
    assert.equal(outcome.kind, "nothing");
    const ex = createIntendantExtractor({ logsDir });
    const [unit] = (await ex.discover()).units;
    Deno.removeSync(join(s.dir, "session.jsonl"));
    assert.equal(
      (await ex.extract(unit!, {
        generations: [],
        cursors: (outcome as { cursors: PriorShard["cursors"] }).cursors,
        state: null,
        records: 0,
      }, { now: Date.now() })).kind,
      "gone",
    );
  }));
