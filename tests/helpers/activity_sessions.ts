/**
 * One session per external tool with prose AND tool activity, written by that tool's
 * fixture writer in its exact on-disk format (tests/fixtures/*_fixture.ts), for the
 * activity tests: tool calls with results (one failing, with an exit code or an error
 * flag), calls in a turn with no prose before them, calls of the same turn after a
 * prose-less entry, a user-run command, a context marker, a sub-agent's calls, a call
 * that never got its result. Each writer returns the detail the catalog must build:
 * every entry in order, and the tools under each. The Codex rollout also carries one
 * malformed line and a torn last line (a call that must NOT show). One file past the
 * 400-line aim on purpose: four writers with their expected details, side by side in one
 * shape, so a rule change shows in all four tables at once.
 */
import { join } from "node:path";
import { rolloutRel, RolloutWriter, uuidv7 } from "../fixtures/codex_fixture.ts";
import { ccUuid, ClaudeWriter, msgId, toolId } from "../fixtures/claude_fixture.ts";
import { KimiSession } from "../fixtures/kimi_fixture.ts";
import { PiSessionWriter, writePiSession } from "../fixtures/pi_fixture.ts";

/** What one tool call must look like. `output`: label → a substring of its excerpt. */
export interface ExpectedTool {
  name: string;
  input: string;
  status: "ok" | "error" | "pending";
  exit_code?: number;
  output: Record<string, string>;
}

/** One entry of the expected detail, in order. */
export type ExpectedEntry =
  | { kind: "message"; role: "user" | "assistant"; text: string; tools?: ExpectedTool[] }
  | { kind: "tool_calls"; by: "agent" | "user"; tools: ExpectedTool[]; subagent?: boolean }
  | { kind: "context_snapshot"; snapshot: string; summary?: string };

/** A written activity session. */
export interface ActivitySession {
  key: string;
  /** The main source file. */
  path: string;
  entries: ExpectedEntry[];
  /** Skips the activity reader must report. */
  skipped: Record<string, number>;
}

const msg = (role: "user" | "assistant", text: string, tools?: ExpectedTool[]): ExpectedEntry =>
  tools ? { kind: "message", role, text, tools } : { kind: "message", role, text };

/** A Codex rollout under the CODEX_HOME `home`. */
export async function writeCodexActivity(home: string, now: number): Promise<ActivitySession> {
  const start = now - 3 * 3_600_000;
  const w = new RolloutWriter(uuidv7(Date.parse("2026-05-18T10:00:00Z"), "activity"), start, true);
  w.meta({ cwd: "/home/dev/act", cli_version: "0.137.0", originator: "codex_cli_rs" })
    .turnContext("/home/dev/act");
  w.user("Run the tests and fix what fails");
  w.assistant(["I'll run the suite first."], false, false);
  const failing = "Chunk ID: 7\nWall time: 1.2 seconds\nProcess exited with code 1\n" +
    "Original token count: 9\nOutput:\nFAILED tests/login_test.ts — 2 failed";
  const t1 = w.call("exec_command", { cmd: "deno test", workdir: "/home/dev/act" }, failing);
  w.execEnd(t1, { exit_code: 1, stdout: "2 failed", command: ["bash", "-lc", "deno test"] });
  w.lines.push("{not json: a line torn and later repaired"); // malformed, counted
  w.customCall(
    "apply_patch",
    "*** Begin Patch\n*** Update File: src/login.ts\n-a\n+b\n*** End Patch",
    "Success. Updated the following files:\nM src/login.ts",
  );
  w.assistant(["Fixed the redirect; the suite passes now."]);
  w.user("Also lint it");
  w.work("deno lint");
  w.assistant(["Lint is clean."]);
  w.compact("Summary: tests fixed, lint clean");
  w.user("Show the log tail");
  const t2 = w.localShell(["bash", "-lc", "tail -n 3 app.log"], null);
  w.execEnd(t2, { exit_code: 2, stderr: "tail: cannot open 'app.log'", command: ["tail"] });
  w.call("exec_command", { cmd: "sleep 100" }, null);
  w.assistant(["The log file is missing."]);
  const path = join(home, rolloutRel(start, w.id));
  await Deno.mkdir(join(path, ".."), { recursive: true });
  const torn = JSON.stringify({
    timestamp: new Date(now).toISOString(),
    type: "response_item",
    payload: { type: "function_call", name: "exec_command", arguments: "{}", call_id: "torn" },
  }).slice(0, 60);
  await Deno.writeFile(path, new Uint8Array([...w.bytes(), ...new TextEncoder().encode(torn)]));
  return {
    key: `codex:${w.id}`,
    path,
    skipped: { malformed_line: 1, torn_tail: 1 },
    entries: [
      msg("user", "Run the tests and fix what fails"),
      msg("assistant", "I'll run the suite first.", [
        {
          name: "exec_command",
          input: "deno test",
          status: "error",
          exit_code: 1,
          output: { output: "FAILED tests/login_test.ts" },
        },
        {
          name: "apply_patch",
          input: "*** Begin Patch\n*** Update File: src/login.ts\n-a\n+b\n*** End Patch",
          status: "ok",
          output: { output: "M src/login.ts" },
        },
      ]),
      msg("assistant", "Fixed the redirect; the suite passes now."),
      msg("user", "Also lint it"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [{
          name: "exec_command",
          input: "deno lint",
          status: "ok",
          exit_code: 0,
          output: { output: "tool output of deno lint" },
        }],
      },
      msg("assistant", "Lint is clean."),
      { kind: "context_snapshot", snapshot: "compacted", summary: "tests fixed, lint clean" },
      msg("user", "Show the log tail"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [
          {
            name: "local_shell",
            input: "tail -n 3 app.log",
            status: "error",
            exit_code: 2,
            output: { output: "cannot open 'app.log'" },
          },
          { name: "exec_command", input: "sleep 100", status: "pending", output: {} },
        ],
      },
      msg("assistant", "The log file is missing."),
    ],
  };
}

/** A Claude Code transcript (and a subagent file) under the projects root `projects`. */
export async function writeClaudeActivity(
  projects: string,
  now: number,
): Promise<ActivitySession> {
  let t = now - 2 * 3_600_000;
  const clock = () => (t += 3_000);
  const sid = ccUuid("activity:claude");
  const w = new ClaudeWriter({ sessionId: sid, cwd: "/home/dev/act", version: "2.1.150", clock });
  w.user("Why does the build fail?", {}, null);
  const m1 = msgId("act:m1");
  w.assistant([{ type: "text", text: "Let me run the build." }], m1);
  const t1 = toolId("act:build");
  w.assistant([{
    type: "tool_use",
    id: t1,
    name: "Bash",
    input: { command: "npm run build", description: "Build" },
  }], m1);
  const err = "Exit code 2\nerror TS2304: Cannot find name 'foo'.";
  w.user([{ type: "tool_result", tool_use_id: t1, content: err, is_error: true }], {
    toolUseResult: `Error: ${err}`,
  });
  const t2 = toolId("act:read");
  w.assistant(
    [{ type: "tool_use", id: t2, name: "Read", input: { file_path: "src/a.ts" } }],
    msgId("act:m2"),
  );
  w.user([{ type: "tool_result", tool_use_id: t2, content: "export const a = foo;" }], {
    toolUseResult: { type: "text", file: { filePath: "src/a.ts", content: "…" } },
  });
  w.assistant([{ type: "text", text: "`foo` is undefined in src/a.ts." }], msgId("act:m3"));
  w.user("Fix it");
  const t3 = toolId("act:edit");
  w.assistant([{
    type: "tool_use",
    id: t3,
    name: "Edit",
    input: { file_path: "src/a.ts", old_string: "foo", new_string: "1" },
  }], msgId("act:m4"));
  w.user([{ type: "tool_result", tool_use_id: t3, content: "The file has been updated." }]);
  const t4 = toolId("act:rebuild");
  w.assistant(
    [{ type: "tool_use", id: t4, name: "Bash", input: { command: "npm run build" } }],
    msgId("act:m5"),
  );
  w.user([{ type: "tool_result", tool_use_id: t4, content: "built in 2s" }], {
    toolUseResult: { stdout: "built in 2s", stderr: "", interrupted: false, isImage: false },
  });
  w.assistant([{ type: "text", text: "Build passes now." }], msgId("act:m6"));
  w.system("compact_boundary", {
    parentUuid: null,
    logicalParentUuid: w.tip,
    content: "Conversation compacted",
    level: "info",
    isMeta: false,
    compactMetadata: { trigger: "manual", preTokens: 90_000 },
  }, null);
  w.user("This session is being continued from a previous conversation. The build fix.", {
    isCompactSummary: true,
    isVisibleInTranscriptOnly: true,
  });
  w.user("<bash-input>git status</bash-input>");
  w.user("<bash-stdout>nothing to commit</bash-stdout><bash-stderr></bash-stderr>");
  w.user("Ask a helper to double-check");
  const task = toolId("act:task");
  w.assistant([{
    type: "tool_use",
    id: task,
    name: "Task",
    input: { description: "Double-check", prompt: "Check src/a.ts", subagent_type: "x" },
  }], msgId("act:m7"));
  w.user([{
    type: "tool_result",
    tool_use_id: task,
    content: [{ type: "text", text: "All good." }],
  }]);
  w.assistant([{ type: "text", text: "The helper agrees." }], msgId("act:m8"));
  const dir = join(projects, "-home-dev-act");
  await Deno.mkdir(join(dir, sid, "subagents"), { recursive: true });
  const path = join(dir, `${sid}.jsonl`);
  await Deno.writeTextFile(path, w.text());
  const sw = new ClaudeWriter({
    sessionId: sid,
    cwd: "/home/dev/act",
    version: "2.1.150",
    clock,
    agentId: "a0c7ac7",
  });
  sw.user("Check src/a.ts", {}, null);
  const sm = msgId("act:sub1");
  const sg = toolId("act:grep");
  sw.assistant([{ type: "tool_use", id: sg, name: "Grep", input: { pattern: "foo" } }], sm);
  sw.user([{ type: "tool_result", tool_use_id: sg, content: "No matches found" }]);
  sw.assistant([{ type: "text", text: "All good." }], msgId("act:sub2"));
  await Deno.writeTextFile(join(dir, sid, "subagents", "agent-a0c7ac7.jsonl"), sw.text());
  return {
    key: `claude-code:${sid}`,
    path,
    skipped: {},
    entries: [
      msg("user", "Why does the build fail?"),
      msg("assistant", "Let me run the build.", [
        {
          name: "Bash",
          input: "npm run build",
          status: "error",
          exit_code: 2,
          output: { output: "Cannot find name 'foo'" },
        },
        {
          name: "Read",
          input: '{"file_path":"src/a.ts"}',
          status: "ok",
          output: { output: "export const a = foo;" },
        },
      ]),
      msg("assistant", "`foo` is undefined in src/a.ts."),
      msg("user", "Fix it"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [
          {
            name: "Edit",
            input: '{"file_path":"src/a.ts","old_string":"foo","new_string":"1"}',
            status: "ok",
            output: { output: "The file has been updated." },
          },
          { name: "Bash", input: "npm run build", status: "ok", output: { stdout: "built in 2s" } },
        ],
      },
      msg("assistant", "Build passes now."),
      { kind: "context_snapshot", snapshot: "compact_boundary", summary: "The build fix." },
      {
        kind: "tool_calls",
        by: "user",
        tools: [{
          name: "bash",
          input: "git status",
          status: "ok",
          output: { stdout: "nothing to commit" },
        }],
      },
      msg("user", "Ask a helper to double-check"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [{
          name: "Task",
          input: '{"description":"Double-check","prompt":"Check src/a.ts","subagent_type":"x"}',
          status: "ok",
          output: { output: "All good." },
        }],
      },
      msg("assistant", "The helper agrees."),
      msg("user", "Check src/a.ts"),
      {
        kind: "tool_calls",
        by: "agent",
        subagent: true,
        tools: [{
          name: "Grep",
          input: '{"pattern":"foo"}',
          status: "ok",
          output: { output: "No matches found" },
        }],
      },
      msg("assistant", "All good."),
    ],
  };
}

/** A Kimi Code session (main wire + a sub-agent wire) under KIMI_CODE_HOME `home`. */
export async function writeKimiActivity(home: string, now: number): Promise<ActivitySession> {
  const s = new KimiSession(home, "/home/dev/activity-kimi", now - 90 * 60_000);
  const main = s.wire("main", "1.5");
  const sub = s.wire("agent-0", "1.5");
  main.user("Find the slow query", { kind: "user" });
  main.step([]);
  main.say("Checking the query log.");
  main.loop({
    type: "tool.call",
    toolCallId: "Bash:0",
    name: "Bash",
    args: { command: "grep slow /var/log/db.log" },
  });
  main.endStep();
  main.toolResult("Bash:0", "grep: /var/log/db.log: No such file or directory", true);
  main.step([]);
  main.loop({ type: "tool.call", toolCallId: "Agent:1", name: "Agent", args: { prompt: "db.ts" } });
  main.endStep();
  sub.msg("user", "Inspect db.ts", { kind: "system_trigger", name: "subagent" });
  sub.step([]);
  sub.loop({ type: "tool.call", toolCallId: "Read:0", name: "Read", args: { path: "db.ts" } });
  sub.endStep();
  sub.toolResult("Read:0", "SELECT * FROM users WHERE email = ?");
  sub.step([]);
  sub.say("The users.email column has no index.");
  sub.endStep();
  main.toolResult("Agent:1", "The users.email column has no index.");
  main.step([]);
  main.say("Add an index on users.email.");
  main.endStep();
  main.msg("user", "!ls migrations", { kind: "shell_command", phase: "input" });
  main.msg("user", "001_init.sql", { kind: "shell_command", phase: "output" });
  main.compact("Summary: the slow query needs an index");
  main.user("Write the migration", { kind: "user" });
  main.step([]);
  main.loop({
    type: "tool.call",
    toolCallId: "Write:0",
    name: "Write",
    args: { path: "migrations/002_index.sql" },
  });
  main.endStep();
  await s.write({ title: "Slow query" }, {
    main: { type: "main" },
    "agent-0": { type: "sub", parentAgentId: "main" },
  });
  return {
    key: s.key,
    path: main.path,
    skipped: {},
    entries: [
      msg("user", "Find the slow query"),
      msg("assistant", "Checking the query log.", [
        {
          name: "Bash",
          input: "grep slow /var/log/db.log",
          status: "error",
          output: { output: "No such file or directory" },
        },
        {
          name: "Agent",
          input: '{"prompt":"db.ts"}',
          status: "ok",
          output: { output: "has no index" },
        },
      ]),
      {
        kind: "tool_calls",
        by: "agent",
        subagent: true,
        tools: [{
          name: "Read",
          input: '{"path":"db.ts"}',
          status: "ok",
          output: { output: "SELECT * FROM users" },
        }],
      },
      msg("assistant", "The users.email column has no index."),
      msg("assistant", "Add an index on users.email."),
      {
        kind: "tool_calls",
        by: "user",
        tools: [{
          name: "shell",
          input: "!ls migrations",
          status: "ok",
          output: { output: "001_init.sql" },
        }],
      },
      { kind: "context_snapshot", snapshot: "compaction", summary: "needs an index" },
      msg("user", "Write the migration"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [{
          name: "Write",
          input: '{"path":"migrations/002_index.sql"}',
          status: "pending",
          output: {},
        }],
      },
    ],
  };
}

/** A Pi session under the agent dir `agentDir`. */
export async function writePiActivity(agentDir: string, now: number): Promise<ActivitySession> {
  let t = now - 4 * 3_600_000;
  const clock = () => (t += 1_000);
  const created = t;
  const w = new PiSessionWriter("0ac71e17-5a1e-4c3d-9e4f-5a6b7c8d9e01", clock, {
    timestamp: new Date(t).toISOString(),
    cwd: "/home/dev/act",
  });
  const text = (s: string) => ({ type: "text", text: s });
  const result = (id: string, name: string, out: string, isError: boolean) =>
    w.entry("message", {
      message: {
        role: "toolResult",
        toolCallId: id,
        toolName: name,
        content: [text(out)],
        isError,
        timestamp: clock(),
      },
    });
  w.user([text("Check the disk usage")]);
  w.assistant([text("Running df."), {
    type: "toolCall",
    id: "toolu_df",
    name: "bash",
    arguments: { command: "df -h /" },
  }]);
  result("toolu_df", "bash", "df: /: permission denied\n\nCommand exited with code 1", true);
  w.assistant([{
    type: "toolCall",
    id: "toolu_fstab",
    name: "read",
    arguments: { path: "/etc/fstab" },
  }]);
  result("toolu_fstab", "read", "UUID=abcd / ext4 defaults 0 1", false);
  w.assistant([text("The root disk is 91% full.")]);
  w.entry("message", {
    message: {
      role: "bashExecution",
      command: "du -sh ~/.cache",
      output: "4.0G\t/home/dev/.cache",
      exitCode: 0,
      cancelled: false,
      truncated: false,
      timestamp: clock(),
    },
  });
  w.entry("compaction", {
    summary: "## Goal\nFree disk space",
    firstKeptEntryId: w.leaf,
    tokensBefore: 30_000,
  });
  w.user("Clean the cache");
  w.assistant([{
    type: "toolCall",
    id: "toolu_rm",
    name: "bash",
    arguments: { command: "rm -rf ~/.cache/pip" },
  }]);
  const path = await writePiSession(agentDir, "/home/dev/act", w, created);
  return {
    key: `pi:${w.id}`,
    path,
    skipped: {},
    entries: [
      msg("user", "Check the disk usage"),
      msg("assistant", "Running df.", [
        {
          name: "bash",
          input: "df -h /",
          status: "error",
          exit_code: 1,
          output: { output: "permission denied" },
        },
        {
          name: "read",
          input: '{"path":"/etc/fstab"}',
          status: "ok",
          output: { output: "UUID=abcd" },
        },
      ]),
      msg("assistant", "The root disk is 91% full."),
      {
        kind: "tool_calls",
        by: "user",
        tools: [{
          name: "bash",
          input: "du -sh ~/.cache",
          status: "ok",
          exit_code: 0,
          output: { output: "4.0G" },
        }],
      },
      { kind: "context_snapshot", snapshot: "compaction", summary: "Free disk space" },
      msg("user", "Clean the cache"),
      {
        kind: "tool_calls",
        by: "agent",
        tools: [{ name: "bash", input: "rm -rf ~/.cache/pip", status: "pending", output: {} }],
      },
    ],
  };
}
