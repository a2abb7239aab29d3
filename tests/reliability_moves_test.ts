/**
 * reliability-plan B9 and B10: transcripts that move or appear twice.
 *  B9  a Codex rollout moved sessions/ → archived_sessions/ between sweeps, and a leased
 *      home's transcripts moved into staging/ on release: the same sessions, no duplicate
 *      records, never flagged source_gone while the file exists.
 *  B10 one Claude transcript hardlinked under a second project directory (sorting before
 *      and after the original): deduplicated by file identity, one hit per message.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  createSearchEngine,
  Indexer,
  openStore,
  registerLeasedHome,
  releaseLeasedHome,
  type Store,
} from "../lib/message_search/mod.ts";
import { buildClaudeFixture, claudeFixturePaths } from "./fixtures/claude_fixture.ts";
import { buildCodexFixture } from "./fixtures/codex_fixture.ts";
import type { FixtureHome } from "./fixtures/types.ts";
import { figure } from "./helpers/figures.ts";
import { PV } from "./helpers/store_fixtures.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const KEY = new Uint8Array(32).fill(9);

/** Total hits for `q` over the whole store (every page). */
async function hitsFor(store: Store, q: string): Promise<number> {
  const engine = createSearchEngine({
    store,
    windowDays: null,
    cursorKey: KEY,
    isReady: () => true,
  });
  let n = 0;
  let cursor: string | null = null;
  do {
    const r = await engine.search({ q, limit: 50, cursor });
    for (const g of r.groups) n += g.total_hits;
    cursor = r.cursor;
  } while (cursor !== null);
  return n;
}

async function indexerFor(fx: FixtureHome, root: string) {
  const store = await openStore({ root, parserVersion: PV, windowDays: null });
  const indexer = new Indexer({ store, extractors: [fx.extractor()], windowDays: null });
  return { store, indexer };
}

Deno.test("B9: a rollout archived and a lease staged between sweeps keep their sessions, no duplicates", () =>
  withTempDir(async (dir) => {
    let duplicates = 0;
    let falseGone = 0;
    const detail: string[] = [];
    // (a) Codex: sessions/… → archived_sessions/ with a unique word in the moved rollout.
    const home = join(dir, "codex");
    const fx = await buildCodexFixture(home);
    const t = fx.appendTarget;
    await Deno.writeTextFile(t.path, t.userLine("b9archivemarker before the move", 1), {
      append: true,
    });
    const { store, indexer } = await indexerFor(fx, join(dir, "store-a"));
    await indexer.sweep();
    const before = await store.readManifest();
    const archived = join(home, "archived_sessions", basename(t.path));
    await Deno.mkdir(join(home, "archived_sessions"), { recursive: true });
    await Deno.rename(t.path, archived);
    const r = await indexer.sweep();
    const after = await store.readManifest();
    for (const [k, e] of Object.entries(before.sessions)) {
      const now = after.sessions[k];
      assert.ok(now, `${k} is still indexed`);
      if (now.records !== e.records) duplicates += Math.max(0, now.records - e.records);
      if (now.source_gone) falseGone++;
    }
    const hits = await hitsFor(store, "b9archivemarker");
    duplicates += Math.max(0, hits - 1);
    assert.equal(hits, 1);
    detail.push(
      `archive move: ${Object.keys(before.sessions).length} sessions, records re-read ` +
        `${r.sources.codex!.recordsAdded}, ` +
        `marker hits ${hits}`,
    );

    // (b) A leased home released into staging/ (rename: same inodes).
    const root = join(dir, "lease");
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    const leased = join(root, "lease-home");
    const lfx = await buildCodexFixture(leased);
    await registerLeasedHome(cfg.messageSearch.cacheRoot, {
      leaseId: "lease-b9",
      source: "codex",
      home: leased,
    });
    const idx = await createMessageIndex(cfg);
    await idx.indexer.sweep();
    const live = await idx.store.readManifest();
    await releaseLeasedHome(cfg.messageSearch.cacheRoot, {
      leaseId: "lease-b9",
      source: "codex",
      home: leased,
    });
    const staged = await idx.indexer.sweep();
    const m = await idx.store.readManifest();
    const keys = Object.keys(lfx.expected).filter((k) => lfx.expected[k]!.length > 0);
    for (const k of keys) {
      assert.ok(m.sessions[k], `${k} indexed`);
      duplicates += Math.max(0, m.sessions[k]!.records - live.sessions[k]!.records);
      if (m.sessions[k]!.source_gone) falseGone++;
    }
    detail.push(
      `lease staged: ${keys.length} sessions, records re-read ${
        staged.sources.codex!.recordsAdded
      }`,
    );
    figure("B9", `duplicates: ${duplicates}, false source_gone: ${falseGone}`);
    // deno-lint-ignore no-console
    console.log(`B9 detail: ${detail.join("; ")}`);
    assert.equal(duplicates, 0);
    assert.equal(falseGone, 0);
    assert.equal(r.sources.codex!.recordsAdded, 0, "archiving is a rename: no re-index");
    assert.equal(staged.sources.codex!.recordsAdded, 0, "staging is a rename: no re-index");
  }));

Deno.test("B10: a transcript hardlinked under two project paths is indexed once", () =>
  withTempDir(async (dir) => {
    let duplicateHits = 0;
    const detail: string[] = [];
    for (const twinDir of ["-aaa-sorts-first", "-zzz-sorts-last"]) {
      const home = join(dir, twinDir);
      const fx = await buildClaudeFixture(home);
      const t = fx.appendTarget;
      const word = `b10twin${twinDir.slice(1, 4)}marker`;
      await Deno.writeTextFile(t.path, t.userLine(`${word} said once`, 1), { append: true });
      const { projects } = claudeFixturePaths(home);
      const twin = join(projects, twinDir, basename(t.path));
      await Deno.mkdir(join(projects, twinDir), { recursive: true });
      await Deno.link(t.path, twin);
      const { store, indexer } = await indexerFor(fx, join(dir, `store${twinDir}`));
      const r = await indexer.sweep();
      const m = await store.readManifest();
      const want = fx.expected[t.key]!.length + 1;
      const got = m.sessions[t.key]?.records ?? 0;
      const hits = await hitsFor(store, word);
      duplicateHits += Math.max(0, hits - 1) + Math.max(0, got - want);
      detail.push(
        `${twinDir}: records ${got}/${want}, marker hits ${hits}, skipped ${
          JSON.stringify(r.sources["claude-code"]!.skipped)
        }`,
      );
      assert.equal(hits, 1);
      assert.equal(got, want);
      // An append through either name lands once.
      await Deno.writeTextFile(twin, t.userLine(`${word}again via the twin`, 2), { append: true });
      await indexer.sweep();
      const again = await hitsFor(store, `${word}again`);
      duplicateHits += Math.max(0, again - 1);
      assert.equal(again, 1);
    }
    figure("B10", `duplicate hits: ${duplicateHits}`);
    // deno-lint-ignore no-console
    console.log(`B10 detail: ${detail.join("; ")}`);
    assert.equal(duplicateHits, 0);
  }));
