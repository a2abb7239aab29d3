/**
 * The Claude Code extractor over its fixture home (cross-project subagent join, hardlink
 * dedupe, resume replays, rewind marks, meta), discovery refusals and bounds, stable ids
 * and locators, and incremental sweeps: append == full parse, torn tails, malformed
 * lines, rewinds and pointer moves falling back to a full re-parse.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  buildClaudeFixture,
  ccUuid,
  CLAUDE_FIXTURE_IDS as IDS,
  claudeFixturePaths,
  ClaudeWriter,
  msgId,
} from "../../../../tests/fixtures/claude_fixture.ts";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import { RECORD_TEXT_CAP_BYTES } from "../../record.ts";
import { hash16Of } from "../../locator.ts";
import { createClaudeExtractor } from "./claude.ts";
import { ClaudeDag } from "./claude_dag.ts";
import { emptyState, passLines } from "./claude_pass.ts";
import { LANE_WINDOW } from "./claude_lane.ts";
import {
  extractAll,
  fullView,
  seen,
  TestShard,
  withProjects,
  writeLines,
} from "./testing/claude_test_util.ts";

const key = (sid: string) => `claude-code:${sid}`;

async function withFixture(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "claude-fixture-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("fixture: full extraction yields the expected records; nothing never-indexed leaks", () =>
  withFixture(async (dir) => {
    const home = await buildClaudeFixture(dir);
    const { projects } = claudeFixturePaths(dir);
    const got = await extractAll(projects);
    assert.deepEqual([...got.keys()].sort(), Object.keys(home.expected).sort());
    for (const [k, want] of Object.entries(home.expected)) {
      const c = got.get(k)!;
      const have = seen(c.records, c.marks).map(({ role, text, active, subagent }) => ({
        role,
        text,
        superseded: !active,
        subagent,
      }));
      assert.deepEqual(have, want, k);
      for (const r of c.records) assert.ok(!r.text.includes(NEVER_INDEX_MARK), r.text);
    }
    // The Task tool_result copy of the subagent's report is never indexed from the parent.
    const s1 = got.get(key(IDS.S1))!;
    const report = s1.records.filter((r) => r.text.startsWith("Found 3 untranslated"));
    assert.deepEqual(report.map((r) => r.subagent), [true]);
  }));

Deno.test("fixture: discovery joins subagents across project dirs, dedupes hardlinks, refuses siblings", () =>
  withFixture(async (dir) => {
    await buildClaudeFixture(dir);
    const { projects, s1 } = claudeFixturePaths(dir);
    const d = await createClaudeExtractor({ projectRoots: [projects, join(dir, "absent")] })
      .discover();
    assert.deepEqual(d.skipped, { backup_sibling: 2, harness_agent: 1, hardlink_twin: 1 });
    const u1 = d.units.find((u) => u.key === key(IDS.S1))!;
    assert.equal(u1.files.length, 2);
    assert.deepEqual(u1.files[0], { path: s1, role: "main" });
    assert.equal(u1.files[1]!.role, "subagent:a4f1c2e9b7d3a0c5");
    assert.ok(!u1.files[1]!.path.startsWith(join(projects, "-home-dev-web-app", "")));
    const u5 = d.units.find((u) => u.key === key(IDS.S5))!;
    assert.deepEqual(u5.files.map((f) => f.role), ["subagent:a9e8d7c6b5a4f3e2"]);
    const u4 = d.units.find((u) => u.key === key(IDS.S4))!;
    assert.deepEqual(u4.files.map((f) => f.role), ["main", "subagent:5271c147"]);
    assert.equal(d.units.find((u) => u.key === key(IDS.S9)), undefined);
  }));

Deno.test("fixture: one rewind mark, meta, stable ids, locators and replay counts", () =>
  withFixture(async (dir) => {
    await buildClaudeFixture(dir);
    const { projects } = claudeFixturePaths(dir);
    const a = await extractAll(projects);
    const b = await extractAll(projects);
    const s1 = a.get(key(IDS.S1))!;
    assert.equal(s1.marks.length, 1);
    const mark = s1.marks[0]!;
    assert.equal(mark.kind, "record_ids");
    assert.equal(mark.after_order, s1.records.length);
    if (mark.kind === "record_ids") assert.equal(mark.ids.length, 2);
    assert.deepEqual(s1.meta, {
      project: "/home/dev/web.app",
      title: "Café menu fixes",
      parent_session_id: null,
      files: s1.meta.files,
    });
    assert.equal(a.get(key(IDS.S4))!.meta.title, "Legacy CLI refactor");
    assert.equal(a.get(key(IDS.S3))!.meta.title, "Start the API server on port 8080");
    assert.deepEqual(a.get(key(IDS.S2))!.skipped, { replayed_from_other_session: 2 });
    assert.deepEqual(a.get(key(IDS.S6))!.skipped, {}, "a replay of a missing session is kept");
    for (const [k, c] of a) {
      assert.deepEqual(c.records, b.get(k)!.records, `stable: ${k}`);
      assert.equal(new Set(c.records.map((r) => r.id)).size, c.records.length);
      for (const r of c.records) {
        assert.ok(r.locator.kind === "external_record_id");
        assert.equal(r.locator.record_id, r.id);
        assert.equal(r.locator.hash, hash16Of(r.text));
        assert.ok(!r.locator.file.startsWith("/") && r.locator.file.endsWith(".jsonl"));
      }
    }
    const sub = s1.records.find((r) => r.subagent)!;
    assert.match(sub.locator.kind === "external_record_id" ? sub.locator.file : "", /subagents/);
  }));

Deno.test("discovery refuses symlinks, FIFOs, directories named like transcripts and odd names; bounded", () =>
  withProjects(async (projects) => {
    const sid = IDS.S3;
    const real = await writeLines(projects, `-p/${sid}.jsonl`, []);
    await Deno.symlink(real, join(projects, "-p", `${IDS.S4}.jsonl`));
    await Deno.mkdir(join(projects, "-p", `${IDS.S5}.jsonl`));
    await new Deno.Command("mkfifo", { args: [join(projects, "-p", `${IDS.S6}.jsonl`)] }).output();
    await writeLines(projects, "-p/notes.jsonl", []);
    await Deno.symlink(join(projects, "-p"), join(projects, "-linked"));
    const d = await createClaudeExtractor({ projectRoots: [projects] }).discover();
    assert.deepEqual(d.units.map((u) => u.key), [key(sid)]);
    assert.deepEqual(d.skipped, { not_a_regular_file: 4, unexpected_name: 1 });
    const tight = await createClaudeExtractor({ projectRoots: [projects], maxDiscoveryEntries: 2 })
      .discover();
    assert.ok((tight.skipped.walk_truncated ?? 0) > 0, JSON.stringify(tight.skipped));
    assert.throws(() => createClaudeExtractor({ projectRoots: [], maxDiscoveryEntries: 0 }));
  }));

Deno.test("an old sidechain file joins once its first row is complete", () =>
  withProjects(async (projects) => {
    const path = join(projects, "-p", "agent-5271c147.jsonl");
    await writeLines(projects, `-p/${IDS.S4}.jsonl`, []);
    await Deno.writeTextFile(path, `{"parentUuid":null,"isSidechain":true,"sessionId":"${IDS.S4}`);
    const ex = createClaudeExtractor({ projectRoots: [projects] });
    let d = await ex.discover();
    assert.deepEqual(d.skipped, { sidechain_session_unknown: 1 });
    assert.equal(d.units[0]!.files.length, 1);
    await Deno.writeTextFile(path, `","type":"user"}\n`, { append: true });
    d = await ex.discover();
    assert.deepEqual(d.units[0]!.files.map((f) => f.role), ["main", "subagent:5271c147"]);
  }));

Deno.test("incremental: appends, torn tails and malformed lines equal a full parse", () =>
  withFixture(async (dir) => {
    const home = await buildClaudeFixture(dir);
    const { projects, s3 } = claudeFixturePaths(dir);
    const k = home.appendTarget.key;
    const shard = new TestShard();
    await shard.sweep(projects, k);
    assert.equal((await shard.sweep(projects, k)).kind, "unchanged");
    const line = home.appendTarget.userLine("follow-up: 漢字 café", 1);
    const f = await Deno.open(s3, { append: true });
    const bytes = new TextEncoder().encode(line);
    await f.write(bytes.subarray(0, 40));
    const torn = await shard.sweep(projects, k);
    assert.equal(torn.kind, "append");
    assert.equal(torn.kind === "append" ? torn.records.length : -1, 0);
    await f.write(bytes.subarray(40));
    await f.write(new TextEncoder().encode("{this is not json\n[1]\n"));
    await f.write(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
    f.close();
    const o = await shard.sweep(projects, k);
    assert.equal(o.kind, "append");
    if (o.kind === "append") {
      assert.deepEqual(o.records.map((r) => r.text), ["follow-up: 漢字 café"]);
      assert.deepEqual(o.skipped, { malformed_line: 3 });
    }
    // The assistant answers (a thinking/text streaming split), a turn ends, a pointer moves.
    let t = Date.now() - 30_000;
    const w = new ClaudeWriter({
      sessionId: IDS.S3,
      cwd: "/home/dev/api",
      version: "2.1.150",
      clock: () => (t += 1000),
      seed: "S3:test-append",
    });
    w.tip = JSON.parse(line).uuid;
    const m = msgId("S3:append");
    w.assistant([{ type: "thinking", thinking: "x", signature: "s" }], m);
    w.assistant([{ type: "text", text: "Answer after the append." }], m);
    w.system("turn_duration", { durationMs: 10 });
    w.meta({ type: "last-prompt", leafUuid: w.tip, sessionId: IDS.S3 });
    w.user("second append"); // the next prompt chains onto the turn_duration row
    await Deno.writeTextFile(s3, w.text(), { append: true });
    await shard.sweep(projects, k);
    assert.deepEqual(shard.kinds, ["replace", "unchanged", "append", "append", "append"]);
    assert.deepEqual(shard.view(), await fullView(projects, k));
    assert.equal(shard.view().length, 5);
  }));

Deno.test("incremental: a rewind, a moved pointer and a replay burst fall back to a full re-parse", () =>
  withProjects(async (projects) => {
    const sid = IDS.S1;
    let t = Date.now() - 600_000;
    const w = new ClaudeWriter({
      sessionId: sid,
      cwd: "/w",
      version: "2.1.150",
      clock: () => (t += 1000),
    });
    const rel = `-w/${sid}.jsonl`;
    const path = await writeLines(projects, rel, []);
    const flush = async () => {
      await Deno.writeTextFile(path, w.text());
    };
    const shard = new TestShard();
    w.user("q1", {}, null);
    const a1 = w.assistant([{ type: "text", text: "a1" }], msgId("1"));
    await flush();
    await shard.sweep(projects, key(sid));
    w.user("q2");
    const a2 = w.assistant([{ type: "text", text: "a2" }], msgId("2"));
    await flush();
    await shard.sweep(projects, key(sid));
    w.user("q2 rewritten", {}, a1); // a rewind
    w.assistant([{ type: "text", text: "a2'" }], msgId("3"));
    await flush();
    const rewind = await shard.sweep(projects, key(sid));
    assert.equal(rewind.kind, "replace");
    assert.equal(rewind.kind === "replace" ? rewind.cursors[path]!.rewrite_epoch : -1, 1);
    assert.deepEqual(
      shard.view().filter((r) => !r.active).map((r) => r.text).sort(),
      ["a2", "q2"],
    );
    // A pointer written just before the row it names is judged after the increment.
    const nextUuid = ccUuid(`${sid}::${w.lines.length}`);
    w.meta({ type: "last-prompt", leafUuid: nextUuid, sessionId: sid });
    assert.equal(w.user("q3"), nextUuid);
    await flush();
    assert.equal((await shard.sweep(projects, key(sid))).kind, "append");
    w.meta({ type: "last-prompt", leafUuid: a2, sessionId: sid }); // back to the old branch
    await flush();
    assert.equal((await shard.sweep(projects, key(sid))).kind, "replace");
    assert.deepEqual(
      shard.view().filter((r) => !r.active).map((r) => r.text).sort(),
      ["a2'", "q2 rewritten", "q3"],
    );
    // A replay of rows still in the carried window is deduped by the append itself…
    w.lines.push(...w.lines.slice(2, 4));
    await flush();
    assert.equal((await shard.sweep(projects, key(sid))).kind, "append");
    assert.equal(shard.view().length, 7, "replayed copies are not indexed twice");
    // …and a burst replaying rows older than the window re-parses.
    for (let i = 0; i < LANE_WINDOW; i++) w.system("turn_duration", { durationMs: i });
    await flush();
    assert.equal((await shard.sweep(projects, key(sid))).kind, "append");
    w.lines.push(...w.lines.slice(0, 2));
    await flush();
    assert.equal((await shard.sweep(projects, key(sid))).kind, "replace");
    assert.equal(shard.view().length, 7);
    assert.deepEqual(shard.view(), await fullView(projects, key(sid)));
  }));

Deno.test("incremental: subagent files append, new ones join, all gone is gone", () =>
  withFixture(async (dir) => {
    await buildClaudeFixture(dir);
    const { projects, s1 } = claudeFixturePaths(dir);
    const k = key(IDS.S1);
    const shard = new TestShard();
    await shard.sweep(projects, k);
    let t = Date.now() - 1000;
    const sw = new ClaudeWriter({
      sessionId: IDS.S1,
      cwd: "/w",
      version: "2.1.150",
      clock: () => (t += 1),
      agentId: "b0b0b0b0b0b0b0b0",
    });
    sw.user("second subagent prompt", {}, null);
    sw.assistant([{ type: "text", text: "second subagent report" }], msgId("sub2"));
    const subPath = await writeLines(
      projects,
      `-x/${IDS.S1}/subagents/agent-b0b0b0b0b0b0b0b0.jsonl`,
      sw.lines,
    );
    const o = await shard.sweep(projects, k);
    assert.equal(o.kind, "append");
    assert.deepEqual(shard.view(), await fullView(projects, k));
    // A copy of a recent row is deduped in place; a row hanging off nothing known re-parses.
    await Deno.writeTextFile(subPath, sw.lines[0] + "\n", { append: true });
    const dup = await shard.sweep(projects, k);
    assert.equal(dup.kind, "append");
    assert.deepEqual(dup.kind === "append" ? dup.skipped : null, { duplicate_uuid: 1 });
    sw.tip = "not-a-known-row";
    sw.user("orphan continuation");
    await Deno.writeTextFile(subPath, sw.lines.at(-1) + "\n", { append: true });
    assert.equal((await shard.sweep(projects, k)).kind, "replace");
    assert.deepEqual(shard.view(), await fullView(projects, k));
    // The parent continues after its stop hook row: still an append.
    const last = (await Deno.readTextFile(s1)).trim().split("\n").map((l) => JSON.parse(l))
      .filter((r) => r.uuid).at(-1);
    const w = new ClaudeWriter({
      sessionId: IDS.S1,
      cwd: "/home/dev/web.app",
      version: "2.1.150",
      clock: () => (t += 1),
      seed: "S1:test-more",
    });
    w.tip = last.uuid;
    w.user("one more thing");
    await Deno.writeTextFile(s1, w.text(), { append: true });
    assert.equal((await shard.sweep(projects, k)).kind, "append");
    assert.deepEqual(shard.view(), await fullView(projects, k));
    assert.ok(shard.view().some((r) => r.text === "one more thing" && r.active));
    const ex = createClaudeExtractor({ projectRoots: [projects] });
    const unit = (await ex.discover()).units.find((u) => u.key === k)!;
    for (const f of unit.files) await Deno.remove(f.path);
    assert.equal((await ex.extract(unit, shard.prior, { now: Date.now() })).kind, "gone");
  }));

Deno.test("long prose is capped on a character boundary and flagged", () =>
  withProjects(async (projects) => {
    const sid = IDS.S3;
    let t = Date.now() - 1000;
    const w = new ClaudeWriter({
      sessionId: sid,
      cwd: "/w",
      version: "2.1.150",
      clock: () => (t += 1),
    });
    w.user("é".repeat(RECORD_TEXT_CAP_BYTES), {}, null);
    await writeLines(projects, `-w/${sid}.jsonl`, [...w.lines, '{"type":"user","message":{}}']);
    const c = (await extractAll(projects)).get(key(sid))!;
    assert.equal(c.records[0]!.truncated, true);
    assert.equal(new TextEncoder().encode(c.records[0]!.text).length, RECORD_TEXT_CAP_BYTES);
  }));

Deno.test("oversized lines reported by the reader are counted, the rest still read", () => {
  const line = JSON.stringify({
    type: "user",
    uuid: "u-1",
    parentUuid: null,
    sessionId: "s",
    timestamp: "2026-05-01T10:00:00.000Z",
    message: { role: "user", content: "kept" },
  });
  const bytes = new TextEncoder().encode(line + "\n");
  const p = {
    sessionId: "s",
    corpus: new Set<string>(),
    records: [],
    nextOrder: 0,
    skipped: {},
    state: emptyState(),
    full: { dag: new ClaudeDag(), seen: new Set<string>(), mainProse: [] },
    lane: null,
    pendingLeaf: null,
    needFull: false,
  };
  passLines(p, {
    baseOffset: 0,
    firstLineNo: 2,
    bytes,
    lines: [{ start: 0, end: bytes.length - 1, lineNo: 2 }],
    cursor: {} as never,
    oversizedLines: [{ lineNo: 1, bytes: 1 << 27 }],
    complete: true,
  }, { path: "/p/x.jsonl", rel: "x.jsonl", main: true });
  assert.deepEqual(p.skipped, { oversized_line: 1 });
  assert.deepEqual(p.records.map((r: { text: string }) => r.text), ["kept"]);
});
