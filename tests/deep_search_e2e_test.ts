/**
 * Deep Search end to end, on the twelve fixture homes laid out like the real tools': a
 * word only in a Codex command's output and one only in a Claude Code tool_result are not
 * found by message search ("no matches") but are by `intendant search --deep` (listing,
 * masked secret, what was scanned per source, the database agents read in the vault's
 * export of their rows),
 * `--json`, the daemon's `GET /api/sessions/message-search?scope=deep` (paged with its
 * cursor to the same hits) and MCP `search_messages` with `scope: "deep"` through the real
 * SDK client. After Claude Code deletes the session, the word is still found, in the
 * vault's copy, marked as such. A word in no file: "no matches" after a complete scan.
 */
import assert from "node:assert/strict";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { FixtureHome, JsonlAppendTarget } from "./fixtures/types.ts";
import { runIntendant, spawnIntendant, waitForDaemonJson } from "./helpers/cli.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import {
  CLAUDE_WORD,
  claudeToolResultLine,
  CODEX_WORD,
  codexOutputLine,
  SECRET,
} from "./helpers/deep_plants.ts";

Deno.test("deep search e2e: CLI, API and MCP find tool output of Codex and Claude Code, then the vault's copy", () =>
  withTempDir(async (root) => {
    const { homes, env } = await buildAllFixtures(root, { sources: "all" });
    const codex = homes.codex!.appendTarget as JsonlAppendTarget;
    const claude = homes["claude-code"]!.appendTarget as JsonlAppendTarget;
    Deno.writeTextFileSync(codex.path, codexOutputLine(CODEX_WORD), { append: true });
    const claudeId = claude.key.slice("claude-code:".length);
    Deno.writeTextFileSync(claude.path, claudeToolResultLine(CLAUDE_WORD, claudeId, claude.path), {
      append: true,
    });
    const idx = await runIntendant(root, ["index"], { env });
    assert.equal(idx.code, 0, idx.stderr);

    for (const word of [CODEX_WORD, CLAUDE_WORD]) {
      const plain = await runIntendant(root, ["search", word], { env });
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout, /no matches/, "message search does not reach tool output");
    }

    const human = await runIntendant(root, ["search", "--deep", CODEX_WORD], { env });
    assert.equal(human.code, 0, human.stderr);
    assert.ok(human.stdout.includes(`codex ${codex.key.slice("codex:".length)}  ${codex.path}:`));
    assert.ok(human.stdout.includes(`«${CODEX_WORD}»`), human.stdout);
    assert.ok(!human.stdout.includes(SECRET), "the key in the output is masked");
    assert.match(human.stdout, /\(deep search: 1 match; scanned \d+ sessions, \d+ files/);
    assert.match(human.stdout, /the scan is complete/);
    // The database agents' sessions are scanned in the vault's export of their rows.
    assert.match(human.stdout, /opencode \d+ \(\d+ from the vault\)/);
    assert.match(human.stdout, /goose \d+ \(\d+ from the vault\)/);
    assert.doesNotMatch(human.stdout, /not scanned/);
    const never = await runIntendant(root, [
      "search",
      "--deep",
      "--json",
      "--limit",
      "1000",
      "NEVER-INDEX",
    ], {
      env,
    });
    assert.equal(never.code, 0, never.stderr);
    const neverSources = new Set(
      JSON.parse(never.stdout).hits.map((h: { source: string }) => h.source),
    );
    for (const s of ["opencode", "goose", "codex", "claude-code", "gemini"]) {
      assert.ok(neverSources.has(s), `tool output of ${s} is reached`);
    }

    const json = await runIntendant(root, ["search", "--deep", "--json", CLAUDE_WORD], { env });
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.deepEqual(page.hits.map((h: { key: string; file: string }) => [h.key, h.file]), [[
      claude.key,
      claude.path,
    ]]);
    assert.equal(page.cursor, null);
    assert.equal(page.scanned.complete, true);
    for (const s of ["codex", "claude-code", "gemini", "pi", "intendant"]) {
      assert.ok(page.scanned.by_source[s]?.files > 0, `${s} files were scanned`);
    }
    const refused = await runIntendant(root, ["search", "--deep", "--source", "codex", "x1"], {
      env,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--deep .* takes no --source/);
    const none = await runIntendant(root, ["search", "--deep", "ZZQ-NOWHERE-31337"], { env });
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /the scan is complete\)\n(\(not scanned: .*\)\n)*no matches\n$/);

    // The daemon: scope=deep on message search, paged by its cursor to the one-shot hits.
    const run = spawnIntendant(root, ["serve", "--port", "0"], { env });
    try {
      const info = await waitForDaemonJson(root, 30_000, { stateRoot: env.INTENDANT_HOME });
      const headers = { authorization: `Bearer ${info.token}` };
      const get = async (q: string) => {
        const r = await fetch(`http://127.0.0.1:${info.port}/api/sessions/message-search?${q}`, {
          headers,
        });
        return { status: r.status, body: await r.json() };
      };
      const one = await get(`q=error&scope=deep&limit=500`);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      const all = one.body.hits.map((h: { key: string; file: string; line?: number }) =>
        `${h.key} ${h.file} ${h.line}`
      );
      assert.ok(all.some((h: string) => h.startsWith(codex.key)), "the codex output line");
      let cursor: string | null = null;
      const paged: string[] = [];
      do {
        const r: { status: number; body: { hits: []; cursor: string | null } } = await get(
          `q=error&scope=deep&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        );
        assert.equal(r.status, 200);
        paged.push(
          ...r.body.hits.map((h: { key: string; file: string; line?: number }) =>
            `${h.key} ${h.file} ${h.line}`
          ),
        );
        cursor = r.body.cursor;
      } while (cursor);
      assert.deepEqual(paged, all);
      assert.equal((await get(`q=error&scope=deep&source=codex`)).status, 400);

      // MCP through the real SDK client.
      const { client } = await connectMcp({
        ...hermeticEnv(root, env),
        PATH: Deno.env.get("PATH") ?? "",
      });
      try {
        const d = await callTool(client, "search_messages", { query: CODEX_WORD, scope: "deep" });
        assert.equal(d.isError, false, d.text);
        assert.ok(d.text.includes(`«${CODEX_WORD}»`));
        assert.ok(!d.text.includes(SECRET));
        assert.match(d.text, /the scan is complete/);
        assert.match(d.text, /opencode \d+ \(\d+ from the vault\)/);
        const bad = await callTool(client, "search_messages", {
          query: CODEX_WORD,
          scope: "deep",
          source: "codex",
        });
        assert.equal(bad.isError, true);
        assert.match(bad.text, /takes only query, limit and cursor/);
      } finally {
        await client.close();
      }
    } finally {
      run.child.kill("SIGTERM");
      await run.done;
    }

    // Claude Code deletes the session: every copy of its files.
    const h = homes["claude-code"] as FixtureHome;
    for (;;) {
      const u = (await h.extractor().discover()).units.find((x) => x.key === claude.key);
      if (!u) break;
      for (const f of u.files) await Deno.remove(f.path);
    }
    const again = await runIntendant(root, ["index"], { env });
    assert.equal(again.code, 0, again.stderr);
    const kept = await runIntendant(root, ["search", "--deep", CLAUDE_WORD], { env });
    assert.equal(kept.code, 0, kept.stderr);
    assert.ok(
      kept.stdout.includes(`${claude.path}:`) && kept.stdout.includes("(from the vault"),
      kept.stdout,
    );
    assert.match(kept.stdout, /claude-code \d+ \(1 from the vault\)/);
  }));
