/**
 * What `intendant serve` says at start, with the real program (issue 14, item 6): in a
 * hermetic home where only Codex has transcripts, one line per source — Codex found with
 * its directory, every other source absent with the directory it looked at and the
 * variable that points it elsewhere — then a line when the first sweep is done, with the
 * counts the API reports. And `deno task start` itself (the README's first command) prints
 * none of Deno's own lines: no config-permissions warning and no package download lines on
 * the fresh DENO_DIR of the hermetic HOME (issue 25 item 15; it printed 215), only the
 * task line, and the banner once.
 * A taken port names the port and the fix (exit 6), and a second daemon on one state root
 * is told another daemon serves it, with that daemon's pid and port (issue 25 item 12).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildCodexFixture } from "./fixtures/codex_fixture.ts";
import { MAIN, waitFor } from "./helpers/cli.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

/** A spawned process whose output is collected as it arrives. */
function spawn(args: string[], env: Record<string, string>, cwd: string) {
  const child = new Deno.Command(DENO, {
    args,
    cwd,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { stdout: "", stderr: "" };
  const pump = async (s: ReadableStream<Uint8Array>, k: "stdout" | "stderr") => {
    const dec = new TextDecoder();
    for await (const chunk of s) out[k] += dec.decode(chunk, { stream: true });
  };
  const done = Promise.all([
    child.status,
    pump(child.stdout, "stdout"),
    pump(child.stderr, "stderr"),
  ])
    .then(([status]) => status.code);
  return { child, out, done };
}

/** SIGTERM to `child` unless it already exited (its status and stderr then say why). */
function stop(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGTERM");
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
}

Deno.test("`serve` prints found/absent per source and a first-sweep line matching the API", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no" });
    await buildCodexFixture(env.CODEX_HOME!);
    const p = spawn(["run", "-A", "--quiet", MAIN, "serve", "--port", "0"], env, root);
    try {
      await waitFor(() => p.out.stdout.includes("First sweep done"), 30_000, "first sweep line");
      const out = p.out.stdout;
      const home = join(root, "home");
      assert.match(out, new RegExp(`^  codex +found +${home}/\\.codex/sessions$`, "m"));
      for (
        const [src, path, variable] of [
          ["intendant", join(root, "state", "logs"), "INTENDANT_HOME"],
          ["claude-code", `${home}/.claude/projects`, "CLAUDE_CONFIG_DIR"],
          ["kimi", `${home}/.kimi-code/sessions`, "KIMI_CODE_HOME"],
          ["pi", `${home}/.pi/agent/sessions`, "PI_CODING_AGENT_DIR"],
          ["gemini", `${home}/.gemini/tmp`, "GEMINI_CLI_HOME"],
          ["qwen", `${home}/.qwen/projects`, "QWEN_RUNTIME_DIR"],
          ["copilot", `${home}/.copilot/session-state`, "COPILOT_HOME"],
          ["cursor", `${home}/.cursor/projects`, "CURSOR_CONFIG_DIR"],
          // No variable of its own moves Factory Droid's home: HOME does.
          ["droid", `${home}/.factory/sessions`, "HOME"],
          ["opencode", `${home}/.local/share/opencode`, "XDG_DATA_HOME"],
          ["goose", `${home}/.local/share/goose/sessions`, "GOOSE_PATH_ROOT"],
        ]
      ) {
        assert.match(
          out,
          new RegExp(`^  ${src} +absent +${path} \\(.*${variable}.*\\)$`, "m"),
          src,
        );
      }
      const info = JSON.parse(Deno.readTextFileSync(join(root, "state", "daemon.json")));
      const cov = await (await fetch(`http://127.0.0.1:${info.port}/api/coverage`, {
        headers: { authorization: `Bearer ${info.token}` },
      })).json();
      assert.equal(cov.state, "ready");
      const codex = cov.sources.codex;
      assert.ok(codex.sessions > 0);
      const line =
        /^First sweep done in [\d.]+ s: (\d+) sessions, (\d+) messages indexed \(sessions\/messages: codex (\d+)\/(\d+)\)$/m
          .exec(out);
      assert.ok(line, out);
      assert.deepEqual(line.slice(1).map(Number), [
        codex.sessions,
        codex.records,
        codex.sessions,
        codex.records,
      ]);
      assert.ok(out.indexOf("Sources:") > out.indexOf("Open: "), "the link comes first");
    } finally {
      p.child.kill("SIGTERM");
      assert.equal(await p.done, 0, p.out.stderr);
    }
  }));

Deno.test("`deno task start` prints none of Deno's own lines, only the task line, and its banner once", () =>
  withTempDir(async (root) => {
    // The hermetic HOME makes DENO_DIR fresh: Deno fetches npm metadata again (quietly).
    const env = hermeticEnv(root, { INTENDANT_PORT: "0", DENO_NO_UPDATE_CHECK: "1" });
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const p = spawn(["task", "start"], env, REPO_ROOT);
    try {
      await waitFor(() => p.out.stdout.includes("First sweep done"), 60_000, "the locked daemon");
    } finally {
      stop(p.child);
      assert.equal(await p.done, 0, p.out.stderr);
    }
    const start = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json"))).tasks.start;
    assert.deepEqual(p.out.stderr.split("\n").filter(Boolean), [`Task start ${start}`]);
    assert.match(p.out.stdout, /^Intendant is serving /m);
    assert.equal(p.out.stdout.split("Intendant is serving").length, 2, "the banner once");
  }));

/** Runs `intendant serve …args` to its end (it must not start). */
async function serveOnce(args: string[], env: Record<string, string>, cwd: string) {
  const p = spawn(["run", "-A", "--quiet", MAIN, "serve", ...args], env, cwd);
  const code = await p.done;
  return { code, ...p.out };
}

Deno.test("a taken port is named with its fix, exit 6, by --port and INTENDANT_PORT alike", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root);
    const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (holder.addr as Deno.NetAddr).port;
    try {
      const want = `intendant: port ${port} on 127.0.0.1 is in use\n` +
        "hint: pass --port N or set INTENDANT_PORT\n";
      const byFlag = await serveOnce(["--port", String(port)], env, root);
      assert.equal(byFlag.code, 6, byFlag.stderr);
      assert.equal(byFlag.stderr, want);
      const byEnv = await serveOnce([], { ...env, INTENDANT_PORT: String(port) }, root);
      assert.equal(byEnv.code, 6, byEnv.stderr);
      assert.equal(byEnv.stderr, want);
      assert.throws(() => Deno.statSync(join(root, "state", "daemon.json")), Deno.errors.NotFound);
    } finally {
      holder.close();
    }
  }));

Deno.test("a second daemon on one state root is told another daemon serves it, with its pid and port", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root);
    const first = spawn(["run", "-A", "--quiet", MAIN, "serve", "--port", "0"], env, root);
    try {
      await waitFor(() => first.out.stdout.includes("Open: "), 30_000, "the first daemon");
      const info = JSON.parse(Deno.readTextFileSync(join(root, "state", "daemon.json")));
      assert.equal(info.pid, first.child.pid);
      const head =
        `intendant: another intendant daemon is serving this state root (pid ${info.pid}, port ${info.port})`;
      // On another port, and on the first daemon's own port (not "port in use": the fix is
      // that daemon, not another port).
      for (const port of ["0", String(info.port)]) {
        const second = await serveOnce(["--port", port], env, root);
        assert.equal(second.code, 6, second.stderr);
        const lines = second.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 2, second.stderr);
        assert.ok(lines[0]!.startsWith(head), second.stderr);
        assert.match(lines[1]!, /^hint: .*intendant url.*kill \d+.*INTENDANT_HOME/);
        assert.doesNotMatch(second.stderr, /Address already in use|os error/);
      }
      // The first daemon's file is untouched.
      assert.deepEqual(JSON.parse(Deno.readTextFileSync(join(root, "state", "daemon.json"))), info);
    } finally {
      first.child.kill("SIGTERM");
      assert.equal(await first.done, 0, first.out.stderr);
    }
  }));
