/**
 * End-to-end: the real program (spawned, not in-process) runs headless sessions with
 * the mock provider, and `intendant ctl` answers, steers and rolls them back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readEvents, runIntendant, sessionOf, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";
import { writeLegacySession } from "./helpers/legacy_session.ts";

type Ev = {
  event: string;
  turn?: number;
  data?: Record<string, unknown>;
  file?: string;
  file2?: string;
  message?: string;
};

function events(dir: string): Ev[] {
  return readEvents(dir) as Ev[];
}

function lane(dir: string) {
  return events(dir).filter((e) => e.event === "conversation_message").map((e) => e.data!);
}

function conversation(
  dir: string,
): { seq: number; role: string; content: string; provenance: string }[] {
  return Deno.readTextFileSync(join(dir, "conversation.jsonl")).trimEnd().split("\n").map((l) =>
    JSON.parse(l)
  )
    .filter((m) => !("conversation" in m));
}

function writeScript(root: string, name: string, body: unknown): string {
  const p = join(root, name);
  Deno.writeTextFileSync(p, `// mock script\n${JSON.stringify(body, null, 2)}\n`);
  return p;
}

Deno.test("a multi-turn session with commands writes the full layout", () =>
  withTempDir(async (root) => {
    const project = join(root, "project");
    Deno.mkdirSync(project);
    const script = writeScript(root, "s.jsonc", {
      turns: [
        {
          reasoning: "Check the environment first.",
          text: "Let me look around.",
          commands: [
            { exec: "echo out-$INTENDANT_LOG_DIR; echo err-line >&2", nonce: "n1" },
            { exec: "head -c 20000 /dev/zero | tr '\\0' 'z'", nonce: "../evil/✓", pty: true },
            { exec: "exit 3" },
          ],
        },
        { text: "All done.", done: true },
      ],
    });
    const r = await runIntendant(root, [
      "run",
      "--mock-script",
      script,
      "--project",
      project,
      "--name",
      "My  run",
      "Inspect the project",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const { id, dir } = sessionOf(r);
    assert.equal(dir, join(root, "state", "logs", id));

    const meta = JSON.parse(Deno.readTextFileSync(join(dir, "session_meta.json")));
    assert.equal(meta.status, "completed");
    assert.equal(meta.project_root, project);
    assert.equal(meta.task, "Inspect the project");
    // Names are normalized on write as on read (spec, "Session naming"): whitespace collapsed.
    assert.equal(meta.name, "My run");
    assert.equal(meta.last_turn, 2);
    assert.equal(meta.rounds, 1);

    const evs = events(dir);
    const names = evs.map((e) => e.event);
    assert.equal(names[0], "session_started");
    assert.equal(names.at(-1), "session_end");
    for (
      const n of [
        "reasoning_content",
        "model_response",
        "json_extracted",
        "agent_input",
        "approval",
        "auto_approved",
        "command_started",
        "command_finished",
        "agent_output",
        "turn_end",
      ]
    ) {
      assert.ok(names.includes(n), n);
    }
    assert.equal(names.filter((n) => n === "auto_approved").length, 3);
    const finished = evs.filter((e) => e.event === "command_finished").map((e) => e.data!);
    assert.deepEqual(finished.map((d) => d.exit_code), [0, 0, 3]);
    // The command saw INTENDANT_LOG_DIR = the session dir; output landed in its runtime logs.
    const first = finished[0]!;
    assert.equal(Deno.readTextFileSync(join(dir, String(first.stdout_log))), `out-${dir}\n`);
    assert.equal(Deno.readTextFileSync(join(dir, String(first.stderr_log))), "err-line\n");
    // The hostile nonce became a safe name; the 20 KB pty result kept its full text.
    const pty = finished[1]!;
    assert.match(String(pty.stdout_log), /^evil_[0-9a-f]{32}_stdout\.log$/);
    assert.equal(Deno.statSync(join(dir, String(pty.pty_log))).size, 20000);

    const turns = [...Deno.readDirSync(join(dir, "turns"))].map((e) => e.name).sort();
    assert.deepEqual(turns, [
      "turn_001_agent_in.json",
      "turn_001_messages.json",
      "turn_001_model.txt",
      "turn_001_reasoning.txt",
      "turn_001_stderr.txt",
      "turn_001_stdout.txt",
      "turn_002_messages.json",
      "turn_002_model.txt",
    ]);
    assert.equal(
      Deno.readTextFileSync(join(dir, "turns", "turn_001_model.txt")),
      "Let me look around.",
    );

    // Lane: task, then both assistant messages; tool output never.
    assert.deepEqual(lane(dir).map((d) => [d.message_seq, d.provenance]), [[1, "task"], [
      2,
      "assistant",
    ], [6, "assistant"]]);
    const conv = conversation(dir);
    assert.deepEqual(conv.map((m) => m.seq), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(conv.map((m) => m.provenance), [
      "task",
      "assistant",
      "tool_output",
      "tool_output",
      "tool_output",
      "assistant",
    ]);
    assert.ok(new TextEncoder().encode(conv[3]!.content).length <= 10 * 1024);

    const transcript = Deno.readTextFileSync(join(dir, "transcript.jsonl")).trimEnd().split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(transcript.map((t) => t.role), ["user", "assistant", "assistant"]);
    assert.deepEqual(transcript[1].tools_called, ["exec", "execPty", "exec"]);
    const summary = JSON.parse(Deno.readTextFileSync(join(dir, "summary.json")));
    assert.equal(summary.outcome, "completed");
    const stats = JSON.parse(Deno.readTextFileSync(join(dir, "session_summary.json")));
    assert.equal(stats.commands, 3);
    assert.equal(stats.model_turns, 2);
    const cfg = JSON.parse(Deno.readTextFileSync(join(dir, "session_agent_config.json")));
    assert.equal(cfg.provider, "mock");
    assert.ok(Deno.statSync(join(dir, "daemon.log")).isFile);
  }));

Deno.test("the same script yields the same log apart from times and ids", () =>
  withTempDir(async (root) => {
    const script = writeScript(root, "s.jsonc", {
      turns: [{ text: "One.", commands: [{ exec: "echo hi", nonce: "a" }] }, {
        text: "Two.",
        done: true,
      }],
    });
    const shape = async () => {
      const { dir } = sessionOf(await runIntendant(root, ["run", "--mock-script", script, "task"]));
      return events(dir).map((e) => {
        const d = { ...(e.data ?? {}) };
        for (
          const k of ["approval_id", "duration_ms", "stdout_log", "stderr_log", "superseded_at_ms"]
        ) delete d[k];
        return [e.event, e.turn, JSON.stringify(d)];
      });
    };
    assert.deepEqual(await shape(), await shape());
  }));

Deno.test("askHuman waits for `ctl answer`; the answer becomes a user message and a lane row", () =>
  withTempDir(async (root) => {
    const script = writeScript(root, "s.jsonc", {
      turns: [{ ask_human: "Which branch?" }, { text: "Using it.", done: true }],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Release it"]);
    const dir = await run.dir;
    await waitFor(() => exists(join(dir, "human_question")), 20_000, "human_question");
    // The question file and the meta's status are two writes: the status follows within
    // moments (under the parallel suite, the meta could still say running when read at once).
    const status = () => JSON.parse(Deno.readTextFileSync(join(dir, "session_meta.json"))).status;
    await waitFor(() => status() === "waiting", 10_000, "status waiting");
    const id = dir.split("/").at(-1)!;
    const ans = await runIntendant(root, ["ctl", "answer", id.slice(0, 8), "release/2.0"]);
    assert.equal(ans.code, 0, ans.stderr);
    const r = await run.done;
    assert.equal(r.code, 0, r.stderr);
    const evs = events(dir);
    const sent = evs.find((e) => e.event === "human_response_sent")!;
    assert.deepEqual(Object.keys(sent.data!), ["question_id"]);
    assert.deepEqual(lane(dir).filter((d) => d.provenance === "ask_human_answer"), [
      { message_seq: 2, role: "user", provenance: "ask_human_answer", text: "release/2.0" },
    ]);
    assert.equal(exists(join(dir, "human_question")), false);
    assert.equal(exists(join(dir, "human_response")), false);
  }));

Deno.test("a steer queued by `ctl steer` is delivered at the next turn boundary", () =>
  withTempDir(async (root) => {
    const script = writeScript(root, "s.jsonc", {
      turns: [{ ask_human: "Proceed?" }, { text: "Steered.", done: true }],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Do it"]);
    const dir = await run.dir;
    await waitFor(() => exists(join(dir, "human_question")), 20_000, "human_question");
    const id = dir.split("/").at(-1)!;
    assert.equal(
      (await runIntendant(root, ["ctl", "steer", id, "also", "update", "docs"])).code,
      0,
    );
    assert.equal((await runIntendant(root, ["ctl", "answer", id, "yes"])).code, 0);
    assert.equal((await run.done).code, 0);
    const evs = events(dir);
    const req = evs.find((e) => e.event === "steer_requested")!;
    const del = evs.find((e) => e.event === "steer_delivered")!;
    assert.equal(req.data!.text, "also update docs");
    assert.equal(del.data!.steer_id, req.data!.steer_id);
    assert.equal(del.turn, 2);
    const row = lane(dir).find((d) => d.provenance === "steer")!;
    assert.deepEqual(row, {
      message_seq: del.data!.message_seq,
      role: "user",
      provenance: "steer",
      text: "also update docs",
    });
    // Steering a finished session is refused.
    const late = await runIntendant(root, ["ctl", "steer", id, "too late"]);
    assert.equal(late.code, 2);
    assert.match(late.stderr, /not running/);
  }));

Deno.test("`ctl rollback` produces a conversation_rewound cut and seqs are never reused", () =>
  withTempDir(async (root) => {
    const script = writeScript(root, "s.jsonc", {
      turns: [{ text: "Plan A." }, { ask_human: "OK?" }, { text: "Plan B.", done: true }],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Plan"]);
    const dir = await run.dir;
    await waitFor(() => exists(join(dir, "human_question")), 20_000, "human_question");
    const id = dir.split("/").at(-1)!;
    const rb = await runIntendant(root, ["ctl", "rollback", id, "--to-seq", "1"]);
    assert.equal(rb.code, 0, rb.stderr);
    assert.match(rb.stdout, /queued/);
    assert.equal((await runIntendant(root, ["ctl", "answer", id, "fine"])).code, 0);
    assert.equal((await run.done).code, 0);
    const cut = events(dir).find((e) => e.event === "conversation_rewound")!;
    assert.equal(cut.data!.cut_after_seq, 1);
    assert.equal(cut.data!.kind, "tail_rollback");
    assert.equal(typeof cut.data!.superseded_at_ms, "number");
    const conv = conversation(dir);
    // seq 2 (Plan A.) and 3 (the answer) were cut; Plan B. got seq 4, not 2.
    assert.deepEqual(conv.map((m) => [m.seq, m.content]), [[1, "Plan"], [4, "Plan B."]]);
    // Offline rollback of a finished session applies at once.
    const off = await runIntendant(root, ["ctl", "rollback", id, "--to-seq", "0"]);
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /rolled back/);
    assert.deepEqual(conversation(dir), []);
    assert.equal(events(dir).filter((e) => e.event === "conversation_rewound").length, 2);
    const bad = await runIntendant(root, ["ctl", "rollback", id, "--to-seq", "99"]);
    assert.equal(bad.code, 2);
  }));

Deno.test("--resume by prefix and --continue reopen the session, continue turns and bump rounds", () =>
  withTempDir(async (root) => {
    const project = join(root, "p");
    Deno.mkdirSync(project);
    const first = sessionOf(await runIntendant(root, ["run", "--project", project, "first task"]));
    const r2 = await runIntendant(root, ["run", "--resume", first.id.slice(0, 6), "second task"]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(sessionOf(r2).dir, first.dir);
    const r3 = await runIntendant(root, ["run", "--continue", "third task"], { cwd: project });
    assert.equal(r3.code, 0, r3.stderr);
    assert.equal(sessionOf(r3).dir, first.dir);
    const meta = JSON.parse(Deno.readTextFileSync(join(first.dir, "session_meta.json")));
    assert.equal(meta.rounds, 3);
    assert.equal(meta.task, "third task");
    assert.equal(meta.last_turn, 6);
    const starts = events(first.dir).filter((e) => e.event === "session_started").map((
      e,
    ) => [e.data!.round, e.data!.resumed]);
    assert.deepEqual(starts, [[1, false], [2, true], [3, true]]);
    const users = lane(first.dir).filter((d) => d.role === "user").map((
      d,
    ) => [d.provenance, d.text]);
    assert.deepEqual(users, [["task", "first task"], ["resume_task", "second task"], [
      "resume_task",
      "third task",
    ]]);
    const conv = conversation(first.dir);
    assert.ok(conv.some((m) => m.content === "[Session resumed] Continue with: second task"));
    const seqs = conv.map((m) => m.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.equal(new Set(seqs).size, seqs.length);
    const turnStarts = events(first.dir).filter((e) => e.event === "turn_start").map((e) => e.turn);
    assert.deepEqual(turnStarts, [1, 2, 3, 4, 5, 6]);
  }));

Deno.test("a legacy conversation.jsonl is renumbered on resume with an epoch marker, once", () =>
  withTempDir(async (root) => {
    const fx = writeLegacySession(join(root, "state", "logs"), { project: root });
    const s = { id: fx.id, dir: fx.dir };
    assert.equal((await runIntendant(root, ["run", "--resume", s.id, "again"])).code, 0);
    const markers = events(s.dir).filter((e) => e.event === "conversation_message_epoch");
    assert.equal(markers.length, 1);
    const mapping = markers[0]!.data!.mapping as [number, string, string][];
    assert.deepEqual(mapping.map(([seq, role]) => [seq, role]), [
      [1, "user"],
      [2, "assistant"],
      [3, "user"],
      [4, "assistant"],
      [5, "user"],
    ]);
    for (const [, , h] of mapping) assert.match(h, /^[0-9a-f]{16}$/);
    const conv = conversation(s.dir);
    assert.deepEqual(conv.slice(0, 5).map((m) => [m.seq, m.provenance]), [
      [1, "unknown"],
      [2, "unknown"],
      [3, "unknown"],
      [4, "unknown"],
      [5, "unknown"],
    ]);
    const resumeRow = lane(s.dir).find((d) =>
      d.provenance === "resume_task" && d.text === "again"
    )!;
    assert.equal(resumeRow.message_seq, 6);
    assert.equal((await runIntendant(root, ["run", "--resume", s.id, "once more"])).code, 0);
    assert.equal(events(s.dir).filter((e) => e.event === "conversation_message_epoch").length, 1);
  }));

Deno.test("a malformed mock script is rejected naming file, line and column; no session is created", () =>
  withTempDir(async (root) => {
    const syntax = join(root, "bad.jsonc");
    Deno.writeTextFileSync(syntax, '{\n  "turns": [\n    { "text": "x" ]\n}\n');
    const r1 = await runIntendant(root, ["run", "--mock-script", syntax, "t"]);
    assert.equal(r1.code, 2);
    assert.match(
      r1.stderr,
      new RegExp(`Invalid mock script ".*bad\\.jsonc" at line 3, column \\d+`),
    );
    const schema = join(root, "schema.jsonc");
    Deno.writeTextFileSync(
      schema,
      '{\n  "turns": [\n    { "text": "ok" },\n    { "commands": [{ "exec": 42 }] }\n  ]\n}\n',
    );
    const r2 = await runIntendant(root, ["run", "--mock-script", schema, "t"]);
    assert.equal(r2.code, 2);
    assert.match(
      r2.stderr,
      /schema\.jsonc" at line 4, column 30 \("turns\.1\.commands\.0\.exec"\)/,
    );
    const missing = await runIntendant(root, [
      "run",
      "--mock-script",
      join(root, "nope.jsonc"),
      "t",
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read mock script/);
    assert.equal(exists(join(root, "state", "logs")), false);
  }));

Deno.test("SIGTERM ends a running session as interrupted with a valid log", () =>
  withTempDir(async (root) => {
    const script = writeScript(root, "s.jsonc", {
      turns: [{ text: "Sleeping.", commands: [{ exec: "sleep 30" }] }, {
        text: "never",
        done: true,
      }],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "sleep"]);
    const dir = await run.dir;
    await waitFor(
      () => events(dir).some((e) => e.event === "command_started"),
      20_000,
      "command start",
    );
    run.child.kill("SIGTERM");
    const r = await run.done;
    assert.equal(r.code, 5);
    const meta = JSON.parse(Deno.readTextFileSync(join(dir, "session_meta.json")));
    assert.equal(meta.status, "interrupted");
    const end = events(dir).at(-1)!;
    assert.equal(end.event, "session_end");
    assert.equal(end.data!.status, "interrupted");
  }));

Deno.test("--parent records the session graph in both logs and sub-agents are skipped by --continue", () =>
  withTempDir(async (root) => {
    const parent = sessionOf(await runIntendant(root, ["run", "parent task"]));
    const child = await runIntendant(root, [
      "run",
      "--parent",
      parent.id.slice(0, 8),
      "--relationship",
      "subagent",
      "child task",
    ]);
    assert.equal(child.code, 0, child.stderr);
    const c = sessionOf(child);
    const ce = events(c.dir);
    assert.deepEqual(ce.find((e) => e.event === "session_relationship")!.data, {
      parent_id: parent.id,
      child_id: c.id,
      relationship: "subagent",
    });
    assert.equal(ce.find((e) => e.event === "session_identity")!.data!.wrapper, false);
    assert.deepEqual(events(parent.dir).find((e) => e.event === "session_relationship")!.data, {
      parent_id: parent.id,
      child_id: c.id,
      relationship: "subagent",
    });
    assert.equal(
      JSON.parse(Deno.readTextFileSync(join(c.dir, "session_meta.json"))).role,
      "subagent",
    );
    const cont = sessionOf(await runIntendant(root, ["run", "--continue", "more"]));
    assert.equal(cont.id, parent.id);
    const bad = await runIntendant(root, [
      "run",
      "--parent",
      parent.id,
      "--relationship",
      "cousin",
      "x",
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"cousin"/);
  }));

function exists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a lost conversation.jsonl never makes a resume reuse a logged seq", () =>
  withTempDir(async (root) => {
    const s = sessionOf(await runIntendant(root, ["run", "first"]));
    Deno.removeSync(join(s.dir, "conversation.jsonl"));
    assert.equal((await runIntendant(root, ["run", "--resume", s.id, "second"])).code, 0);
    const seqs = lane(s.dir).map((d) => d.message_seq as number);
    assert.equal(new Set(seqs).size, seqs.length);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  }));

Deno.test("a command whose project directory vanished fails alone; the session completes", () =>
  withTempDir(async (root) => {
    const project = join(root, "gone-project");
    Deno.mkdirSync(project);
    const s = sessionOf(await runIntendant(root, ["run", "--project", project, "first"]));
    Deno.removeSync(project);
    const r = await runIntendant(root, ["run", "--resume", s.id, "again"]);
    assert.equal(r.code, 0, r.stderr);
    const fin = events(s.dir).filter((e) => e.event === "command_finished").map((e) =>
      e.data!.exit_code
    );
    assert.deepEqual(fin, [0, 127]);
    assert.ok(
      events(s.dir).some((e) => e.event === "error" && /could not start/.test(String(e.message))),
    );
  }));
