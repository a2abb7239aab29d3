/**
 * Codex discovery: dated and archived trees, compressed rollouts, thread ids from file
 * names (and the session_meta fallback), plain/zst twins, one thread in two homes,
 * refusals of non-regular entries, missing homes and the walk bound.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { zstdCompressSync } from "node:zlib";
import { createCodexExtractor } from "./codex.ts";
import {
  meta,
  rolloutPath,
  THREAD,
  user,
  withTemp,
  writeRollout,
} from "./testing/codex_test_util.ts";

const OTHER = "019ad7c2-2a00-7b3e-8c1d-6e3f9a5b7c21";
const body = () => meta() + user("hello");
const zst = (text: string) => zstdCompressSync(new TextEncoder().encode(text));

Deno.test("finds dated, archived and compressed rollouts; the key is the file name's thread id", async () => {
  await withTemp(async (home) => {
    await writeRollout(rolloutPath(home), body());
    await writeRollout(rolloutPath(home, OTHER, true) + ".zst", zst(body()));
    await writeRollout(join(home, "sessions", "2026", "05", "18", "notes.txt"), "x");
    await writeRollout(join(home, "session_index.jsonl"), "{}\n");
    const d = await createCodexExtractor({ homes: [home] }).discover();
    assert.deepEqual(d.skipped, {});
    assert.deepEqual(d.units.map((u) => [u.key, u.files[0]!.role, u.hint]), [
      [`codex:${THREAD}`, "rollout", {
        home,
        rel: `sessions/2026/05/18/rollout-2026-05-18T11-14-03-${THREAD}.jsonl`,
      }],
      [`codex:${OTHER}`, "rollout_zst", {
        home,
        rel: `archived_sessions/rollout-2026-05-18T11-14-03-${OTHER}.jsonl.zst`,
      }],
    ]);
    assert.ok(d.units.every((u) => u.source === "codex" && u.key === `codex:${u.sessionId}`));
  });
});

Deno.test("x.jsonl next to x.jsonl.zst: the plain file wins and the compressed twin is counted", async () => {
  await withTemp(async (home) => {
    await writeRollout(rolloutPath(home), body());
    await writeRollout(rolloutPath(home) + ".zst", zst(body()));
    const d = await createCodexExtractor({ homes: [home] }).discover();
    assert.deepEqual(d.units.map((u) => u.files[0]!.path), [rolloutPath(home)]);
    assert.deepEqual(d.skipped, { zst_shadowed_by_plain: 1 });
  });
});

Deno.test("one thread in two homes: plain before compressed, then the newest mtime; the other is counted", async () => {
  await withTemp(async (root) => {
    const [a, b, c] = ["a", "b", "c"].map((n) => join(root, n)) as [string, string, string];
    await writeRollout(rolloutPath(a), body());
    await writeRollout(rolloutPath(b, THREAD, true), body());
    await Deno.utime(rolloutPath(a), 1_000, 1_000);
    await writeRollout(rolloutPath(c) + ".zst", zst(body()));
    for (const homes of [[a, b, c], [c, b, a]]) {
      const d = await createCodexExtractor({ homes }).discover();
      assert.deepEqual(d.units.map((u) => u.files[0]!.path), [rolloutPath(b, THREAD, true)]);
      assert.deepEqual(d.skipped, { duplicate_thread: 2 });
    }
    await Deno.remove(rolloutPath(b, THREAD, true));
    const d = await createCodexExtractor({ homes: [c, a] }).discover();
    assert.deepEqual(d.units.map((u) => u.files[0]!.path), [rolloutPath(a)]);
  });
});

Deno.test("refuses non-regular rollout entries and never follows a symlinked date dir", async () => {
  await withTemp(async (home) => {
    const real = join(home, "elsewhere", `rollout-2026-05-18T11-14-03-${OTHER}.jsonl`);
    await writeRollout(real, body());
    await writeRollout(rolloutPath(home), body());
    const day = join(home, "sessions", "2026", "05", "18");
    await Deno.symlink(real, join(day, `rollout-2026-05-18T11-15-00-${OTHER}.jsonl`));
    await Deno.mkdir(join(day, `rollout-2026-05-18T11-16-00-${OTHER}.jsonl`));
    const fifo = join(day, `rollout-2026-05-18T11-17-00-${OTHER}.jsonl`);
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(mk.success);
    await Deno.symlink(join(home, "elsewhere"), join(home, "sessions", "2026", "05", "19"));
    const d = await createCodexExtractor({ homes: [home] }).discover();
    assert.deepEqual(d.units.map((u) => u.key), [`codex:${THREAD}`]);
    assert.deepEqual(d.skipped, { not_a_regular_file: 3, symlinked_dir: 1 });
  });
});

Deno.test("a missing home or tree is not present: no units, no skips, no error", async () => {
  await withTemp(async (root) => {
    await Deno.mkdir(join(root, "empty"));
    await Deno.writeTextFile(join(root, "file"), "");
    const d = await createCodexExtractor({
      homes: [join(root, "nope"), join(root, "empty"), join(root, "file")],
    }).discover();
    assert.deepEqual(d, { units: [], skipped: {} });
  });
});

Deno.test("the walk is bounded per home and a cut walk is counted", async () => {
  await withTemp(async (home) => {
    for (let i = 0; i < 30; i++) {
      const id = `019ad7c2-1f00-7a3e-9b1c-${String(i).padStart(12, "0")}`;
      await writeRollout(rolloutPath(home, id), body());
    }
    const cut = await createCodexExtractor({ homes: [home] }, { maxWalkEntries: 12 }).discover();
    assert.ok(cut.units.length < 30);
    assert.deepEqual(cut.skipped, { walk_truncated: 1 });
    const all = await createCodexExtractor({ homes: [home] }).discover();
    assert.equal(all.units.length, 30);
    assert.throws(() => createCodexExtractor({ homes: [] }, { maxWalkEntries: 0 }), RangeError);
  });
});

Deno.test("no UUID in the name: the thread id comes from session_meta id, then session_id", async () => {
  await withTemp(async (home) => {
    const day = join(home, "sessions", "2026", "05", "18");
    await writeRollout(join(day, "rollout-a.jsonl"), meta({ id: THREAD.toUpperCase() }));
    const sid = JSON.stringify({ type: "session_meta", payload: { session_id: "s-1" } }) + "\n";
    await writeRollout(join(day, "rollout-b.jsonl"), sid);
    await writeRollout(join(day, "rollout-c.jsonl"), "{torn");
    await writeRollout(join(day, "rollout-d.jsonl.zst"), zst(body()));
    const d = await createCodexExtractor({ homes: [home] }).discover();
    assert.deepEqual(d.units.map((u) => u.key), [`codex:${THREAD}`, "codex:s-1"]);
    assert.deepEqual(d.skipped, { no_thread_id: 2 });
  });
});
