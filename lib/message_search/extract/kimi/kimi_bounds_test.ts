/**
 * Kimi extractor bounds and discovery: every fail-closed bound (small injected limits
 * where the spec sizes would be slow), retraction of an already published session,
 * no recount while blocked, the newest-N selection, the directory-entry budget, refusals
 * of non-regular files, nested agent dirs and hermetic missing homes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createKimiExtractor,
  KIMI_DEFAULT_LIMITS,
  KIMI_NEWEST_SESSIONS,
  KIMI_SESSION_MAX_AGENTS,
  KIMI_SESSION_MAX_BYTES,
  KIMI_SESSION_MAX_RECORDS,
  KIMI_STATE_MAX_BYTES,
  KIMI_WIRE_MAX_BYTES,
  KIMI_WIRE_MAX_RECORD_BYTES,
  type KimiLimits,
  resolveKimiLimits,
} from "./kimi.ts";
import {
  content,
  meta,
  msg,
  reply,
  Shard,
  unitOf,
  withTemp,
  writeSession,
} from "./testing/kimi_test_util.ts";

const NOW = 1_790_000_000_000;
const sid = (n: number) => `session_00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const userLine = (text: string, t = 1) => msg("user", text, { kind: "user" }, t);

/** One session with a main wire; returns the extractor, its unit and the wire path. */
async function oneSession(
  home: string,
  lines: string[],
  limits: Partial<KimiLimits> = {},
  more = {},
) {
  const dir = await writeSession(home, {
    id: sid(1),
    wires: { "agents/main/wire.jsonl": lines, ...more },
  });
  const ex = createKimiExtractor({ homes: [home] }, { limits });
  return {
    ex,
    dir,
    wire: join(dir, "agents/main/wire.jsonl"),
    unit: await unitOf(ex, `kimi:${sid(1)}`),
  };
}

Deno.test("the spec bounds are the defaults; a bad limit is a RangeError", () => {
  assert.deepEqual(resolveKimiLimits(), {
    maxStateBytes: KIMI_STATE_MAX_BYTES,
    maxWireBytes: KIMI_WIRE_MAX_BYTES,
    maxRecordBytes: KIMI_WIRE_MAX_RECORD_BYTES,
    maxSessionBytes: KIMI_SESSION_MAX_BYTES,
    maxSessionRecords: KIMI_SESSION_MAX_RECORDS,
    maxAgents: KIMI_SESSION_MAX_AGENTS,
    maxSessions: KIMI_NEWEST_SESSIONS,
    maxDirEntries: KIMI_DEFAULT_LIMITS.maxDirEntries,
  });
  assert.equal(KIMI_STATE_MAX_BYTES, 2 * 1024 * 1024);
  assert.equal(KIMI_WIRE_MAX_BYTES, 64 * 1024 * 1024);
  assert.equal(KIMI_WIRE_MAX_RECORD_BYTES, 2 * 1024 * 1024);
  assert.equal(KIMI_SESSION_MAX_BYTES, 128 * 1024 * 1024);
  assert.equal(KIMI_SESSION_MAX_RECORDS, 200_000);
  assert.equal(KIMI_SESSION_MAX_AGENTS, 256);
  assert.equal(KIMI_NEWEST_SESSIONS, 2_000);
  assert.throws(() => resolveKimiLimits({ maxAgents: 0 }), RangeError);
  assert.throws(() => resolveKimiLimits({ maxWireBytes: 1.5 }), RangeError);
});

Deno.test("a record over the cap blocks the whole session; a published one is retracted, counted once", () =>
  withTemp(async (home) => {
    const { ex, unit, wire } = await oneSession(home, [meta(), userLine("kept?")], {
      maxRecordBytes: 200,
    });
    const shard = new Shard();
    shard.apply(await ex.extract(unit, null, { now: NOW }));
    assert.equal(shard.records.length, 1);
    await Deno.writeTextFile(
      wire,
      userLine("x".repeat(300), 2) + "\n" + userLine("after", 3) + "\n",
      {
        append: true,
      },
    );
    const out = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(out.kind, "replace");
    assert.deepEqual(out.records, []);
    assert.equal(out.skipped.oversized_record, 1);
    assert.deepEqual(out.state, { v: 1, blocked: "oversized_record", title: null, times: {} });
    shard.apply(out);
    assert.equal(
      await ex.extract(unit, shard.prior, { now: NOW }).then((o) => o.kind),
      "unchanged",
    );
    await Deno.writeTextFile(wire, userLine("later", 4) + "\n", { append: true });
    const again = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(again.kind, "append");
    assert.deepEqual([again.records, again.skipped], [[], {}]);
  }));

Deno.test("a wire over the size cap is refused before reading and counted in discovery", () =>
  withTemp(async (home) => {
    const lines = [meta(), userLine("a"), userLine("b".repeat(500))];
    const { ex, unit } = await oneSession(home, lines, { maxWireBytes: 300 });
    assert.equal(unit.hint?.blocked, "oversized_wire");
    assert.equal((await ex.discover()).skipped.oversized_wire, 1);
    const out = content(await ex.extract(unit, null, { now: NOW }));
    assert.deepEqual([out.kind, out.records, out.skipped], ["replace", [], { oversized_wire: 1 }]);
    // Stub cursors: an idle blocked session classifies unchanged without reading.
    const prior = { generations: [], cursors: out.cursors, state: out.state, records: 0 };
    assert.equal((await ex.extract(unit, prior, { now: NOW })).kind, "unchanged");
  }));

Deno.test("session-wide bounds: total bytes, wire records and agent count", () =>
  withTemp(async (home) => {
    const sub = { "agents/agent-0/wire.jsonl": [meta(), ...reply("s1", "sub")] };
    const lines = [meta(), userLine("a"), userLine("b")];
    const bytes = await oneSession(join(home, "1"), lines, { maxSessionBytes: 400 }, sub);
    assert.equal(bytes.unit.hint?.blocked, "oversized_session");
    const recs = await oneSession(join(home, "2"), lines, { maxSessionRecords: 6 }, sub);
    const out = content(await recs.ex.extract(recs.unit, null, { now: NOW }));
    assert.deepEqual([out.records, out.skipped], [[], { too_many_wire_records: 1 }]);
    const agents = await oneSession(join(home, "3"), lines, { maxAgents: 1 }, sub);
    assert.equal(agents.unit.hint?.blocked, "too_many_agents");
    assert.deepEqual(content(await agents.ex.extract(agents.unit, null, { now: NOW })).records, []);
    const ok = await oneSession(
      join(home, "4"),
      lines,
      { maxSessionRecords: 7, maxAgents: 2 },
      sub,
    );
    assert.equal(content(await ok.ex.extract(ok.unit, null, { now: NOW })).records.length, 3);
  }));

Deno.test("an oversized state.json blocks the session until it shrinks", () =>
  withTemp(async (home) => {
    const { ex, unit, dir, wire } = await oneSession(home, [meta(), userLine("hello")], {
      maxStateBytes: 100,
    });
    await Deno.writeTextFile(join(dir, "state.json"), JSON.stringify({ title: "t".repeat(200) }));
    const shard = new Shard();
    const out = content(await ex.extract(unit, null, { now: NOW }));
    assert.deepEqual([out.records, out.skipped], [[], { oversized_state_json: 1 }]);
    shard.apply(out);
    await Deno.writeTextFile(
      join(dir, "state.json"),
      JSON.stringify({ title: "Short", cwd: "/p" }),
    );
    await Deno.writeTextFile(wire, userLine("again", 2) + "\n", { append: true });
    const back = content(await ex.extract(unit, shard.prior, { now: NOW }));
    assert.equal(back.kind, "replace");
    assert.deepEqual(back.records.map((r) => r.text), ["hello", "again"]);
    assert.deepEqual([back.meta.title, back.meta.project], ["Short", "/p"]);
  }));

Deno.test("discovery keeps only the newest sessions (state.json / dir / wire mtime) and counts the rest", () =>
  withTemp(async (home) => {
    for (let n = 1; n <= 5; n++) {
      const dir = await writeSession(home, {
        id: sid(n),
        bucket: `wd_p${n % 2}_0123456789ab`,
        wires: { "agents/main/wire.jsonl": [meta(), userLine(`s${n}`)] },
        state: { id: sid(n), version: 2 },
      });
      const t = new Date(NOW - (10 - n) * 60_000);
      for (const p of [join(dir, "agents/main/wire.jsonl"), join(dir, "state.json"), dir]) {
        await Deno.utime(p, t, t);
      }
    }
    const ex = createKimiExtractor({ homes: [home] }, { limits: { maxSessions: 3 } });
    const d = await ex.discover();
    assert.deepEqual(d.units.map((u) => u.sessionId), [sid(5), sid(4), sid(3)]);
    assert.deepEqual(d.skipped, { beyond_newest_sessions: 2 });
  }));

Deno.test("the directory-entry budget cuts discovery and says so", () =>
  withTemp(async (home) => {
    for (let n = 1; n <= 4; n++) {
      await writeSession(home, { id: sid(n), wires: { "agents/main/wire.jsonl": [meta()] } });
    }
    const ex = createKimiExtractor({ homes: [home] }, { limits: { maxDirEntries: 3 } });
    const d = await ex.discover();
    assert.equal(d.units.length, 2);
    assert.equal(d.skipped.walk_truncated, 1);
  }));

Deno.test("discovery refuses symlinks, FIFOs and dirs named wire.jsonl; missing homes are not present", () =>
  withTemp(async (root) => {
    const home = join(root, "home");
    const okDir = await writeSession(home, {
      id: sid(1),
      wires: {
        "agents/main/wire.jsonl": [meta(), userLine("real")],
        "agents/main/agent-1/wire.jsonl": [meta(), ...reply("s1", "nested")],
        "agents/main/plans/wire.jsonl": [meta(), userLine("plans are not agents")],
      },
    });
    await Deno.symlink(join(okDir, "agents/main/wire.jsonl"), join(okDir, "wire.jsonl"));
    await Deno.mkdir(join(okDir, "agents/agent-2/wire.jsonl"), { recursive: true });
    await Deno.mkdir(join(okDir, "agents/agent-3"), { recursive: true });
    await new Deno.Command("mkfifo", { args: [join(okDir, "agents/agent-3/wire.jsonl")] }).output();
    await Deno.symlink(okDir, join(home, "sessions/wd_proj_0123456789ab", sid(2)));
    await Deno.mkdir(join(home, "sessions/wd_proj_0123456789ab/.hidden"));
    // A second home holding the same session id (a staged lease copy) yields it once.
    // The newest copy wins; this one is older.
    const copy = await writeSession(join(root, "home2"), {
      id: sid(1),
      wires: { "agents/main/wire.jsonl": [meta()] },
    });
    const old = new Date(NOW - 86_400_000);
    for (const p of [join(copy, "agents/main/wire.jsonl"), copy]) await Deno.utime(p, old, old);
    const ex = createKimiExtractor({
      homes: [home, join(root, "nope"), home, join(root, "home2")],
    });
    const d = await ex.discover();
    assert.deepEqual(d.units.map((u) => u.files.map((f) => f.role)), [[
      "agent:main",
      "agent:main/agent-1",
    ]]);
    assert.deepEqual(d.skipped, {
      not_a_regular_file: 3,
      not_a_directory: 1,
      bad_session_name: 1,
      duplicate_session_id: 1,
    });
    const out = content(await ex.extract(d.units[0]!, null, { now: NOW }));
    assert.deepEqual(out.records.map((r) => [r.id, r.subagent]), [
      ["main:L2", false],
      ["main/agent-1:L3", true],
    ]);
  }));

Deno.test("a removed sub-agent wire re-parses without it; all wires gone is gone", () =>
  withTemp(async (home) => {
    const sub = { "agents/agent-0/wire.jsonl": [meta(), ...reply("s1", "sub", 5)] };
    const { ex, dir, unit } = await oneSession(home, [meta(), userLine("main")], {}, sub);
    const shard = new Shard();
    shard.apply(await ex.extract(unit, null, { now: NOW }));
    assert.equal(shard.records.length, 2);
    await Deno.remove(join(dir, "agents/agent-0"), { recursive: true });
    const after = content(await ex.extract(await unitOf(ex, unit.key), shard.prior, { now: NOW }));
    assert.deepEqual([after.kind, after.records.map((r) => r.text)], ["replace", ["main"]]);
    await Deno.remove(join(dir, "agents"), { recursive: true });
    assert.equal((await ex.extract(unit, shard.prior, { now: NOW })).kind, "gone");
  }));

Deno.test({
  name: "an unreadable bucket is counted and hides no other session",
  // root reads through mode 000, so the refusal cannot be provoked there.
  ignore: Deno.uid() === 0,
  fn: () =>
    withTemp(async (home) => {
      await writeSession(home, { id: sid(1), wires: { "agents/main/wire.jsonl": [meta()] } });
      const locked = await writeSession(home, {
        id: sid(2),
        bucket: "wd_locked_0123456789ab",
        wires: { "agents/main/wire.jsonl": [meta()] },
      });
      await Deno.chmod(join(locked, ".."), 0o000);
      try {
        const d = await createKimiExtractor({ homes: [home] }).discover();
        assert.deepEqual(d.units.map((u) => u.sessionId), [sid(1)]);
        assert.equal(d.skipped.dir_unreadable, 1);
      } finally {
        await Deno.chmod(join(locked, ".."), 0o700);
      }
    }),
});
