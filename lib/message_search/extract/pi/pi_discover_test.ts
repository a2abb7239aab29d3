/**
 * Pi discovery: missing roots are silent; symlinks, FIFOs, transcript-named directories
 * and loose files are refused and counted; headers are validated (invalid, pending,
 * id-less with a file-name uuid fallback); duplicate ids keep the first; the walk caps
 * count what they cut; dir names with spaces and NFD accents are used verbatim.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { piSessionDirName } from "../../../../tests/fixtures/pi_fixture.ts";
import { createPiExtractor } from "./pi.ts";
import { liveSession, withDir } from "./testing/pi_test_helpers.ts";

const UUID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const header = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "session",
    version: 3,
    id: UUID,
    timestamp: "2026-05-19T10:00:00.000Z",
    cwd: "/w",
    ...extra,
  });

async function sessionDir(agentDir: string, cwd = "/w"): Promise<string> {
  const d = join(agentDir, "sessions", piSessionDirName(cwd));
  await Deno.mkdir(d, { recursive: true });
  return d;
}

Deno.test("discover() treats a missing agent dir or sessions/ as not present", async () => {
  await withDir(async (dir) => {
    const missing = await createPiExtractor({ agentDirs: [join(dir, "nope"), dir] }).discover();
    assert.deepEqual(missing, { units: [], skipped: {} });
    await Deno.writeTextFile(join(dir, "file"), "x");
    const underFile = await createPiExtractor({ agentDirs: [join(dir, "file")] }).discover();
    assert.deepEqual(underFile, { units: [], skipped: {} });
  });
});

Deno.test("discover() refuses non-regular files and non-directories, counted", async () => {
  await withDir(async (dir) => {
    const { path } = await liveSession(dir, 1);
    const d = join(path, "..");
    await Deno.symlink(path, join(d, `2026-05-19T10-00-00-000Z_${UUID}.jsonl`));
    await Deno.mkdir(join(d, "2026-05-19T10-00-01-000Z_dir.jsonl"));
    await Deno.writeTextFile(join(d, "notes.txt"), "ignored, not a transcript name");
    await Deno.writeTextFile(join(dir, "sessions", "loose.jsonl"), header() + "\n");
    await Deno.symlink(d, join(dir, "sessions", "--linked--"));
    const fifo = await new Deno.Command("mkfifo", {
      args: [join(d, "2026-05-19T10-00-02-000Z_fifo.jsonl")],
    })
      .output().then((o) => o.success, () => false);
    const { units, skipped } = await createPiExtractor({ agentDirs: [dir] }).discover();
    assert.equal(units.length, 1);
    assert.deepEqual(skipped, {
      not_a_regular_file: fifo ? 3 : 2,
      not_a_session_dir: 1,
      symlink: 1,
    });
    const other = join(dir, "other");
    await Deno.mkdir(other);
    await Deno.symlink(join(dir, "sessions"), join(other, "sessions"));
    assert.deepEqual(await createPiExtractor({ agentDirs: [other] }).discover(), {
      units: [],
      skipped: { symlink: 1 },
    });
  });
});

Deno.test("discover() validates line 1 and falls back to the file-name uuid", async () => {
  await withDir(async (dir) => {
    const d = await sessionDir(dir);
    const write = (name: string, text: string) => Deno.writeTextFile(join(d, name), text);
    await write(`2026-05-19T10-00-00-000Z_${UUID}.jsonl`, header({ id: undefined }) + "\n");
    await write("2026-05-19T10-00-01-000Z_no-uuid.jsonl", header({ id: 42 }) + "\n");
    await write("2026-05-19T10-00-02-000Z_bad.jsonl", '{"type":"message","id":"ab12cd34"}\n');
    await write("2026-05-19T10-00-03-000Z_torn.jsonl", header().slice(0, 20));
    await write("2026-05-19T10-00-04-000Z_empty.jsonl", "");
    await write("2026-05-19T10-00-05-000Z_json.jsonl", "not json\n");
    const { units, skipped } = await createPiExtractor({ agentDirs: [dir] }).discover();
    assert.deepEqual(units.map((u) => u.key), [`pi:${UUID}`]);
    assert.deepEqual(skipped, { header_without_id: 1, header_invalid: 2, header_pending: 2 });
    const o = await createPiExtractor({ agentDirs: [dir] }).extract(units[0]!, null, {
      now: Date.now(),
    });
    assert.ok(
      o.kind === "replace" && o.skipped.header_changed === undefined,
      "fallback id accepted on extract",
    );
  });
});

Deno.test("discover() keeps the first of two files claiming one session id", async () => {
  await withDir(async (dir) => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    await liveSession(a, 1);
    await liveSession(b, 1);
    const { units, skipped } = await createPiExtractor({ agentDirs: [a, b, a] }).discover();
    assert.equal(units.length, 1);
    assert.ok(units[0]!.files[0]!.path.startsWith(a));
    assert.deepEqual(skipped, { duplicate_session_id: 1 });
  });
});

Deno.test("discover() caps directories and files, newest files first, counting the cut", async () => {
  await withDir(async (dir) => {
    for (const cwd of ["/a", "/b", "/c"]) await sessionDir(dir, cwd);
    const d = await sessionDir(dir, "/a");
    for (const [i, id] of ["1", "2", "3"].entries()) {
      const uuid = `0000000${id}-0000-4000-8000-000000000000`;
      await Deno.writeTextFile(
        join(d, `2026-05-1${i}T00-00-00-000Z_${uuid}.jsonl`),
        header({ id: uuid }) + "\n",
      );
    }
    const ex = createPiExtractor({ agentDirs: [dir] }, { limits: { maxDirs: 1, maxFiles: 2 } });
    const { units, skipped } = await ex.discover();
    assert.deepEqual(units.map((u) => u.sessionId), [
      "00000003-0000-4000-8000-000000000000",
      "00000002-0000-4000-8000-000000000000",
    ]);
    assert.deepEqual(skipped, { walk_truncated: 3 });
  });
});

Deno.test("discover() keeps dir names verbatim (spaces, NFD) and re-reads changed headers", async () => {
  await withDir(async (dir) => {
    const cwd = "/home/dev/cafe\u0301 ☕ x";
    const d = await sessionDir(dir, cwd);
    assert.equal(piSessionDirName(cwd), "--home-dev-cafe\u0301 ☕ x--");
    const path = join(d, `2026-05-19T10-00-00-000Z_${UUID}.jsonl`);
    await Deno.writeTextFile(path, header({ cwd }) + "\n");
    const ex = createPiExtractor({ agentDirs: [dir] });
    const first = await ex.discover();
    assert.equal(
      first.units[0]!.hint?.rel,
      `sessions/--home-dev-cafe\u0301 ☕ x--/2026-05-19T10-00-00-000Z_${UUID}.jsonl`,
    );
    assert.deepEqual(await ex.discover(), first, "cached header, same answer");
    const other = "9f8e7d6c-5b4a-4938-8271-605f4e3d2c1b";
    await Deno.writeTextFile(path, header({ id: other, cwd: "/home/dev/other" }) + "\n");
    assert.equal((await ex.discover()).units[0]!.key, `pi:${other}`);
  });
});
