/**
 * Archive search and the trash (issue 29 follow-up): a native session older than the
 * window is archive-searchable; deleted (trash), it is not — neither after the next main
 * sweep nor after the next archive build; restored from the trash, it is archive-
 * searchable again after the next sweep and archive build. Real files (the SessionLog
 * writer, 40 days back), the real Indexer, archive builder and trash code.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  type MessageIndex,
  openStore,
  PARSER_VERSION,
} from "../lib/message_search/mod.ts";
import { deleteNativeSession, restoreNativeSession } from "../lib/catalog/mod.ts";
import { loadCursorKey } from "../lib/server/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const DAY_MS = 86_400_000;
/** Said only by the old native session (no fixture says it). */
const WORD = "quokkaledger";

/** Sets every file and directory under `dir` to `at` (the session is 40 days old on disk). */
async function ageTree(dir: string, at: Date): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) await ageTree(p, at);
    await Deno.utime(p, at, at);
  }
  await Deno.utime(dir, at, at);
}

/** An old native session saying WORD, its files aged 40 days. */
async function oldSession(logsDir: string): Promise<{ id: string; dir: string; key: string }> {
  const oldMs = Date.now() - 40 * DAY_MS;
  let clock = oldMs;
  const s = await writeNativeSession(logsDir, {
    turns: 1,
    task: `Where is the ${WORD} reconciliation`,
    now: () => (clock += 1000),
  });
  await ageTree(s.dir, new Date(oldMs + 60_000));
  return { id: s.id, dir: s.dir, key: `intendant:${s.id}` };
}

async function archiveKeys(idx: MessageIndex, cursorKey: Uint8Array): Promise<string[]> {
  const res = await idx.archive.search({ q: WORD, complete: true }, { cursorKey });
  return res.groups.map((g) => g.session_key);
}

Deno.test("a session restored from the trash is archive-searchable again; a trashed one is not", () =>
  withTempDir(async (root) => {
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    const s = await oldSession(cfg.logsDir);
    const key = s.key;
    const idx = await createMessageIndex(cfg, { workers: 1 });
    const deps = { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store: idx.store };
    try {
      const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
      const build = async () => {
        await idx.indexer.sweep();
        await idx.archive.sweep();
      };
      await build();
      // Older than the 14-day window: the archive's, not the main index's.
      assert.equal((await idx.store.readManifest()).sessions[key], undefined);
      assert.deepEqual(await archiveKeys(idx, cursorKey), [key]);

      await deleteNativeSession(deps, s.id, s.dir);
      await build();
      assert.deepEqual(await archiveKeys(idx, cursorKey), [], "trashed: not searchable");
      assert.notEqual((await idx.archive.store.readManifest()).tombstones[key], undefined);

      const r = await restoreNativeSession(deps, s.id);
      assert.equal(r.dir, s.dir);
      await build();
      const a = await idx.archive.store.readManifest();
      assert.equal(a.tombstones[key], undefined, "the archive's tombstone is lifted");
      assert.deepEqual(await archiveKeys(idx, cursorKey), [key], "restored: searchable again");

      // Deleted again: gone from the archive again (deletion is still sticky).
      await deleteNativeSession(deps, s.id, s.dir);
      await build();
      assert.deepEqual(await archiveKeys(idx, cursorKey), []);
    } finally {
      await idx.indexer.stop();
      await idx.archive.stop();
    }
  }));

Deno.test("a restore through a main store with no archive attached lifts the archive's tombstone beside it", () =>
  withTempDir(async (root) => {
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    const s = await oldSession(cfg.logsDir);
    const first = await createMessageIndex(cfg, { workers: 1 });
    const deps = { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store: first.store };
    await first.indexer.sweep();
    await deleteNativeSession(deps, s.id, s.dir);
    await first.indexer.sweep();
    await first.archive.sweep();
    assert.notEqual((await first.archive.store.readManifest()).tombstones[s.key], undefined);
    await first.indexer.stop();
    await first.archive.stop();
    // A bare main store, as a tool that never opened the archive holds.
    const bare = await openStore({
      root: cfg.messageSearch.storeRoot,
      parserVersion: PARSER_VERSION,
      windowDays: cfg.messageSearch.windowDays,
    });
    await restoreNativeSession({ ...deps, store: bare }, s.id);
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      await idx.indexer.sweep();
      await idx.archive.sweep();
      const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
      assert.deepEqual(await archiveKeys(idx, cursorKey), [s.key]);
    } finally {
      await idx.indexer.stop();
      await idx.archive.stop();
    }
  }));
