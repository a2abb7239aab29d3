import assert from "node:assert/strict";
import { parseBool, parseWindowDays, resolveConfig } from "./config.ts";

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
