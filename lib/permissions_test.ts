import assert from "node:assert/strict";
import { join } from "node:path";
import { DAEMON_ALLOCATOR_ENV, resolveConfig } from "./config.ts";
import {
  mcpProfile,
  profileFlags,
  runProfile,
  serveProfile,
  STATIC_PROFILES,
  TEAM_CLIENT_ENV,
  teamGrants,
  teamProfile,
} from "./permissions.ts";
import { DAEMON_V8_FLAGS, lockedCommand, lockedEnv, RUNTIME_CONFIG } from "./relaunch.ts";

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
  // The runtime config: what the child imports and nothing a test or a build needs.
  assert.ok(fromRepo.includes(`--config=${join(ROOT, RUNTIME_CONFIG)}`), fromRepo.join(" "));
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

Deno.test("a team URL adds net to exactly its host:port, the client's env names and the password file; none changes nothing", () => {
  const base = { HOME: "/h" };
  const none = resolveConfig(base, { cwd: "/w", port: 9000 });
  assert.equal(teamGrants(none), null);
  const plainServe = serveProfile(none);
  const plainMcp = mcpProfile(none);
  assert.ok(!plainServe.env.some((e) => TEAM_CLIENT_ENV.includes(e)));

  // A URL without a password: the password file is read (PGPASSFILE or ~/.pgpass).
  const cfg = resolveConfig({ ...base, INTENDANT_TEAM_URL: "postgres://m@db.example:6543/team" }, {
    cwd: "/w",
    port: 9000,
  });
  const serve = serveProfile(cfg);
  assert.deepEqual(serve.net, [...plainServe.net, "db.example:6543"]);
  assert.deepEqual(serve.read, [...plainServe.read, "/h/.pgpass"]);
  assert.deepEqual(serve.write, plainServe.write);
  assert.deepEqual(serve.env, [...plainServe.env, ...TEAM_CLIENT_ENV]);
  const mcp = mcpProfile(cfg);
  assert.deepEqual(mcp.net, [...plainMcp.net, "db.example:6543"]);
  assert.deepEqual(mcp.write, plainMcp.write);
  assert.ok(mcp.read.includes("/h/.pgpass"));
  // The team command: the database and the password file, nothing else, no write.
  const team = teamProfile(cfg);
  assert.deepEqual(team.net, ["db.example:6543"]);
  assert.deepEqual(team.read, ["/h/.pgpass"]);
  assert.deepEqual(team.write, []);
  assert.deepEqual(team.run, []);

  // The password in the URL or PGPASSWORD: the password file is never read, so not granted.
  for (
    const env of [
      { ...base, INTENDANT_TEAM_URL: "postgres://m:pw@db.example/team" },
      { ...base, INTENDANT_TEAM_URL: "postgres://m@db.example/team", PGPASSWORD: "pw" },
    ]
  ) {
    const c = resolveConfig(env, { cwd: "/w", port: 9000 });
    assert.deepEqual(teamGrants(c)!.read, []);
    assert.deepEqual(teamGrants(c)!.net, ["db.example:5432"]);
  }
  // IPv6 in brackets (Deno's flag syntax); --team wins over the env; PGPASSFILE moves the file.
  const v6 = resolveConfig(
    { ...base, INTENDANT_TEAM_URL: "postgres://m@db.example/team", PGPASSFILE: "/s/pgpass" },
    { cwd: "/w", port: 9000, team: "postgres://m@[::1]:5433/team" },
  );
  assert.deepEqual(teamGrants(v6), {
    net: ["[::1]:5433"],
    read: ["/s/pgpass"],
    env: [...TEAM_CLIENT_ENV],
  });
  assert.ok(
    profileFlags(serveProfile(v6)).includes(
      "--allow-net=127.0.0.1:9000,unix:/h/.intendant/run/http.sock,[::1]:5433",
    ),
  );
  // A comma in PGPASSFILE cannot widen the grant (F6).
  assert.throws(
    () =>
      serveProfile(
        resolveConfig({ ...base, INTENDANT_TEAM_URL: "postgres://m@h/d", PGPASSFILE: "/x,/" }, {
          cwd: "/w",
        }),
      ),
    /PGPASSFILE/,
  );
});

Deno.test("--locked with a team passes the full env list (an explicit --allow-env replaces the set's)", () => {
  const main = new URL("../main.ts", import.meta.url).href;
  const sets = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).permissions;
  assert.deepEqual(sets.team.env, [...STATIC_PROFILES.team.env]);
  for (const k of ["run", "ffi", "sys", "all", "write", "net", "read"]) {
    assert.equal(sets.team[k], undefined, `the team set grants no ${k} by itself`);
  }
  const o = (env: Record<string, string>, args: string[]) =>
    lockedCommand({
      cfg: resolveConfig(env, { cwd: "/w" }),
      args,
      mainModule: main,
      denoPath: "deno",
      os: "linux",
      projectRoot: "/w",
    });
  assert.ok(!o({ HOME: "/h" }, ["serve"]).some((a) => a.startsWith("--allow-env")));
  const withTeam = o({ HOME: "/h", INTENDANT_TEAM_URL: "postgres://m:p@db:5432/t" }, ["serve"]);
  const envFlag = withTeam.find((a) => a.startsWith("--allow-env="));
  assert.ok(envFlag, withTeam.join(" "));
  assert.deepEqual(envFlag.slice("--allow-env=".length).split(","), [...STATIC_PROFILES.team.env]);
  assert.ok(withTeam.some((a) => a.startsWith("--allow-net=") && a.endsWith(",db:5432")));
  const team = o({ HOME: "/h", INTENDANT_TEAM_URL: "postgres://m:p@db:5432/t" }, [
    "team",
    "status",
  ]);
  assert.ok(team.includes("-P=team"));
  assert.ok(!team.some((a) => a.startsWith("--allow-env")), "env from the team set");
  assert.ok(team.includes("--allow-net=db:5432"));
  assert.ok(!team.some((a) => a.startsWith("--allow-write") || a.startsWith("--allow-read")));
  assert.match(
    JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.team,
    /-P=launch main\.ts team --locked/,
  );
});

Deno.test("runtime/deno.json mirrors deno.json's permission sets and runtime packages, pinned to deno.lock's versions", () => {
  const dev = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  const rt = JSON.parse(Deno.readTextFileSync(join(ROOT, RUNTIME_CONFIG)));
  // -P=<set> reads the set from the config in use: both must declare the same sets.
  assert.deepEqual(rt.permissions, dev.permissions);
  // Every runtime import is the dev config's, with the same specifier; none is dev-only.
  for (const [k, v] of Object.entries(rt.imports)) assert.equal(dev.imports[k], v, k);
  for (const devOnly of ["esbuild", "playwright-core", "fast-check", "preact", "htm"]) {
    assert.equal(rt.imports[devOnly], undefined, `${devOnly} is not a runtime package`);
  }
  // Installed on first use into runtime/node_modules (quietly, under the tasks' --quiet).
  assert.equal(rt.nodeModulesDir, "auto");
  assert.deepEqual(rt.lock, { path: "./deno.lock", frozen: true });
  // The runtime lock is a subset of deno.lock, entry for entry (same versions, same hashes).
  const devLock = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.lock")));
  const rtLock = JSON.parse(Deno.readTextFileSync(join(ROOT, "runtime", "deno.lock")));
  for (const [k, v] of Object.entries(rtLock.specifiers)) assert.equal(devLock.specifiers[k], v, k);
  for (const [k, v] of Object.entries(rtLock.npm)) assert.deepEqual(devLock.npm[k], v, k);
  for (const name of Object.keys(rtLock.npm)) {
    assert.doesNotMatch(name, /^(esbuild|@esbuild\/|playwright-core|fast-check|preact|htm)@/);
  }
  // Every task that runs main.ts (or install.ts) runs it quietly under the runtime config;
  // every other deno command installs the dev packages first (deno.json is "manual").
  for (const [name, task] of Object.entries(dev.tasks as Record<string, string>)) {
    if (/^deno run .* (main|install)\.ts\b/.test(task)) {
      assert.ok(
        task.startsWith(`deno run --quiet --config=${RUNTIME_CONFIG} `),
        `${name}: ${task}`,
      );
    } else if (
      /^(INTENDANT_\w+=\S+ )?deno (run|test|check) /.test(task.replace(/^deno task deps && /, ""))
    ) {
      assert.ok(task.startsWith("deno task deps && "), `${name}: ${task}`);
    }
  }
  assert.equal(dev.nodeModulesDir, "manual");
});

Deno.test("the locked daemon gets the allocator settings the user did not set; other modes none", () => {
  const cfg = resolveConfig({ HOME: "/h" }, { cwd: "/w" });
  assert.deepEqual(lockedEnv({ cfg, args: ["serve"] }), DAEMON_ALLOCATOR_ENV);
  assert.deepEqual(lockedEnv({ cfg, args: ["mcp"] }), {});
  assert.deepEqual(lockedEnv({ cfg, args: ["run", "x"] }), {});
  // A value the user chose is inherited untouched (not in the child's additions).
  const own = resolveConfig({ HOME: "/h", MALLOC_ARENA_MAX: "8" }, { cwd: "/w" });
  const env = lockedEnv({ cfg: own, args: ["serve"] });
  assert.equal(env.MALLOC_ARENA_MAX, undefined);
  assert.equal(env.MALLOC_TRIM_THRESHOLD_, "131072");
  // The team URL travels in the environment of every mode, never in argv.
  const team = resolveConfig({ HOME: "/h" }, { cwd: "/w", team: "postgres://u:pw@h/db" });
  assert.equal(
    lockedEnv({ cfg: team, args: ["team", "status"] }).INTENDANT_TEAM_URL,
    "postgres://u:pw@h/db",
  );
  assert.equal(lockedEnv({ cfg: team, args: ["serve"] }).MALLOC_ARENA_MAX, "2");
});
