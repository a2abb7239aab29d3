import assert from "node:assert/strict";
import { join } from "node:path";
import { SessionLog } from "./session_log.ts";
import { parseEvents, readSessionEvents } from "./read_events.ts";
import { replaySession } from "./replay.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

async function newLog(root: string, extra: Partial<Parameters<typeof SessionLog.create>[0]> = {}) {
  return await SessionLog.create({
    logsDir: join(root, "logs"),
    tmpDir: root,
    meta: { projectRoot: "/proj", task: "Fix the bug" },
    ...extra,
  });
}

function mode(p: string): number {
  return Deno.statSync(p).mode! & 0o777;
}

Deno.test("a fresh session gets <logs>/<uuid>/ with 0700 dirs, 0600 files and exactly the spec's meta fields", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    assert.match(log.sessionId, /^[0-9a-f-]{36}$/);
    assert.equal(log.dir, join(root, "logs", log.sessionId));
    log.info("hello");
    await log.finish("completed");
    const meta = JSON.parse(Deno.readTextFileSync(join(log.dir, "session_meta.json")));
    assert.deepEqual(Object.keys(meta), [
      "session_id",
      "created_at",
      "created_at_ms",
      "project_root",
      "name",
      "task",
      "status",
      "last_turn",
      "role",
      "rounds",
    ]);
    assert.equal(meta.status, "completed");
    assert.match(meta.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    for (const e of Deno.readDirSync(log.dir)) {
      const p = join(log.dir, e.name);
      assert.equal(mode(p), e.isDirectory ? 0o700 : 0o600, e.name);
    }
    assert.equal(mode(join(root, "logs")), 0o700);
    assert.deepEqual(log.subprocessEnv(), { INTENDANT_LOG_DIR: log.dir });
  }));

Deno.test("every event line has the LogEvent shape in order and invalid data is refused", () =>
  withTempDir(async (root) => {
    let t = Date.UTC(2026, 10, 29, 12, 0, 0);
    const log = await newLog(root, { now: () => t++ });
    await log.turnStart(3, "mock");
    log.error("went wrong", { code: 7 }, 3);
    assert.throws(
      () =>
        log.emit(
          "conversation_rewound",
          { cut_after_seq: -1, kind: "x", superseded_at_ms: 1 } as never,
        ),
      /cut_after_seq/,
    );
    assert.throws(
      () => log.emit("turn_end", { commands: 1, duration_ms: 2, extra: 1 } as never),
      /turn_end/,
    );
    await log.close();
    const lines = Deno.readTextFileSync(join(log.dir, "session.jsonl")).trimEnd().split("\n");
    assert.equal(lines.length, 2);
    const [a, b] = lines.map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(a), ["ts", "ts_ms", "turn", "event", "data"]);
    assert.deepEqual(Object.keys(b), ["ts", "ts_ms", "turn", "event", "level", "message", "data"]);
    assert.match(a.ts, /^\d\d:\d\d:\d\d\.\d{3}$/);
    assert.equal(typeof a.ts_ms, "number");
  }));

Deno.test("turn files are turn_NNN_suffix (1000 still works), agent_in pretty-printed, stderr only when non-empty", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    log.agentInput(1, [{ exec: "ls -la", nonce: "n1" }]);
    log.agentOutput(1, { stdout: "out\n", stderr: "", exitCodes: [0] });
    log.agentOutput(1000, { stdout: "o", stderr: "warn\n", exitCodes: [1] });
    log.reasoningContent(2, "thinking hard");
    await log.close();
    const names = [...Deno.readDirSync(log.turnsDir)].map((e) => e.name).sort();
    assert.deepEqual(names, [
      "turn_001_agent_in.json",
      "turn_001_stdout.txt",
      "turn_002_reasoning.txt",
      "turn_1000_stderr.txt",
      "turn_1000_stdout.txt",
    ]);
    const agentIn = Deno.readTextFileSync(join(log.turnsDir, "turn_001_agent_in.json"));
    assert.equal(agentIn, JSON.stringify([{ exec: "ls -la", nonce: "n1" }], null, 2) + "\n");
    const { events } = await readSessionEvents(log.dir);
    const outs = events.filter((e) => e.event.event === "agent_output").map((e) => e.event);
    assert.equal(outs[0]!.file2, undefined);
    assert.equal(outs[1]!.file2, "turns/turn_1000_stderr.txt");
    assert.equal(
      Deno.readTextFileSync(join(log.turnsDir, "turn_002_reasoning.txt")),
      "thinking hard",
    );
  }));

Deno.test("model text is written once and both events reference the same span; span reads stay exact", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    log.modelResponseWithMessage(4, "first ✓ part", { seq: 2, hasToolCalls: false });
    log.modelResponseWithMessage(4, "second", { seq: 3, hasToolCalls: true });
    assert.equal(log.modelResponseWithMessage(4, "", { seq: 4, hasToolCalls: true }), null);
    await log.close();
    const text = Deno.readTextFileSync(join(log.turnsDir, "turn_004_model.txt"));
    assert.equal(text, "first ✓ partsecond");
    const { events } = await readSessionEvents(log.dir);
    const rows = events.map((e) => e.event).filter((e) =>
      e.event === "conversation_message" || e.event === "model_response"
    );
    assert.deepEqual(rows.map((e) => e.event), [
      "model_response",
      "conversation_message",
      "model_response",
      "conversation_message",
    ]);
    for (const e of rows) assert.equal(e.file, "turns/turn_004_model.txt");
    const second = rows[3]!.data as {
      model_offset: number;
      model_bytes: number;
      message_seq: number;
    };
    assert.equal(second.message_seq, 3);
    assert.equal(
      new TextDecoder().decode(
        log.readSpan("turns/turn_004_model.txt", second.model_offset, second.model_bytes),
      ),
      "second",
    );
  }));

Deno.test("span reads do not read whole files (a 5 GiB sparse sidecar reads instantly)", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const rel = log.writeTurnFile(9, "model.txt", "head");
    const f = Deno.openSync(join(log.dir, rel), { write: true });
    f.truncateSync(5 * 1024 ** 3);
    f.seekSync(5 * 1024 ** 3 - 5, Deno.SeekMode.Start);
    f.writeSync(new TextEncoder().encode("tail!"));
    f.close();
    const got = new TextDecoder().decode(log.readSpan(rel, 5 * 1024 ** 3 - 5, 5));
    assert.equal(got, "tail!");
    assert.throws(() => log.readSpan(rel, 5 * 1024 ** 3, 1), RangeError);
    assert.throws(() => log.readSpan("../session_meta.json", 0, 1), /Refusing/);
    assert.throws(() => log.readSpan("turns/../../x", 0, 1), /Refusing/);
    await log.close();
  }));

Deno.test("user lane rows carry raw text and provenance; non-lane provenances are refused", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    log.conversationMessageUser(1, { seq: 1, provenance: "task", text: "Fix the bug" });
    log.conversationMessageUser(2, {
      seq: 5,
      provenance: "ask_human_answer",
      text: "main",
      refSeq: 4,
    });
    for (const p of ["system_injection", "tool_output", "context_summary", "assistant"] as const) {
      assert.throws(
        () => log.conversationMessageUser(2, { seq: 9, provenance: p, text: "x" }),
        /never enters/,
      );
    }
    await log.close();
    const { events } = await readSessionEvents(log.dir);
    assert.deepEqual(events.map((e) => e.event.data), [
      { message_seq: 1, role: "user", provenance: "task", text: "Fix the bug" },
      { message_seq: 5, role: "user", provenance: "ask_human_answer", text: "main", ref_seq: 4 },
    ]);
  }));

Deno.test("runtime logs are {nonce}_{32hex}_{stream}.log, created new, hostile nonces made safe", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const hostile = ["../x", "/", "a\0b", "n".repeat(300), "🚀🔥", "..", "ok-nonce_1", ""];
    for (const n of hostile) {
      const r = log.openRuntimeLogs(n);
      r.stdout.writeSync(new TextEncoder().encode("o"));
      r.stdout.close();
      r.stderr.close();
      assert.match(
        r.stdoutName,
        /^[A-Za-z0-9_-]{1,48}_[0-9a-f]{32}_stdout\.log$/,
        JSON.stringify(n),
      );
      assert.equal(r.stderrName, r.stdoutName.replace("_stdout.log", "_stderr.log"));
    }
    const all = [...Deno.readDirSync(log.dir)].map((e) => e.name);
    assert.equal(all.filter((n) => n.endsWith(".log")).length, hostile.length * 2);
    assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name).sort(), ["logs"]);
    await log.close();
  }));

Deno.test("an execPty result over 10 KiB also keeps {nonce}_{random}_pty.log", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const r = log.openRuntimeLogs("p1");
    r.stdout.close();
    r.stderr.close();
    assert.equal(log.writePtyLog(r, "small"), null);
    const name = log.writePtyLog(r, "x".repeat(10 * 1024 + 1));
    assert.equal(name, `p1_${r.random}_pty.log`);
    assert.equal(Deno.statSync(join(log.dir, name!)).size, 10 * 1024 + 1);
    await log.close();
  }));

Deno.test("context snapshots rotate latest-only per stream, keep-all keeps them, replay says what is on disk", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const snap = (turn: number, sid: string) =>
      log.contextSnapshot(turn, {
        source: "intendant",
        sessionId: sid,
        payload: { turn },
        tokens: 10 * turn,
        itemCount: turn,
        labels: ["sys"],
      });
    snap(1, "A");
    snap(2, "A");
    snap(2, "B");
    snap(3, "A");
    const files = [...Deno.readDirSync(log.turnsDir)].map((e) => e.name).sort();
    assert.deepEqual(files, [
      "turn_002_context_intendant-B.json",
      "turn_003_context_intendant-A.json",
    ]);
    await log.close();
    const { entries } = await replaySession(log.dir);
    const snaps = entries.filter((e) => e.kind === "context_snapshot");
    assert.deepEqual(snaps.map((e) => e.exact_replay_available), [false, false, true, true]);
    assert.deepEqual(snaps.map((e) => (e.data as { tokens: number }).tokens), [10, 20, 20, 30]);

    const keep = await newLog(root, { contextSnapshotKeepAll: true });
    for (const t of [1, 2, 3]) {
      keep.contextSnapshot(t, {
        source: "intendant",
        sessionId: "A",
        payload: {},
        tokens: 1,
        itemCount: 1,
        labels: [],
      });
    }
    assert.equal([...Deno.readDirSync(keep.turnsDir)].length, 3);
    await keep.close();
  }));

Deno.test("turn_NNN_messages.json only when asked or when the provider has no request snapshot", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    assert.equal(log.turnMessages(1, [{ role: "user" }], { providerHasSnapshot: true }), null);
    assert.equal(
      log.turnMessages(1, [{ role: "user" }], { providerHasSnapshot: false }),
      "turns/turn_001_messages.json",
    );
    await log.close();
    const dbg = await newLog(root, { logMessagesJson: true });
    assert.equal(
      dbg.turnMessages(2, [], { providerHasSnapshot: true }),
      "turns/turn_002_messages.json",
    );
    await dbg.close();
  }));

Deno.test("finish rebuilds transcript.jsonl from the spine and writes both summaries", () =>
  withTempDir(async (root) => {
    let t = Date.UTC(2026, 10, 29, 12, 0, 0);
    const log = await newLog(root, { now: () => (t += 1000) });
    log.conversationMessageUser(1, { seq: 1, provenance: "task", text: "Fix the bug" });
    await log.turnStart(1, "mock");
    log.modelResponseWithMessage(1, "Looking.", { seq: 2, hasToolCalls: true });
    log.agentInput(1, [{ exec: "ls" }, { exec: "cat x", pty: true }]);
    log.tokenUsage(1, { input: 100, output: 20 });
    log.error("oops");
    log.voiceSessionStarted("openai", "rt-1");
    log.voiceUtterance("user", "hello there");
    log.cuTaskStarted("cu1", "click ok");
    log.cuAction("cu1", "click");
    log.cuTaskCompleted("cu1", "done", 1);
    log.frame("display", new Uint8Array([0xff, 0xd8, 0xff]), true);
    // Simulate a lost live append: truncate the live transcript.
    Deno.writeTextFileSync(join(log.dir, "transcript.jsonl"), "");
    await log.finish("completed");
    const transcript = Deno.readTextFileSync(join(log.dir, "transcript.jsonl")).trimEnd().split(
      "\n",
    ).map((l) => JSON.parse(l));
    assert.deepEqual(transcript.map((e) => [e.role, e.text, e.tools_called]), [
      ["user", "Fix the bug", undefined],
      ["assistant", "Looking.", ["exec", "execPty"]],
      ["user", "hello there", undefined],
    ]);
    const summary = JSON.parse(Deno.readTextFileSync(join(log.dir, "summary.json")));
    assert.equal(summary.task, "Fix the bug");
    assert.equal(summary.outcome, "completed");
    assert.equal(summary.total_turns, 1);
    assert.equal(summary.session_id, log.sessionId);
    const stats = JSON.parse(Deno.readTextFileSync(join(log.dir, "session_summary.json")));
    assert.equal(stats.model_turns, 1);
    assert.equal(stats.errors, 1);
    assert.deepEqual(stats.total_tokens, { input: 100, output: 20, total: 120 });
    assert.equal(stats.voice.connections, 1);
    assert.deepEqual(stats.cu_tasks, [{
      task_id: "cu1",
      task: "click ok",
      outcome: "done",
      actions: 1,
    }]);
    assert.equal(stats.frames_sent, 1);
    assert.ok(stats.duration_ms > 0);
    const frames = Deno.readTextFileSync(join(log.dir, "frames", "frames.jsonl")).trim().split(
      "\n",
    );
    assert.equal(frames.length, 1);
  }));

Deno.test("a symlinked turns/ is refused and nothing lands outside the session dir (C2)", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const elsewhere = join(root, "elsewhere");
    Deno.mkdirSync(elsewhere);
    Deno.removeSync(log.turnsDir, { recursive: true });
    Deno.symlinkSync(elsewhere, log.turnsDir);
    assert.throws(() => log.writeTurnFile(1, "model.txt", "x"), /not a real directory/);
    assert.throws(() => log.appendTurnFile(1, "model.txt", "x"), /not a real directory/);
    assert.deepEqual([...Deno.readDirSync(elsewhere)], []);
    await log.close();
  }));

Deno.test("parseEvents counts malformed lines and leaves a torn tail", () => {
  const r = parseEvents(
    new TextEncoder().encode('{"ts":"1","event":"info"}\nnope\n{"event":1}\n{"ts":"2","ev'),
  );
  assert.equal(r.events.length, 1);
  assert.deepEqual(r.malformed.map((m) => m.lineNo), [2, 3]);
  assert.equal(r.tornTailBytes, 13);
});

Deno.test("a symlink planted at a turn file path is refused and its target untouched (C1)", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const canary = join(root, "canary");
    Deno.writeTextFileSync(canary, "secret");
    Deno.symlinkSync(canary, join(log.turnsDir, "turn_001_model.txt"));
    Deno.symlinkSync(canary, join(log.turnsDir, "turn_001_stdout.txt"));
    assert.throws(
      () => log.modelResponseWithMessage(1, "x", { seq: 1, hasToolCalls: false }),
      /not a regular file/,
    );
    assert.throws(
      () => log.agentOutput(1, { stdout: "x", stderr: "", exitCodes: [0] }),
      /not a regular file/,
    );
    assert.equal(Deno.readTextFileSync(canary), "secret");
    await log.close();
  }));

Deno.test("session_agent_config.json records launch pins atomically with mode 0600", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    await log.writeAgentConfig({ provider: "mock", autonomy: "headless", parent_id: null });
    const p = join(log.dir, "session_agent_config.json");
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(p)), {
      provider: "mock",
      autonomy: "headless",
      parent_id: null,
    });
    assert.equal(mode(p), 0o600);
    await log.close();
  }));
