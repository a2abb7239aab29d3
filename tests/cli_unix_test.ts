/**
 * The CLI behaves like a Unix tool, through the real program (issue 14, item 7):
 *  - a reader that closes the pipe early (`intendant sessions | head -1`) ends the output
 *    quietly: exit 0, nothing on stderr, for every subcommand;
 *  - names, titles, snippets and project paths from transcripts reach the terminal without
 *    a control byte, in the human listings and in --json (escaped there, losslessly);
 *  - `intendant run --help` documents the mock script format;
 *  - every subcommand has a `deno task` of its name, and every --json print goes through
 *    the one terminal-safe JSON helper.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../lib/cli/mod.ts";
import { mockScriptKeys } from "../lib/runner/mod.ts";
import { ccUuid, ClaudeWriter, msgId } from "./fixtures/claude_fixture.ts";
import { MAIN, runIntendant, sessionOf } from "./helpers/cli.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const dec = new TextDecoder();

/** What no terminal output may hold: C0 (but TAB, LF), DEL, C1, bidi controls. */
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** The real program with stdout and stderr piped, in the hermetic env rooted at `root`. */
function intendant(root: string, args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: root,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root),
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  });
}

/** Runs `args` with a stdout whose reader is gone before the program writes a byte. */
async function withClosedStdout(root: string, args: string[]) {
  const child = intendant(root, args).spawn();
  // The program needs far longer to start than this takes: every write it makes hits EPIPE.
  await child.stdout.cancel();
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  return { code: status.code, stderr };
}

Deno.test("`intendant sessions | head -1`: the reader leaves after one line, the program ends quietly with 0", () =>
  withTempDir(async (root) => {
    sessionOf(await runIntendant(root, ["run", "task 1"]));
    sessionOf(await runIntendant(root, ["run", "task 2"]));
    // Far more output than a pipe holds (64 KiB) plus what one read takes, so the program is
    // still writing when the reader closes: long project paths, many sessions.
    const project = "/" +
      Array.from({ length: 12 }, (_, i) => `d${i}-${"p".repeat(240)}`).join("/");
    const logsDir = join(hermeticEnv(root).INTENDANT_HOME!, "logs");
    for (let i = 0; i < 100; i++) {
      await writeNativeSession(logsDir, { turns: 0, task: `bulk task ${i}`, project });
    }
    const child = intendant(root, ["sessions", "--limit", "1000"]).spawn();
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.getReader();
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      first += dec.decode(value, { stream: true });
    }
    await reader.cancel();
    const status = await child.status;
    assert.match(first, /^\d{4}-\d\d-\d\d \d\d:\d\d {2}intendant /);
    assert.equal(await stderr, "");
    assert.equal(status.code, 0);
  }));

Deno.test("every subcommand ends quietly with 0 when its stdout is closed; run still finishes its session", () =>
  withTempDir(async (root) => {
    const r = await withClosedStdout(root, ["run", "Closed pipe quokka task"]);
    assert.deepEqual(r, { code: 0, stderr: "" }, "run");
    const listed = JSON.parse((await runIntendant(root, ["sessions", "--json"])).stdout);
    assert.equal(listed.sessions[0].status, "completed", "the session ran to its end");
    const cases = [
      ["--help"],
      ["--version"],
      ...COMMANDS.map((c) => [c.name, "--help"]),
      ["index"],
      ["index", "--json"],
      ["sessions"],
      ["sessions", "--json"],
      ["search", "quokka"],
      ["search", "quokka", "--json"],
    ];
    for (const args of cases) {
      assert.deepEqual(await withClosedStdout(root, args), { code: 0, stderr: "" }, args.join(" "));
    }
  }));

const ESC = "\x1b";
/** Terminal attacks an argv can carry (no NUL, no lone surrogate). */
const HOSTILE = `${ESC}]0;pwned title\x07 ${ESC}[2J${ESC}[31mred${ESC}[0m ` +
  `${ESC}]8;;https://evil.example/${ESC}\\link${ESC}]8;;${ESC}\\ \x9b2J \u202Egnp.exe\u2066x\u2069 ` +
  `bel\x07 bs\b cr\r`;
/** Plus what only a file can carry. */
const HOSTILE_FILE = `${HOSTILE} nul\x00 lone\ud800 low\udc00 del\x7f c1\x85 dcs\x90q\x9c`;

Deno.test("sessions and search print names, titles, snippets and projects without a control byte", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" });
    const run = async (args: string[]) => {
      const o = await intendant(root, args, env).output();
      const r = { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      return r;
    };
    const project = join(root, `proj-${ESC}]0;pwned\x07${ESC}[2J${ESC}[31m\x9b2J\u202Eevil`);
    Deno.mkdirSync(project);
    // A native session made by the real program: hostile name, task and project directory.
    await run([
      "run",
      "--project",
      project,
      "--name",
      `${HOSTILE} alpha`,
      `Deploy the zebra ${HOSTILE}`,
    ]);
    // One written by the real writer, its meta then hand-edited with a hostile name.
    const b = await writeNativeSession(join(env.INTENDANT_HOME!, "logs"), {
      turns: 1,
      task: `Feed the zebra ${HOSTILE_FILE}`,
      project,
    });
    const metaPath = join(b.dir, "session_meta.json");
    const meta = JSON.parse(Deno.readTextFileSync(metaPath));
    Deno.writeTextFileSync(metaPath, JSON.stringify({ ...meta, name: `${HOSTILE_FILE} beta` }));
    // An external (Claude Code) session: hostile title, working directory and prompt.
    const now = Date.now() - 60_000;
    let t = now;
    const sid = ccUuid("unix:hostile");
    const w = new ClaudeWriter({
      sessionId: sid,
      cwd: project,
      version: "2.1.150",
      clock: () => (t += 1000),
    });
    w.user(`Where is the zebra ${HOSTILE_FILE}`, {}, null);
    w.assistant([{ type: "text", text: `The zebra is here ${HOSTILE_FILE}` }], msgId("unix:m1"));
    w.meta({ type: "custom-title", customTitle: `${HOSTILE_FILE} gamma`, sessionId: sid });
    const ccDir = join(env.CLAUDE_CONFIG_DIR!, "projects", "-hostile-project");
    Deno.mkdirSync(ccDir, { recursive: true });
    Deno.writeTextFileSync(join(ccDir, `${sid}.jsonl`), w.text());
    await run(["index"]);

    const sessions = await run(["sessions"]);
    const search = await run(["search", "zebra"]);
    for (const [what, out] of [["sessions", sessions.stdout], ["search", search.stdout]]) {
      assert.doesNotMatch(out!, FORBIDDEN, what);
      assert.doesNotMatch(out!, /\]0;pwned|\[2J|\]8;;/, `${what}: no sequence residue`);
    }
    // What is left to read is still there: names, titles, the project, the marked hits.
    for (const word of ["alpha", "beta", "gamma", "red link", "gnp.exe", "proj-"]) {
      assert.ok(sessions.stdout.includes(word), `sessions shows "${word}":\n${sessions.stdout}`);
    }
    // Five hits: both tasks, the mock's echo of the first, the Claude prompt and reply.
    assert.equal(search.stdout.match(/«zebra»/g)?.length, 5, search.stdout);
    assert.ok(search.stdout.includes("gamma"), search.stdout);

    // --json escapes C1, bidi and separators too (JSON.stringify leaves them raw), and the
    // values parse back exactly: the external title still holds its original bytes.
    const sj = await run(["sessions", "--json"]);
    const qj = await run(["search", "zebra", "--json"]);
    for (const out of [sj.stdout, qj.stdout]) assert.doesNotMatch(out, FORBIDDEN);
    const listed = JSON.parse(sj.stdout).sessions as {
      title: string | null;
      name: string | null;
    }[];
    assert.ok(listed.some((s) => s.title?.includes(`${ESC}]0;pwned title\x07`)));
    assert.ok(listed.some((s) => s.title?.includes("\x9b2J \u202Egnp.exe")));
    // Native names are stored and read clean (normalizeName strips controls).
    const names = listed.map((s) => s.name).filter((n) => n !== null);
    assert.equal(names.length, 2);
    for (const n of names) assert.doesNotMatch(n!, FORBIDDEN);
    assert.equal(JSON.parse(qj.stdout).groups.length, 3);
  }));

Deno.test("an error quoting a hostile argument prints it without its control bytes", () =>
  withTempDir(async (root) => {
    const r = await runIntendant(root, ["ctl", "steer", `zz${HOSTILE}`, "x"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^intendant: Invalid session id "zz/);
    assert.doesNotMatch(r.stderr, FORBIDDEN);
    assert.equal(r.stderr.split("\n").length, 3, "one line and a hint");
  }));

Deno.test("`intendant run --help` documents the mock script: JSONC, every key, an example", () =>
  withTempDir(async (root) => {
    const r = await runIntendant(root, ["run", "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage: intendant run /);
    assert.match(r.stdout, /JSONC/);
    for (const { key } of mockScriptKeys()) {
      assert.match(r.stdout, new RegExp(`^ +${key} `, "m"), key);
    }
    assert.match(r.stdout, /"turns": \[/);
  }));

Deno.test("every subcommand has a deno task of its name that runs it", () => {
  const tasks: Record<string, string> = JSON.parse(
    Deno.readTextFileSync(join(REPO_ROOT, "deno.json")),
  ).tasks;
  for (const c of COMMANDS) {
    assert.match(tasks[c.name] ?? "", new RegExp(`main\\.ts ${c.name}\\b`), `deno task ${c.name}`);
  }
  assert.match(tasks.install ?? "", /install\.ts/);
});

Deno.test("every --json print in lib/cli goes through stringifyTerminalSafe", () => {
  const offenders: string[] = [];
  const dir = join(REPO_ROOT, "lib", "cli");
  for (const e of Deno.readDirSync(dir)) {
    // A command has no reason to stringify JSON but to print it.
    if (!/^cmd_.*\.ts$/.test(e.name) || e.name.endsWith("_test.ts")) continue;
    Deno.readTextFileSync(join(dir, e.name)).split("\n").forEach((l, i) => {
      if (/JSON\.stringify\(/.test(l)) offenders.push(`lib/cli/${e.name}:${i + 1}`);
    });
  }
  assert.deepEqual(offenders, [], "use stringifyTerminalSafe from lib/text/mod.ts");
});
