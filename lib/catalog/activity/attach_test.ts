import assert from "node:assert/strict";
import { join } from "node:path";
import { zstdCompressSync } from "node:zlib";
import {
  closeSharedSnapshots,
  createCodexExtractor,
  createOpenCodeExtractor,
  type ManifestEntry,
} from "../../message_search/mod.ts";
import { richOpenCodeSession, writeOpenCodeDb } from "../../../tests/helpers/fixtures/opencode.ts";
import { extractedModel } from "../../../tests/helpers/fixtures/external_model.ts";
import { rolloutRel, RolloutWriter } from "../../../tests/fixtures/codex_fixture.ts";
import { withTempDir } from "../../../tests/helpers/temp.ts";
import type { ExternalModel } from "../external_detail.ts";
import { attachActivity, withinReadRoot } from "./attach.ts";
import { ActivityCache } from "./cache.ts";

/** A real Codex rollout under `home` (`zst`: compressed), extracted by the real extractor. */
async function codexModel(home: string, o: { zst?: boolean } = {}): Promise<ExternalModel> {
  const start = Date.now() - 3_600_000;
  const w = new RolloutWriter("019a1111-0000-7000-8000-00000000a77a", start, true);
  w.meta({ cwd: "/w", cli_version: "0.137.0" });
  for (let i = 0; i < 20; i++) {
    w.user(`step ${i}`);
    w.assistant([`Doing ${i}.`], false, false);
    w.call("exec_command", { cmd: `echo ${i}` }, `Process exited with code 0\nOutput:\n${i}`);
  }
  const rel = rolloutRel(start, w.id) + (o.zst ? ".zst" : "");
  await Deno.mkdir(join(home, rel, ".."), { recursive: true });
  await Deno.writeFile(join(home, rel), o.zst ? zstdCompressSync(w.bytes()) : w.bytes());
  const ex = createCodexExtractor({ homes: [home] });
  const unit = (await ex.discover()).units[0]!;
  const out = await ex.extract(unit, null, { now: Date.now() });
  assert.equal(out.kind, "replace");
  if (out.kind !== "replace") throw new Error("unreachable");
  const entry = { source: "codex", source_gone: false, meta: out.meta } as ManifestEntry;
  return { entry, rows: out.records.map((rec) => ({ kind: "record", rec, active: true })) };
}

const toolsOf = (m: ExternalModel) =>
  m.rows.flatMap((
    r,
  ) => (r.kind === "record" ? r.tools ?? [] : r.kind === "tool_calls" ? r.tools : []));

Deno.test("attachActivity reads at most maxBytes per session: the head's calls show, the rest is reported", () =>
  withTempDir(async (home) => {
    const m = await codexModel(home);
    const full = await attachActivity(m, { cache: new ActivityCache() });
    assert.equal(full.activity?.state, "ok");
    assert.equal(toolsOf(full).length, 20);
    const size = (await Deno.stat(m.entry.meta.files[0]!)).size;
    const cut = await attachActivity(m, {
      cache: new ActivityCache(),
      maxBytes: Math.floor(size / 2),
    });
    assert.equal(cut.activity?.state, "partial");
    assert.deepEqual(cut.activity?.files.map((f) => f.state), ["truncated"]);
    assert.equal(cut.activity?.skipped.torn_tail, 1);
    const n = toolsOf(cut).length;
    assert.ok(n > 0 && n < 20, `${n} calls from the head`);
    // The prose skeleton is never cut: every record row is still there, in order.
    assert.deepEqual(
      cut.rows.flatMap((r) => (r.kind === "record" ? [r.rec.id] : [])),
      m.rows.flatMap((r) => (r.kind === "record" ? [r.rec.id] : [])),
    );
    const none = await attachActivity(m, { cache: new ActivityCache(), maxBytes: 0 });
    assert.equal(none.activity?.state, "partial");
    assert.equal(toolsOf(none).length, 0);
  }));

Deno.test("attachActivity: cached parses are reused until the file changes; zst read whole; refusals are reasons", () =>
  withTempDir(async (root) => {
    const m = await codexModel(join(root, "plain"));
    const cache = new ActivityCache();
    const a = await attachActivity(m, { cache });
    const b = await attachActivity(m, { cache });
    assert.equal(cache.size, 1);
    assert.equal(toolsOf(a)[0], toolsOf(b)[0], "the same parse object");
    await Deno.writeTextFile(m.entry.meta.files[0]!, "\n", { append: true });
    const c = await attachActivity(m, { cache });
    assert.notEqual(toolsOf(c)[0], toolsOf(a)[0], "a grown file is parsed again");
    assert.equal(cache.size, 2);

    const z = await codexModel(join(root, "zst"), { zst: true });
    const zr = await attachActivity(z, { cache });
    assert.equal(zr.activity?.state, "ok");
    assert.equal(toolsOf(zr).length, 20);
    await Deno.writeFile(z.entry.meta.files[0]!, new TextEncoder().encode("not zstd"));
    const bad = await attachActivity(z, { cache });
    assert.deepEqual(bad.activity?.files.map((f) => f.reason), ["corrupt"]);
    assert.equal(bad.activity?.state, "unavailable");

    // A hard link could name an inode outside the home: refused like the catalog refuses it.
    const path = m.entry.meta.files[0]!;
    await Deno.link(path, join(root, "twin.jsonl"));
    const h = await attachActivity(m, { cache });
    assert.deepEqual(h.activity?.files.map((f) => [f.state, f.reason]), [[
      "unavailable",
      "hardlinked",
    ]]);
    assert.equal(toolsOf(h).length, 0);
    assert.equal(h.rows.length, m.rows.length);

    const gone = await attachActivity({ ...m, entry: { ...m.entry, source_gone: true } });
    assert.equal(gone.activity?.state, "unavailable");
    assert.equal(gone.rows, m.rows);
    const native = { ...m, entry: { ...m.entry, source: "intendant" } } as ExternalModel;
    assert.equal(await attachActivity(native), native);
  }));

Deno.test("attachActivity says why a database source's detail has no tool calls (OpenCode)", () =>
  withTempDir(async (root) => {
    const data = join(root, "share", "opencode");
    const { written } = writeOpenCodeDb(data, [richOpenCodeSession("where is the cache", "here")]);
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, {
      snapshotDir: join(root, "state", "sqlite"),
    });
    try {
      const m = await extractedModel(ex, `opencode:${written[0]!.id}`);
      assert.ok(m.rows.length > 0, "the prose rows are there");
      const out = await attachActivity(m, { cache: new ActivityCache() });
      assert.equal(out.activity?.state, "unavailable");
      assert.match(out.activity?.reason ?? "", /database rows/);
      assert.deepEqual(out.rows, m.rows, "the prose rows are untouched");
    } finally {
      closeSharedSnapshots();
    }
  }));

Deno.test("withinReadRoot() contains a file in the granted read root that holds it, and nothing wider", () => {
  const f = {
    root: "/h/.gemini",
    rel: "tmp/p1/chats/session-1.json",
    shown: "tmp/p1/chats/session-1.json",
  };
  // The locked profile grants ~/.gemini/tmp, not ~/.gemini: the open starts there.
  assert.deepEqual(withinReadRoot("gemini", f), {
    ...f,
    root: "/h/.gemini/tmp",
    rel: "p1/chats/session-1.json",
  });
  const droid = { root: "/h/.factory", rel: "projects/x/s.jsonl", shown: "projects/x/s.jsonl" };
  assert.equal(withinReadRoot("droid", droid).root, "/h/.factory/projects");
  // A rule without read roots grants its whole home; a file under no read root is left as it
  // was (its open is then refused and says so), never widened.
  const codex = { root: "/h/.codex", rel: "sessions/2026/r.jsonl", shown: "sessions/2026/r.jsonl" };
  assert.deepEqual(withinReadRoot("codex", codex), codex);
  const stray = { root: "/h/.qwen", rel: "other/s.jsonl", shown: "other/s.jsonl" };
  assert.deepEqual(withinReadRoot("qwen", stray), stray);
  // A read root's name as a prefix of another directory is not that root.
  const near = { root: "/h/.gemini", rel: "tmpfoo/s.json", shown: "tmpfoo/s.json" };
  assert.deepEqual(withinReadRoot("gemini", near), near);
});
