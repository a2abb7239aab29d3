/**
 * Root assembly (default vs home-only, the persisted-home carve-out, leased and staged
 * homes) and lease custody (transcripts staged, secret deleted at once, failures are
 * markers not blockers).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  registerLeasedHome,
  releaseLeasedHome,
  resolveSourceRoots,
} from "../lib/message_search/mod.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

function persistHome(logsDir: string, id: string, backend: string, home: string) {
  Deno.mkdirSync(join(logsDir, id), { recursive: true });
  Deno.writeTextFileSync(
    join(logsDir, id, "session_agent_config.json"),
    JSON.stringify({ backend, backend_home: home }),
  );
}

Deno.test("default mode sweeps the machine-global stores; home-only confines to the state root with the carve-out", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" });
    const cfg = resolveConfig(env, { cwd: root });
    const explicit = join(root, "tmp-codex-home");
    persistHome(cfg.logsDir, "s1", "codex", explicit);
    persistHome(cfg.logsDir, "s2", "codex", cfg.agentHomes.codex.path); // the global default, verbatim
    persistHome(
      cfg.logsDir,
      "s3",
      "kimi",
      join(cfg.agentHomes.kimi.path, "intendant-bridges", "x"),
    ); // inside the global store
    await registerLeasedHome(cfg.messageSearch.cacheRoot, {
      leaseId: "lease-1",
      source: "claude-code",
      home: join(root, "leased-claude"),
    });
    const staged = join(cfg.messageSearch.cacheRoot, "staging", "lease-0-1");
    Deno.mkdirSync(staged, { recursive: true });
    Deno.writeTextFileSync(join(staged, "lease.json"), JSON.stringify({ source: "pi" }));

    const all = await resolveSourceRoots(cfg);
    const show = (r: typeof all) =>
      r.homes.map((h) => `${h.origin}:${h.source}:${h.path.replace(root, "")}`).sort();
    assert.deepEqual(show(all), [
      "global:claude-code:/home/.claude",
      "global:codex:/home/.codex",
      // Issue 17's sources, at their default homes under HOME.
      "global:copilot:/home/.copilot",
      "global:cursor:/home/.cursor",
      "global:droid:/home/.factory",
      "global:gemini:/home/.gemini",
      "global:goose:/home/.local/share/goose",
      "global:kimi:/home/.kimi-code",
      "global:opencode:/home/.local/share/opencode",
      "global:pi:/home/.pi/agent",
      "global:qwen:/home/.qwen",
      "leased:claude-code:/leased-claude",
      "persisted:codex:/tmp-codex-home",
      "persisted:kimi:/home/.kimi-code/intendant-bridges/x",
      "staged:pi:/state/cache/message_search/staging/lease-0-1",
    ]);
    // The SQLite snapshot copies stay inside the state root.
    assert.equal(all.snapshotDir, join(cfg.messageSearch.cacheRoot, "sqlite-snapshots"));
    const only = await resolveSourceRoots(resolveConfig(hermeticEnv(root), { cwd: root }));
    assert.deepEqual(show(only), [
      "leased:claude-code:/leased-claude",
      "persisted:codex:/tmp-codex-home",
      "staged:pi:/state/cache/message_search/staging/lease-0-1",
    ]);
  }));

Deno.test("releasing a lease stages the transcripts and deletes the secret at once", () =>
  withTempDir(async (root) => {
    const cache = join(root, "cache");
    const home = join(root, "leased-codex");
    Deno.mkdirSync(join(home, "sessions", "2026", "11", "29"), { recursive: true });
    Deno.writeTextFileSync(join(home, "sessions", "2026", "11", "29", "rollout-x.jsonl"), "{}\n");
    Deno.writeTextFileSync(join(home, "auth.json"), "SECRET");
    await registerLeasedHome(cache, { leaseId: "L1", source: "codex", home });
    const r = await releaseLeasedHome(cache, { leaseId: "L1", source: "codex", home });
    assert.deepEqual(r.staged, ["sessions"]);
    assert.equal(r.secretDeleted, true);
    assert.deepEqual(r.stagingFailures, []);
    await assert.rejects(Deno.stat(home), Deno.errors.NotFound);
    assert.equal(
      Deno.readTextFileSync(
        join(r.stagingEntry, "sessions", "2026", "11", "29", "rollout-x.jsonl"),
      ),
      "{}\n",
    );
    assert.equal(
      JSON.parse(Deno.readTextFileSync(join(r.stagingEntry, "lease.json"))).source,
      "codex",
    );
    await assert.rejects(Deno.stat(join(cache, "leased-active", "L1.json")), Deno.errors.NotFound);
  }));

Deno.test("a staging failure is a marker, not a blocker: the secret is still deleted", () =>
  withTempDir(async (root) => {
    const cache = join(root, "cache");
    Deno.mkdirSync(cache);
    Deno.writeTextFileSync(join(cache, "staging"), "not a directory");
    const home = join(root, "leased-pi");
    Deno.mkdirSync(join(home, "sessions"), { recursive: true });
    Deno.writeTextFileSync(join(home, "auth.json"), "SECRET");
    const r = await releaseLeasedHome(cache, { leaseId: "L2", source: "pi", home });
    assert.equal(r.secretDeleted, true);
    assert.ok(r.stagingFailures.length > 0);
    await assert.rejects(Deno.stat(home), Deno.errors.NotFound);
    await assert.rejects(
      releaseLeasedHome(cache, { leaseId: "../x", source: "pi", home }),
      RangeError,
    );
  }));
