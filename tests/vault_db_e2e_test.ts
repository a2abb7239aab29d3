/**
 * The vault's database sources through the real CLI (OpenCode, its contract fixture's
 * `opencode.db`): `intendant index` keeps an export of every session's rows; `vault
 * restore` without --to refuses in one line (exit 1: a database cannot be restored file
 * by file); with --to it writes `<DIR>/opencode-<id>.json`, byte-identical to the export
 * of the same rows, 0600, and never over a file; the agent deleting a session's rows
 * marks its export gone on the next index.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { buildOpenCodeFixture, openCodeDataDir } from "./fixtures/opencode_fixture.ts";
import { fixtureEnv } from "./fixtures/all.ts";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";
import {
  closeSharedSnapshots,
  exportStoreSession,
  SQLITE_EXPORTS,
} from "../lib/message_search/mod.ts";

Deno.test("vault e2e: OpenCode sessions are kept as row exports, restored only with --to", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "fx", "opencode");
    const h = await buildOpenCodeFixture(dir);
    const env = {
      ...fixtureEnv({ opencode: dir }),
      INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no",
    };
    const units = (await h.extractor().discover()).units;
    const first = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(first.code, 0, first.stderr);
    const kept = JSON.parse(first.stdout).vault;
    assert.deepEqual(kept.errors, []);
    assert.equal(kept.new, units.length, JSON.stringify(kept));

    const status = async () => {
      const r = await runIntendant(root, ["vault", "status", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const st0 = await status();
    assert.equal(st0.by_source.opencode.sessions, units.length);
    assert.equal(st0.by_source.opencode.files, units.length, "one export per session");
    const text = await runIntendant(root, ["vault", "status"], { env });
    assert.match(text.stdout, /OpenCode: sessions are rows of opencode\.db: an export/);

    const again = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(JSON.parse(again.stdout).vault.new, 0);
    assert.equal((await status()).by_source.opencode.versions, units.length, "unchanged: same");

    const key = units[0]!.key;
    const id = key.slice("opencode:".length);
    const refused = await runIntendant(root, ["vault", "restore", key], { env });
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.equal(refused.stderr.trimEnd().split("\n").length, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /rows of its database .*cannot be restored file by file; --to DIR/,
    );

    const to = join(root, "out");
    const r = await runIntendant(root, ["vault", "restore", key, "--to", to, "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const files = JSON.parse(r.stdout).files as { path: string }[];
    assert.deepEqual(files.map((f) => f.path), [join(to, `opencode-${id}.json`)]);
    const db = join(openCodeDataDir(dir), "opencode.db");
    try {
      const ex = await exportStoreSession(db, SQLITE_EXPORTS.opencode!, {
        sessionId: id,
        snapshotDir: join(root, "snap"),
      });
      assert.ok(ex.ok);
      assert.deepEqual(await Deno.readFile(files[0]!.path), ex.bytes, "byte-identical export");
    } finally {
      closeSharedSnapshots();
    }
    assert.equal((await Deno.stat(files[0]!.path)).mode! & 0o777, 0o600);
    const twice = await runIntendant(root, ["vault", "restore", key, "--to", to], { env });
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /Refusing to overwrite/);

    // The agent deletes the session: its rows go; the export stays, marked gone.
    const w = new DatabaseSync(db);
    w.exec("PRAGMA foreign_keys = ON");
    w.prepare("DELETE FROM session WHERE parent_id = ?").run(id);
    w.prepare("DELETE FROM session WHERE id = ?").run(id);
    w.close();
    const third = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(third.code, 0, third.stderr);
    const st1 = await status();
    assert.ok(st1.by_source.opencode.gone >= 1, JSON.stringify(st1.by_source.opencode));
    assert.equal(st1.by_source.opencode.sessions, units.length, "nothing kept is dropped");
  });
});
