import assert from "node:assert/strict";
import type { DetailEntry, SessionSummary } from "../api_client.ts";
import { maskedForm } from "../../lib/secrets/mod.ts";
import { plantedKeys } from "../../tests/helpers/secret_keys.ts";
import { fenced, markdownFileName, sessionMarkdown } from "./markdown.ts";

const T0 = Date.UTC(2026, 6, 1, 9, 30, 0);

const session: SessionSummary = {
  key: "intendant:5e55a0f1",
  source: "intendant",
  session_id: "5e55a0f1",
  name: null,
  title: "Fix the café login bug",
  project: "/home/dev/shop",
  status: "running",
  created_ms: T0,
  updated_ms: T0 + 60_000,
  message_count: 3,
  source_gone: false,
  parent_session_id: null,
  resume_command: 'intendant run --resume 5e55a0f1 "…"',
};

const entries: DetailEntry[] = [
  {
    index: 0,
    kind: "message",
    ts_ms: T0,
    role: "user",
    text: "Fix the café login bug",
    detail: { provenance: "task" },
  },
  {
    index: 1,
    kind: "message",
    ts_ms: T0 + 1000,
    role: "assistant",
    text: "The cafe\u0301 page sets the cookie — 修复登录 🍪",
    superseded: true,
  },
  { index: 2, kind: "command_batch", ts_ms: T0 + 2000, text: "grep -r cookie src" },
  {
    index: 3,
    kind: "command_output",
    ts_ms: T0 + 3000,
    detail: { exit_codes: [0], output: { stdout: { excerpt: "src/a.ts: ```x```\n" } } },
  },
  { index: 4, kind: "cut", ts_ms: T0 + 4000, detail: { kind: "tail_rollback" } },
];

Deno.test("sessionMarkdown() renders the header, messages, commands and the rollback", () => {
  const md = sessionMarkdown(session, entries, { total: 5 });
  assert.equal(
    md,
    [
      "# Fix the café login bug",
      [
        "- Source: intendant",
        "- Session: `5e55a0f1`",
        "- Project: `/home/dev/shop`",
        "- Status: running",
        "- Started: 2026-07-01T09:30:00Z",
        "- Updated: 2026-07-01T09:31:00Z",
        "- Messages: 3",
        '- Resume: `intendant run --resume 5e55a0f1 "…"`',
      ].join("\n"),
      "### User · 2026-07-01T09:30:00Z _(task)_\n\nFix the café login bug",
      "### Assistant · 2026-07-01T09:30:01Z _(superseded)_\n\nThe cafe\u0301 page sets the cookie — 修复登录 🍪",
      "**Command · 2026-07-01T09:30:02Z**\n\n```sh\ngrep -r cookie src\n```",
      "**Output · 2026-07-01T09:30:03Z (exit 0)**\n\nstdout:\n\n````\nsrc/a.ts: ```x```\n````",
      "---\n\n**⟲ Rollback · 2026-07-01T09:30:04Z** — the messages it cut are superseded (tail_rollback)\n\n---",
    ].join("\n\n") + "\n",
  );
});

Deno.test("sessionMarkdown() says when only part of the session was exported", () => {
  const md = sessionMarkdown({ ...session, name: "Renamed" }, entries.slice(1, 3), { total: 9 });
  assert.ok(md.startsWith("# Renamed\n"));
  assert.ok(md.includes("> Partial export: entries 2–3 of 9."));
});

Deno.test("fenced() uses a fence longer than any backtick run inside", () => {
  assert.equal(fenced("a ```` b"), "`````\na ```` b\n`````");
  assert.equal(fenced("plain\n", "sh"), "```sh\nplain\n```");
});

Deno.test("markdownFileName() keeps safe characters and the id's head", () => {
  assert.equal(markdownFileName(session), "fix-the-cafe-login-bug-5e55a0f1.md");
  assert.equal(markdownFileName({ name: null, title: "修复", session_id: "x/y" }), "session-xy.md");
});

Deno.test("sessionMarkdown() exports a turn's tool calls under its message, outputs fenced", () => {
  const md = sessionMarkdown(session, [{
    index: 0,
    kind: "message",
    ts_ms: T0,
    role: "assistant",
    text: "Looking.",
    tools: [{
      name: "shell",
      input: "echo ```hi```",
      ts_ms: T0,
      status: "error",
      exit_code: 3,
      output: { stdout: { excerpt: "hi\n" }, stderr: { unavailable: "missing" } },
    }],
  }], { total: 1 });
  assert.ok(
    md.includes(
      "### Assistant · 2026-07-01T09:30:00Z\n\nLooking.\n\n**Tool call · shell · exit 3**",
    ),
  );
  assert.ok(md.includes("````sh\necho ```hi```\n````"));
  assert.ok(md.includes("stdout:\n\n```\nhi\n```"));
  assert.ok(md.includes("stderr: _unavailable (missing)_"));
});

Deno.test("sessionMarkdown() masks every secret, wherever it sits, and names its kind", () => {
  const keys = plantedKeys();
  const pick = (kind: string) => keys.find((k) => k.kind === kind)!;
  const [title, project, input, output] = [
    pick("github token"),
    pick("npm token"),
    pick("stripe key"),
    pick("jwt"),
  ];
  const md = sessionMarkdown({
    ...session,
    title: `Rotate ${title.secret}`,
    project: `/home/dev/${project.secret}`,
  }, [
    {
      index: 0,
      kind: "message",
      ts_ms: T0,
      role: "user",
      text: keys.map((k) => `${k.line} — keep it safe.`).join("\n"),
      tools: [{
        name: "shell",
        input: `curl -H "x-key: ${input.secret}" https://api.example.test`,
        ts_ms: T0,
        status: "ok",
        exit_code: 0,
        output: { stdout: { excerpt: `token=${output.secret}\n` } },
      }],
    },
    { index: 1, kind: "command_batch", ts_ms: T0, text: keys[0]!.line },
  ], { total: 2 });
  for (const k of keys) {
    assert.ok(!md.includes(k.secret), `${k.kind} leaked into the export`);
    assert.ok(md.includes(maskedForm(k.secret, k.kind)), `${k.kind} masked with its kind`);
  }
  assert.ok(md.includes("— keep it safe."), "the prose around a key is kept");
  assert.ok(md.includes("```sh\ncurl -H"), "fences intact");
});

Deno.test("markdownFileName() never carries a secret from the title", () => {
  const key = plantedKeys().find((k) => k.kind === "github token")!.secret;
  const name = markdownFileName({ name: null, title: `use ${key} here`, session_id: "ab12" });
  assert.ok(!name.includes(key.slice(4)), name);
  assert.match(name, /^use-ghp_\.\.\.-github-token-here-ab12\.md$/);
});
