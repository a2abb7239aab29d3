/**
 * What `intendant serve` says at start, with the real program (issue 14, item 6): in a
 * hermetic home where only Codex has transcripts, one line per source — Codex found with
 * its directory, every other source absent with the directory it looked at and the
 * variable that points it elsewhere — then a line when the first sweep is done, with the
 * counts the API reports. And the `--locked` relaunch (what `deno task start` runs):
 * Deno's own start-up lines (the config-permissions warning, npm download lines on the
 * fresh DENO_DIR of the hermetic HOME) appear once, not once per process.
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

Deno.test("the --locked relaunch prints Deno's start-up warning and download lines once", () =>
  withTempDir(async (root) => {
    // The hermetic HOME makes DENO_DIR fresh: Deno re-fetches npm metadata, and prints so.
    const env = hermeticEnv(root, { INTENDANT_PORT: "0", DENO_NO_UPDATE_CHECK: "1" });
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const p = spawn(["run", "-P=launch", "main.ts", "serve", "--locked"], env, REPO_ROOT);
    try {
      // The child's own start-up lines come before its banner.
      await waitFor(() => p.out.stdout.includes("Open: "), 60_000, "the locked daemon");
    } finally {
      p.child.kill("SIGTERM");
      assert.equal(await p.done, 0, p.out.stderr);
    }
    const lines = p.out.stderr.split("\n").filter(Boolean);
    const warnings = lines.filter((l) => l.includes("experimental feature"));
    assert.equal(warnings.length, 1, p.out.stderr);
    const downloads = lines.filter((l) => l.startsWith("Download "));
    assert.equal(
      new Set(downloads).size,
      downloads.length,
      `a download line twice:\n${p.out.stderr}`,
    );
    assert.match(p.out.stdout, /^Intendant is serving /m);
    assert.equal(p.out.stdout.split("Intendant is serving").length, 2, "the banner once");
  }));
