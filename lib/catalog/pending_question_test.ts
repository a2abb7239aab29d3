import assert from "node:assert/strict";
import { join } from "node:path";
import { HUMAN_QUESTION, readMeta, type SessionStatus, writeMeta } from "../session_log/mod.ts";
import { writeNativeSession } from "../../tests/helpers/native_corpus.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { PENDING_QUESTION_MAX_BYTES, readPendingQuestion } from "./pending_question.ts";
import { ENTRY_TEXT_CAP_BYTES } from "./types.ts";

async function session(root: string, status: SessionStatus): Promise<string> {
  const { dir } = await writeNativeSession(join(root, "logs"), { turns: 1 });
  const m = await readMeta(dir);
  assert.ok(m.ok);
  await writeMeta(dir, { ...m.meta, status });
  return dir;
}

const question = (id: string, q: string) => JSON.stringify({ question_id: id, question: q }) + "\n";

Deno.test("readPendingQuestion() reports the question of a live session only", () =>
  withTempDir(async (root) => {
    const dir = await session(root, "waiting");
    assert.equal(await readPendingQuestion(dir), null, "no file: nothing pending");
    Deno.writeTextFileSync(join(dir, HUMAN_QUESTION), question("q-1", "Which branch? ✓"));
    const p = await readPendingQuestion(dir);
    assert.deepEqual({ ...p, asked_ms: 0 }, {
      question_id: "q-1",
      question: "Which branch? ✓",
      asked_ms: 0,
    });
    assert.ok(Math.abs(p!.asked_ms - Date.now()) < 60_000);
    // The runner's status moves after the file exists: "running" with a file is pending.
    const m = await readMeta(dir);
    assert.ok(m.ok);
    await writeMeta(dir, { ...m.meta, status: "running" });
    assert.equal((await readPendingQuestion(dir))?.question_id, "q-1");
    // A file a crashed runner left in an ended session is not a question anyone reads.
    for (const status of ["completed", "failed", "interrupted"] as const) {
      await writeMeta(dir, { ...m.meta, status });
      assert.equal(await readPendingQuestion(dir), null, status);
      assert.equal(
        await readPendingQuestion(dir, { meta: { ...m.meta, status: "waiting" } }) !== null,
        true,
      );
    }
  }));

Deno.test("readPendingQuestion() never follows a symlink and treats torn files as not yet pending", () =>
  withTempDir(async (root) => {
    const dir = await session(root, "waiting");
    const outside = join(root, "outside.json");
    Deno.writeTextFileSync(outside, question("stolen", "CANARY"));
    Deno.symlinkSync(outside, join(dir, HUMAN_QUESTION));
    assert.equal(await readPendingQuestion(dir), null);
    Deno.removeSync(join(dir, HUMAN_QUESTION));
    Deno.linkSync(outside, join(dir, HUMAN_QUESTION));
    assert.equal(await readPendingQuestion(dir), null, "a hardlink names an outside inode");
    Deno.removeSync(join(dir, HUMAN_QUESTION));
    for (const torn of ["", '{"question_id":"q-2","quest', '{"question_id":7,"question":"x"}']) {
      Deno.writeTextFileSync(join(dir, HUMAN_QUESTION), torn);
      assert.equal(await readPendingQuestion(dir), null, JSON.stringify(torn));
    }
  }));

Deno.test("readPendingQuestion() caps the question and still names an oversized one", () =>
  withTempDir(async (root) => {
    const dir = await session(root, "waiting");
    const long = "é".repeat(ENTRY_TEXT_CAP_BYTES); // two bytes each: twice the cap
    Deno.writeTextFileSync(join(dir, HUMAN_QUESTION), question("q-long", long));
    const p = await readPendingQuestion(dir);
    assert.equal(p?.question_truncated, true);
    assert.equal(new TextEncoder().encode(p!.question).length, ENTRY_TEXT_CAP_BYTES);
    assert.ok(long.startsWith(p!.question));
    const huge = "x".repeat(PENDING_QUESTION_MAX_BYTES + 10);
    Deno.writeTextFileSync(join(dir, HUMAN_QUESTION), question('q-"huge"', huge));
    const h = await readPendingQuestion(dir);
    assert.equal(h?.question_id, 'q-"huge"');
    assert.equal(h?.question, "");
    assert.equal(h?.question_truncated, true);
  }));
