/**
 * Archive search (issue 29 item 4) through the library: with the default 14-day window a
 * 40-day-old Codex session is not found by the normal search, and is found by the archive
 * (same engine, its own store built by the banded indexer), which says so; the main
 * index's store and resident arena are not touched by it; a failed archive publish leaves
 * both stores readable and the next sweep completes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  ARCHIVE_DIR,
  createMessageIndex,
  createSearchEngine,
  openArchive,
  PARSER_VERSION,
} from "../lib/message_search/mod.ts";
import { loadCursorKey } from "../lib/server/mod.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { ARCHIVE_ENV, ARCHIVE_WORD, buildArchiveWorld } from "./helpers/archive_world.ts";
import { FaultFs } from "./helpers/fault_fs.ts";

const cfgOf = (root: string) => resolveConfig(hermeticEnv(root, ARCHIVE_ENV), { cwd: root });

Deno.test("archive search finds a 40-day-old session the windowed search does not", async () => {
  await withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      await idx.indexer.sweep();
      const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
      const engine = createSearchEngine({ store: idx.store, windowDays: 14, cursorKey });
      for (const sort of ["newest", "relevance"] as const) {
        const normal = await engine.search({ q: ARCHIVE_WORD, sort, complete: true });
        assert.deepEqual(normal.groups.map((g) => g.session_key), [w.youngKey]);
      }
      const main = await idx.store.readManifest();
      assert.equal(main.sessions[w.oldKey], undefined);
      const before = engine.stats();
      await idx.archive.sweep();
      // The band: the archive holds only what the window left out.
      const a = await idx.archive.store.readManifest();
      assert.deepEqual(Object.keys(a.sessions), [w.oldKey]);
      for (const sort of ["newest", "relevance"] as const) {
        const res = await idx.archive.search({ q: ARCHIVE_WORD, sort, complete: true }, {
          cursorKey,
        });
        assert.deepEqual(res.groups.map((g) => g.session_key), [w.oldKey], sort);
        assert.equal(res.archive.archive, true);
        assert.equal(res.archive.window_days, 14);
        assert.equal(res.archive.complete, true);
        assert.equal(res.archive.archived_sessions, 1);
        // The vault is read too (archive_vault.ts): no standing gap, nothing from it here.
        assert.deepEqual(res.archive.not_covered, []);
        assert.deepEqual(res.archive.from_vault, []);
      }
      // The main store and the main engine's resident arena did not move.
      assert.equal((await idx.store.readManifest()).revision, main.revision);
      assert.deepEqual(engine.stats(), before);
      // A main cursor is refused by the archive (another fingerprint), not misread.
      const page = await idx.archive.search({ q: ARCHIVE_WORD, limit: 1, complete: true }, {
        cursorKey,
      });
      assert.equal(page.cursor, null);
      assert.equal(a.sessions[w.oldKey]!.source_gone ?? false, false);
    } finally {
      await idx.indexer.stop();
    }
  });
});

Deno.test("archive keeps serving a session whose file its agent later deleted", async () => {
  await withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      await idx.indexer.sweep();
      await idx.archive.sweep();
      await Deno.remove(w.oldPath);
      await idx.archive.sweep();
      const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
      const res = await idx.archive.search({ q: ARCHIVE_WORD, complete: true }, { cursorKey });
      assert.deepEqual(res.groups.map((g) => g.session_key), [w.oldKey]);
      const e = (await idx.archive.store.readManifest()).sessions[w.oldKey]!;
      assert.equal(e.source_gone, true);
    } finally {
      await idx.indexer.stop();
    }
  });
});

Deno.test("a session deleted from the main index never comes back through the archive", async () => {
  await withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      await idx.indexer.sweep();
      await idx.store.deleteSession(w.oldKey);
      await idx.archive.sweep();
      const a = await idx.archive.store.readManifest();
      assert.equal(a.sessions[w.oldKey], undefined);
      assert.notEqual(a.tombstones[w.oldKey], undefined);
    } finally {
      await idx.indexer.stop();
    }
  });
});

Deno.test("a failed archive publish leaves both stores readable; the next sweep completes", async () => {
  await withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const w = await buildArchiveWorld(join(root, "home", ".codex"));
    const idx = await createMessageIndex(cfg, { workers: 1 });
    try {
      await idx.indexer.sweep();
      const main = await idx.store.readManifest();
      const archiveRoot = join(cfg.messageSearch.cacheRoot, ARCHIVE_DIR);
      const common = {
        cacheRoot: cfg.messageSearch.cacheRoot,
        main: idx.store,
        windowDays: 14,
        extractors: async () =>
          (await import("../lib/message_search/mod.ts")).buildExtractors(
            await (await import("../lib/message_search/mod.ts")).resolveSourceRoots(cfg),
          ),
        parserVersion: PARSER_VERSION,
        workers: 1,
      };
      // Every point of the archive's publish: a generation write, the manifest, the pack.
      for (let at = 1; at <= 40; at++) {
        const fs = new FaultFs();
        const broken = await openArchive({ ...common, fs });
        fs.arm({ at, action: "EIO", match: (op) => op.path.startsWith(archiveRoot) });
        await broken.sweep().catch(() => null);
        await broken.stop();
        // Main untouched; the archive readable (old manifest or the new one).
        assert.equal((await idx.store.readManifest()).revision, main.revision);
        const again = await openArchive(common);
        const m = await again.store.readManifest();
        for (const e of Object.values(m.sessions)) {
          for (const g of e.generations) await again.store.loadSegment(g);
        }
        await again.sweep();
        const cursorKey = await loadCursorKey(cfg.messageSearch.cacheRoot);
        const res = await again.search({ q: ARCHIVE_WORD, complete: true }, { cursorKey });
        assert.deepEqual(res.groups.map((g) => g.session_key), [w.oldKey], `fault at ${at}`);
        await again.stop();
        await Deno.remove(archiveRoot, { recursive: true });
      }
    } finally {
      await idx.indexer.stop();
    }
  });
});
