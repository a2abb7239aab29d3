/**
 * Archive search end to end (issue 29 item 4), real program, real files: a 40-day-old
 * Codex session (tests/helpers/archive_world.ts) is not found by `intendant search` with
 * the default 14-day window, and is found by `intendant search --archive` (human listing
 * and --json, searched in process), by `scope=archive` on the real daemon's loopback API
 * (which builds the archive behind its first full sweep), by the CLI through that daemon,
 * and by `search_messages` with scope "archive" through the official MCP SDK client.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runIntendant, spawnIntendant, waitFor, waitForDaemonJson } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { ARCHIVE_ENV, ARCHIVE_WORD, buildArchiveWorld } from "./helpers/archive_world.ts";

Deno.test("`intendant search --archive` finds the 40-day-old session the window skips; --json says archive", () =>
  withTempDir(async (root) => {
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const env = ARCHIVE_ENV;
    const idx = await runIntendant(root, ["index"], { env });
    assert.equal(idx.code, 0, idx.stderr);
    const normal = await runIntendant(root, ["search", "--json", ARCHIVE_WORD], { env });
    assert.equal(normal.code, 0, normal.stderr);
    assert.deepEqual(
      JSON.parse(normal.stdout).groups.map((g: { session_key: string }) => g.session_key),
      [w.youngKey],
    );
    const json = await runIntendant(root, ["search", "--archive", "--json", ARCHIVE_WORD], { env });
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.deepEqual(page.groups.map((g: { session_key: string }) => g.session_key), [w.oldKey]);
    assert.equal(page.archive.archive, true);
    assert.equal(page.archive.complete, true);
    assert.equal(page.window_days, null); // the archive's engine has no window
    assert.equal(page.archive.window_days, 14);
    const human = await runIntendant(root, ["search", "--archive", ARCHIVE_WORD], { env });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /migration plan/);
    assert.match(human.stdout, /\(from the archive: messages older than the 14-day window/);
    // The vault's copies are searched too: no "not covered" line for them.
    assert.doesNotMatch(human.stdout, /\(not covered: .*vault/);
  }));

Deno.test("the daemon answers scope=archive on loopback, builds the archive behind its sweep, and serves the CLI and MCP", () =>
  withTempDir(async (root) => {
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const run = spawnIntendant(root, ["serve", "--port", "0"], { env: ARCHIVE_ENV });
    try {
      const info = await waitForDaemonJson(root);
      const base = `http://127.0.0.1:${info.port}`;
      const headers = { authorization: `Bearer ${info.token}` };
      const get = async (q: string) => {
        const r = await fetch(`${base}/api/sessions/message-search?${q}`, { headers });
        return { status: r.status, body: await r.json() };
      };
      await waitFor(
        async () => (await get(`q=${ARCHIVE_WORD}`)).body.groups?.length === 1,
        20_000,
        "first sweep",
      );
      const normal = await get(`q=${ARCHIVE_WORD}`);
      assert.deepEqual(normal.body.groups.map((g: { session_key: string }) => g.session_key), [
        w.youngKey,
      ]);
      assert.equal(normal.body.archive, undefined);
      // Built in the background after the first full sweep: wait until it holds the session.
      await waitFor(
        async () =>
          (await get(`q=${ARCHIVE_WORD}&scope=archive`)).body.archive?.archived_sessions === 1,
        20_000,
        "archive build",
      );
      for (const sort of ["newest", "relevance"]) {
        const a = await get(`q=${ARCHIVE_WORD}&scope=archive&sort=${sort}&complete=true`);
        assert.equal(a.status, 200);
        assert.deepEqual(a.body.groups.map((g: { session_key: string }) => g.session_key), [
          w.oldKey,
        ]);
        assert.equal(a.body.archive.archive, true);
        assert.equal(a.body.archive.complete, true);
      }
      assert.equal((await get(`q=${ARCHIVE_WORD}&scope=bogus`)).status, 400);
      // The CLI asks the daemon, which answers from its archive.
      const cli = await runIntendant(root, ["search", "--archive", "--json", ARCHIVE_WORD], {
        env: ARCHIVE_ENV,
      });
      assert.equal(cli.code, 0, cli.stderr);
      const page = JSON.parse(cli.stdout);
      assert.equal(page.answered_by, "daemon");
      assert.deepEqual(page.groups.map((g: { session_key: string }) => g.session_key), [w.oldKey]);
      // MCP through the real SDK client: warm path (the daemon), scope archive vs local.
      const { client } = await connectMcp({
        ...hermeticEnv(root, ARCHIVE_ENV),
        PATH: Deno.env.get("PATH") ?? "",
      });
      try {
        const local = await callTool(client, "search_messages", { query: ARCHIVE_WORD });
        assert.equal(local.isError, false, local.text);
        assert.match(local.text, /rollout checklist/);
        assert.doesNotMatch(local.text, /migration plan/);
        const arch = await callTool(client, "search_messages", {
          query: ARCHIVE_WORD,
          scope: "archive",
        });
        assert.equal(arch.isError, false, arch.text);
        assert.match(arch.text, /migration plan/);
        assert.match(arch.text, /answered from the ARCHIVE/);
        assert.doesNotMatch(arch.text, /rollout checklist/);
      } finally {
        await client.close();
      }
    } finally {
      run.child.kill("SIGTERM");
      await run.done;
    }
  }));

Deno.test("MCP search_messages with scope archive works without a daemon (cold path)", () =>
  withTempDir(async (root) => {
    await buildArchiveWorld(join(root, "home", ".codex"));
    const { client } = await connectMcp({
      ...hermeticEnv(root, ARCHIVE_ENV),
      PATH: Deno.env.get("PATH") ?? "",
    });
    try {
      const local = await callTool(client, "search_messages", { query: ARCHIVE_WORD });
      assert.doesNotMatch(local.text, /migration plan/);
      const arch = await callTool(client, "search_messages", {
        query: ARCHIVE_WORD,
        scope: "archive",
      });
      assert.equal(arch.isError, false, arch.text);
      assert.match(arch.text, /migration plan/);
      assert.match(arch.text, /answered from the ARCHIVE/);
    } finally {
      await client.close();
    }
  }));
