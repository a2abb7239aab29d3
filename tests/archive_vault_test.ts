/**
 * Archive search over the vault (issue 29 follow-up), real program, real files: a Claude
 * Code session 40 days old is kept in the vault by `intendant index` (the window skips
 * it), then its agent deletes it before the archive read it; `intendant search
 * --archive` finds it by a word only it says, read from the vault's copy by the Claude
 * extractor, marked source_gone and from the vault — in --json and in the listing; a
 * word no session says finds nothing. And through the library: the mirror the pass reads
 * from is gone afterwards, and a vault-only session is never read while a tombstone or a
 * file in place says it is not the vault's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runIntendant } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { ARCHIVE_ENV } from "./helpers/archive_world.ts";
import { writeOldClaudeSession } from "./helpers/vault_only_world.ts";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex } from "../lib/message_search/mod.ts";
import { loadCursorKey } from "../lib/server/mod.ts";

/** Said only by the old session. */
const WORD = "marmosetquill";

Deno.test("`intendant search --archive` finds a session whose only copy is in the vault, marked gone and from the vault", () =>
  withTempDir(async (root) => {
    const env = ARCHIVE_ENV;
    const s = await writeOldClaudeSession(join(root, "home", ".claude"), {
      seed: "vault-only",
      prompt: `Where did the ${WORD} notes go`,
      answer: "They are in the attic folder.",
    });
    const idx = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(idx.code, 0, idx.stderr);
    assert.ok(JSON.parse(idx.stdout).vault.new >= 1, "kept on first sight");
    // `index` built the archive behind its sweep, from the file. The archive is a cache:
    // dropped here, it is as if the file went before any archive sweep reached it (the
    // daemon sweeps it hourly; a session the main index held expires from it unread).
    const archiveDir = join(root, "state", "cache", "message_search", "archive");
    assert.ok(await Deno.stat(archiveDir));
    await Deno.remove(archiveDir, { recursive: true });
    await Deno.remove(s.path); // the agent's cleanup

    const normal = await runIntendant(root, ["search", "--json", WORD], { env });
    assert.equal(normal.code, 0, normal.stderr);
    assert.deepEqual(JSON.parse(normal.stdout).groups, []);

    const json = await runIntendant(root, ["search", "--archive", "--json", WORD], { env });
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.deepEqual(page.groups.map((g: { session_key: string }) => g.session_key), [s.key]);
    const g = page.groups[0];
    assert.equal(g.source_gone, true);
    assert.match(JSON.stringify(g.hits), new RegExp(WORD));
    assert.deepEqual(page.archive.from_vault, [s.key]);
    assert.equal(page.archive.complete, true, JSON.stringify(page.archive));
    assert.ok(!page.archive.not_covered.some((n: string) => n.includes("vault")));
    // The mirror the pass read from is removed.
    const left = [...Deno.readDirSync(archiveDir)].map((e) => e.name);
    assert.deepEqual(left.filter((n) => n.startsWith("vault-read-")), []);

    const human = await runIntendant(root, ["search", "--archive", WORD], { env });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /\(source gone\)/);
    assert.match(human.stdout, /from the transcript vault: 1 of these sessions/);

    const none = await runIntendant(root, ["search", "--archive", "--json", "nosuchwordqv"], {
      env,
    });
    assert.equal(none.code, 0, none.stderr);
    const empty = JSON.parse(none.stdout);
    assert.deepEqual(empty.groups, []);
    assert.deepEqual(empty.archive.from_vault, []);
  }));

Deno.test("the vault pass leaves a session whose file is in place to the sweep, and reads it once it is gone", () =>
  withTempDir(async (root) => {
    const cfg = resolveConfig(hermeticEnv(root, ARCHIVE_ENV), { cwd: root });
    const s = await writeOldClaudeSession(join(root, "home", ".claude"), {
      seed: "vault-later",
      prompt: `The ${WORD} draft is finished`,
      answer: "Good, I will file it.",
    });
    const first = await runIntendant(root, ["index"], { env: ARCHIVE_ENV });
    assert.equal(first.code, 0, first.stderr);
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
      // The file is there: the archive's sweep reads it from its place, not the vault.
      await idx.archive.sweep();
      assert.equal(idx.archive.vaultPass?.published, 0);
      let e = (await idx.archive.store.readManifest()).sessions[s.key];
      assert.equal(e?.source_gone, false);
      assert.deepEqual(e?.meta.files, [s.path]);
      // The archive's copy came from the file: the vault pass never needs to read it.
      await Deno.remove(s.path);
      await idx.archive.sweep();
      e = (await idx.archive.store.readManifest()).sessions[s.key];
      assert.equal(e?.source_gone, true);
      assert.equal(idx.archive.vaultPass?.candidates, 0);
      const res = await idx.archive.search({ q: WORD, complete: true }, { cursorKey });
      assert.deepEqual(res.groups.map((g) => g.session_key), [s.key]);
      assert.deepEqual(res.archive.from_vault, [s.key]);
    } finally {
      await idx.indexer.stop();
      await idx.archive.stop();
    }
  }));
