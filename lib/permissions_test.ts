import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "./config.ts";
import { profileFlags, runProfile, serveProfile, STATIC_PROFILES } from "./permissions.ts";
import { DAEMON_V8_FLAGS, lockedCommand } from "./relaunch.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("deno.json permission sets declare exactly the static parts of the profile", () => {
  const cfg = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  const sets = cfg.permissions;
  assert.deepEqual(sets.serve.env, [...STATIC_PROFILES.serve.env]);
  assert.deepEqual(sets.run.env, [...STATIC_PROFILES.run.env]);
  assert.deepEqual(sets.run.run, [...STATIC_PROFILES.run.run]);
  assert.deepEqual(sets.serve.net, ["127.0.0.1:8765"]);
  for (const k of ["run", "ffi", "sys", "all", "write", "import"]) {
    assert.equal(sets.serve[k], undefined, `serve grants no ${k}`);
  }
  assert.match(cfg.tasks.start, /-P=launch main\.ts serve --locked/);
});

Deno.test("the serve profile reads the state root and the agent homes, writes only the state root, runs nothing", () => {
  const cfg = resolveConfig({ HOME: "/h", CODEX_HOME: "/x/codex" }, { cwd: "/w", port: 9000 });
  const p = serveProfile(cfg);
  // The port, and the unix socket behind the daemon's TCP front (exact path: Deno scopes it so).
  assert.deepEqual(p.net, ["127.0.0.1:9000", "unix:/h/.intendant/run/http.sock"]);
  assert.deepEqual(p.read, [
    "/h/.intendant",
    "/x/codex",
    "/h/.claude",
    "/h/.kimi-code",
    "/h/.pi/agent",
    // Issue 17's sources: only their transcript roots, never the whole home.
    "/h/.gemini/tmp",
    "/h/.gemini/projects.json",
    "/h/.qwen/projects",
    "/h/.copilot/session-state",
    "/h/.cursor/projects",
    "/h/.factory/sessions",
    "/h/.factory/projects",
    "/h/.local/share/opencode",
    "/h/.local/share/goose/sessions",
  ]);
  assert.deepEqual(p.write, ["/h/.intendant"]);
  assert.deepEqual(p.run, []);
  const flags = profileFlags(p);
  assert.ok(flags.includes("--no-prompt"));
  assert.ok(
    !flags.some((f) =>
      f.startsWith("--allow-run") || f.startsWith("--allow-all") || f.startsWith("--allow-ffi") ||
      f.startsWith("--allow-sys")
    ),
  );
  const homeOnly = serveProfile(
    resolveConfig({ HOME: "/h", INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "1" }, {
      cwd: "/w",
      port: 0,
    }),
  );
  assert.deepEqual(homeOnly.read, ["/h/.intendant"]);
  assert.deepEqual(homeOnly.net, ["127.0.0.1", "unix:/h/.intendant/run/http.sock"]);
  const r = runProfile(cfg, "/proj");
  assert.deepEqual(r.run, ["sh", "setsid"]);
  assert.deepEqual(r.write, ["/h/.intendant", "/tmp"]);
});

Deno.test("--locked relaunches with the deno.json set from a checkout and explicit flags for the single file", () => {
  const cfg = resolveConfig({ HOME: "/h" }, { cwd: "/w" });
  const fromRepo = lockedCommand({
    cfg,
    args: ["serve"],
    mainModule: new URL("../main.ts", import.meta.url).href,
    denoPath: "deno",
    os: "linux",
    projectRoot: "/w",
  });
  assert.ok(fromRepo.includes("-P=serve"));
  assert.ok(fromRepo.some((a) => a.startsWith("--config=")));
  assert.ok(!fromRepo.some((a) => a.startsWith("--allow-env")), "env comes from the set");
  assert.ok(fromRepo.includes(`--v8-flags=${DAEMON_V8_FLAGS.join(",")}`), "the daemon's V8 flags");
  // The launcher already printed Deno's own start-up lines once (issue 14).
  assert.equal(fromRepo[1], "--quiet", "the child is quiet");
  const single = lockedCommand({
    cfg,
    args: ["run", "x"],
    mainModule: "file:///nowhere/intendant.js",
    denoPath: "deno",
    os: "linux",
    projectRoot: "/w",
  });
  assert.ok(!single.includes("-P=run"));
  assert.ok(!single.some((a) => a.startsWith("--v8-flags")), "the runner keeps V8 defaults");
  assert.ok(single.includes("--allow-run=sh,setsid"));
  assert.deepEqual(single.slice(-3), ["file:///nowhere/intendant.js", "run", "x"]);
});

Deno.test("the serve profile grants each new source's transcript roots under its overridden homes, and nothing wider", () => {
  const cfg = resolveConfig({
    HOME: "/h",
    GEMINI_CLI_HOME: "/g",
    QWEN_HOME: "/q-home",
    QWEN_RUNTIME_DIR: "/q-run",
    COPILOT_HOME: "/c",
    XDG_CONFIG_HOME: "/cfg",
    CURSOR_CONFIG_DIR: "/cur",
    XDG_DATA_HOME: "/data",
    OPENCODE_DB: "custom.db",
    GOOSE_PATH_ROOT: "/goose",
  }, { cwd: "/w", port: 9000 });
  const read = serveProfile(cfg).read;
  assert.deepEqual(read.slice(5), [
    "/g/.gemini/tmp",
    "/g/.gemini/projects.json",
    "/q-run/projects",
    "/c/session-state",
    // Copilot CLI before 1.0.4 kept its home under XDG_CONFIG_HOME: still read.
    "/cfg/.copilot/session-state",
    "/cur/projects",
    "/h/.factory/sessions",
    "/h/.factory/projects",
    "/data/opencode",
    // OPENCODE_DB relative to the data dir, with its WAL (the snapshot copies both) and
    // its rollback journal (lstat'ed: a writer mid-transaction).
    "/data/opencode/custom.db",
    "/data/opencode/custom.db-wal",
    "/data/opencode/custom.db-journal",
    "/goose/data/sessions",
  ]);
  for (const wide of ["/g", "/g/.gemini", "/q-run", "/c", "/cur", "/h", "/data", "/goose"]) {
    assert.ok(!read.includes(wide), `${wide} is not granted whole`);
  }
});

Deno.test("F6 holds for the new variables: a comma in any of them is refused, naming it", () => {
  for (
    const name of [
      "GEMINI_CLI_HOME",
      "QWEN_RUNTIME_DIR",
      "QWEN_HOME",
      "COPILOT_HOME",
      "CURSOR_CONFIG_DIR",
      "OPENCODE_DB",
      "GOOSE_PATH_ROOT",
      "XDG_DATA_HOME",
      "XDG_CONFIG_HOME",
    ]
  ) {
    const value = name === "OPENCODE_DB" ? "/x,/" : "/x,/y";
    const cfg = resolveConfig({ HOME: "/h", [name]: value }, { cwd: "/w", port: 9000 });
    assert.throws(
      () => serveProfile(cfg),
      (err: Error) => err.name === "InvalidInputError" && err.message.includes(name),
      name,
    );
  }
});
