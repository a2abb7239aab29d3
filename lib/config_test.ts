import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ENV_MACHINE,
  ENV_PGPASSFILE,
  ENV_PGPASSWORD,
  ENV_TEAM_URL,
  ENV_VARS_READ,
  parseBool,
  parseWindowDays,
  readHostname,
  readPgpassFile,
  resolveConfig,
} from "./config.ts";
import { withTempDir } from "../tests/helpers/temp.ts";
import { homeRuleEnvNames } from "./source_homes.ts";

Deno.test("parseBool accepts true/yes/on/1 in any case and nothing else", () => {
  for (const v of ["1", "true", "TRUE", "yes", "Yes", "on", " on "]) {
    assert.equal(parseBool(v), true, v);
  }
  for (const v of [undefined, "", "0", "false", "no", "off", "y", "enabled"]) {
    assert.equal(parseBool(v), false, String(v));
  }
});

Deno.test("resolveConfig defaults the state root to $HOME/.intendant", () => {
  const c = resolveConfig({ HOME: "/home/u" }, { cwd: "/w" });
  assert.equal(c.stateRoot, "/home/u/.intendant");
  assert.equal(c.logsDir, "/home/u/.intendant/logs");
  assert.equal(c.messageSearch.storeRoot, "/home/u/.intendant/cache/message_search/v2");
  assert.equal(c.messageSearch.windowDays, 14);
  assert.equal(c.logFile, null);
  assert.deepEqual(c.agentHomes.codex, { path: "/home/u/.codex", explicit: false });
  assert.deepEqual(c.agentHomes.pi, { path: "/home/u/.pi/agent", explicit: false });
  assert.equal(c.server.host, "127.0.0.1");
});

Deno.test("resolveConfig honours INTENDANT_HOME, --log-file and agent-home variables", () => {
  const c = resolveConfig(
    {
      HOME: "/home/u",
      INTENDANT_HOME: "state",
      PI_CODING_AGENT_DIR: "~/pi",
      CODEX_HOME: "/x/codex",
      INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "yes",
      INTENDANT_MESSAGE_SEARCH_WINDOW_DAYS: "forever",
      INTENDANT_LOG_MESSAGES_JSON: "on",
    },
    { cwd: "/w", logFile: "pinned" },
  );
  assert.equal(c.stateRoot, "/w/state");
  assert.equal(c.logFile, "/w/pinned");
  assert.deepEqual(c.agentHomes.pi, { path: "/home/u/pi", explicit: true });
  assert.deepEqual(c.agentHomes.codex, { path: "/x/codex", explicit: true });
  assert.equal(c.messageSearch.homeOnly, true);
  assert.equal(c.messageSearch.windowDays, null);
  assert.equal(c.logMessagesJson, true);
});

Deno.test("resolveConfig rejects a missing home and bad numbers with the offending value", () => {
  assert.throws(() => resolveConfig({}, { cwd: "/" }), /INTENDANT_HOME or HOME/);
  assert.throws(
    () => resolveConfig({ HOME: "/h", INTENDANT_PORT: "99999" }, { cwd: "/" }),
    /"99999"/,
  );
  assert.throws(() => parseWindowDays("-3"), /"-3"/);
  assert.equal(parseWindowDays("7"), 7);
});

Deno.test("resolveConfig resolves every new source's home from its rule, defaults under HOME", () => {
  const c = resolveConfig({ HOME: "/home/u" }, { cwd: "/w" });
  const main = (s: keyof typeof c.sourceHomes) => c.sourceHomes[s].homes.map((h) => h.path);
  assert.deepEqual(main("gemini"), ["/home/u/.gemini"]);
  assert.deepEqual(main("qwen"), ["/home/u/.qwen"]);
  assert.deepEqual(main("copilot"), ["/home/u/.copilot"]);
  assert.deepEqual(main("cursor"), ["/home/u/.cursor"]);
  assert.deepEqual(main("droid"), ["/home/u/.factory"]);
  assert.deepEqual(main("opencode"), ["/home/u/.local/share/opencode"]);
  assert.deepEqual(main("goose"), ["/home/u/.local/share/goose"]);
  assert.deepEqual(c.sourceHomes.opencode.files, []);
  assert.equal(c.sourceHomes.gemini.homes[0]!.explicit, false);
  // The historical keys are the same homes.
  assert.deepEqual(c.agentHomes.claude, c.sourceHomes["claude-code"].homes[0]);
});

Deno.test("resolveConfig applies each rule's override: suffix, fallback, XDG base, legacy home, named file", () => {
  const c = resolveConfig({
    HOME: "/home/u",
    GEMINI_CLI_HOME: "~/g",
    QWEN_HOME: "/qh",
    COPILOT_HOME: "/c",
    XDG_CONFIG_HOME: "/xc",
    CURSOR_CONFIG_DIR: "cur",
    XDG_DATA_HOME: "/xd",
    OPENCODE_DB: "/dbs/oc.db",
  }, { cwd: "/w" });
  const main = (s: keyof typeof c.sourceHomes) => c.sourceHomes[s].homes.map((h) => h.path);
  // GEMINI_CLI_HOME replaces $HOME: the home is `<it>/.gemini`.
  assert.deepEqual(main("gemini"), ["/home/u/g/.gemini"]);
  assert.equal(c.sourceHomes.gemini.env, "GEMINI_CLI_HOME");
  // QWEN_HOME when QWEN_RUNTIME_DIR is unset, naming the base itself.
  assert.deepEqual(main("qwen"), ["/qh"]);
  assert.equal(c.sourceHomes.qwen.env, "QWEN_HOME");
  // Copilot's legacy $XDG_CONFIG_HOME/.copilot is read beside COPILOT_HOME.
  assert.deepEqual(main("copilot"), ["/c", "/xc/.copilot"]);
  assert.deepEqual(main("cursor"), ["/w/cur"]);
  assert.deepEqual(main("opencode"), ["/xd/opencode"]);
  assert.deepEqual(c.sourceHomes.opencode.files, [{ path: "/dbs/oc.db", env: "OPENCODE_DB" }]);
  // XDG_DATA_HOME moves Goose too, unless GOOSE_PATH_ROOT is set (then `<it>/data`).
  assert.deepEqual(main("goose"), ["/xd/goose"]);
  const g = resolveConfig({
    HOME: "/home/u",
    GOOSE_PATH_ROOT: "/gr",
    XDG_DATA_HOME: "/xd",
    QWEN_RUNTIME_DIR: "/qr",
    QWEN_HOME: "/qh",
    OPENCODE_DB: "named.db",
  }, { cwd: "/w" });
  assert.deepEqual(g.sourceHomes.goose.homes, [{ path: "/gr/data", explicit: true }]);
  assert.deepEqual(g.sourceHomes.qwen.homes, [{ path: "/qr", explicit: true }]);
  // A relative OPENCODE_DB names a file in the data dir.
  assert.deepEqual(g.sourceHomes.opencode.files, [{
    path: "/xd/opencode/named.db",
    env: "OPENCODE_DB",
  }]);
});

Deno.test("every variable a home rule reads is one the program reads (and the profile lets through)", () => {
  for (const v of homeRuleEnvNames()) assert.ok(ENV_VARS_READ.includes(v), v);
});

Deno.test("resolveConfig carries the team settings raw: --team over INTENDANT_TEAM_URL, PGPASSFILE, INTENDANT_MACHINE", () => {
  const none = resolveConfig({ HOME: "/home/u" }, { cwd: "/w" });
  assert.deepEqual(none.team, {
    url: null,
    machine: null,
    pgpassword: null,
    pgpassFile: "/home/u/.pgpass",
  });
  const env = {
    HOME: "/home/u",
    INTENDANT_TEAM_URL: "postgres://a@h/env",
    INTENDANT_MACHINE: "ci-7",
    PGPASSWORD: " pw ",
    PGPASSFILE: "~/conf/pgpass",
  };
  const c = resolveConfig(env, { cwd: "/w" });
  assert.deepEqual(c.team, {
    url: "postgres://a@h/env",
    machine: "ci-7",
    pgpassword: " pw ",
    pgpassFile: "/home/u/conf/pgpass",
  });
  assert.equal(
    resolveConfig(env, { cwd: "/w", team: "postgres://a@h/flag" }).team.url,
    "postgres://a@h/flag",
  );
  assert.equal(
    resolveConfig({ ...env, PGPASSFILE: "rel/pp" }, { cwd: "/w" }).team.pgpassFile,
    "/w/rel/pp",
  );
  // A bad machine name does not break configuration: lib/team validates it when used.
  assert.equal(
    resolveConfig({ ...env, INTENDANT_MACHINE: "bad name" }, { cwd: "/w" }).team.machine,
    "bad name",
  );
  for (const v of [ENV_TEAM_URL, ENV_MACHINE, ENV_PGPASSWORD, ENV_PGPASSFILE]) {
    assert.ok(ENV_VARS_READ.includes(v), v);
  }
});

Deno.test("readPgpassFile returns the text and mode, follows a symlink, answers null when absent", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, ".pgpass");
    assert.equal(await readPgpassFile(path), null);
    await Deno.writeTextFile(path, "h:5432:d:u:pw\n");
    await Deno.chmod(path, 0o600);
    const r = await readPgpassFile(path);
    assert.deepEqual({ ...r, mode: r!.mode! & 0o777 }, {
      path,
      text: "h:5432:d:u:pw\n",
      mode: 0o600,
      isFile: true,
    });
    await Deno.chmod(path, 0o644);
    assert.equal((await readPgpassFile(path))!.mode! & 0o777, 0o644);
    // A dotfile manager's symlink: read through, with the target's mode (libpq's stat).
    const link = join(dir, "linked");
    await Deno.symlink(path, link);
    const viaLink = await readPgpassFile(link);
    assert.equal(viaLink!.text, "h:5432:d:u:pw\n");
    assert.equal(viaLink!.path, link);
    // A directory is reported as not a plain file (the lookup then warns and ignores it).
    assert.equal((await readPgpassFile(dir))!.isFile, false);
  });
});

Deno.test({
  name: "readHostname answers the hostname, or null where sys is not granted (the locked profiles)",
  permissions: { sys: false },
  fn() {
    assert.equal(readHostname(), null);
  },
});

Deno.test("readHostname answers the hostname when sys is granted", () => {
  assert.equal(readHostname(), Deno.hostname());
});
