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
