/**
 * Leased homes end to end: a live lease is indexed, releasing it stages the transcripts
 * (renamed, same inodes: no re-index, no duplicates), a sweep drains the staging entry once
 * everything inside is published, and the shards keep serving as source_gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  registerLeasedHome,
  releaseLeasedHome,
} from "../lib/message_search/mod.ts";
import { buildCodexFixture } from "./fixtures/codex_fixture.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

Deno.test("a released lease is staged, indexed without duplicates, then drained", () =>
  withTempDir(async (root) => {
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    const leased = join(root, "lease-home");
    const fx = await buildCodexFixture(leased);
    Deno.writeTextFileSync(join(leased, "auth.json"), '{"token":"SECRET"}');
    await registerLeasedHome(cfg.messageSearch.cacheRoot, {
      leaseId: "lease-7",
      source: "codex",
      home: leased,
    });
    const { indexer, store } = await createMessageIndex(cfg);
    await indexer.sweep();
    const live = await store.readManifest();
    const keys = Object.keys(live.sessions).filter((k) => k.startsWith("codex:")).sort();
    assert.deepEqual(
      keys,
      Object.keys(fx.expected).filter((k) => fx.expected[k]!.length > 0).sort(),
    );
    const records = Object.fromEntries(keys.map((k) => [k, live.sessions[k]!.records]));

    const rel = await releaseLeasedHome(cfg.messageSearch.cacheRoot, {
      leaseId: "lease-7",
      source: "codex",
      home: leased,
    });
    assert.equal(rel.secretDeleted, true);
    await assert.rejects(Deno.stat(join(leased, "auth.json")), Deno.errors.NotFound);
    const r = await indexer.sweep();
    const staged = await store.readManifest();
    for (const k of keys) {
      assert.equal(staged.sessions[k]!.records, records[k], `${k}: no re-index, no duplicates`);
    }
    assert.equal(r.sources.codex!.recordsAdded, 0);
    // Drained: every transcript inside was already published.
    await assert.rejects(Deno.stat(rel.stagingEntry), Deno.errors.NotFound);
    await indexer.sweep();
    const after = await store.readManifest();
    for (const k of keys) {
      assert.equal(after.sessions[k]!.source_gone, true);
      assert.equal(after.sessions[k]!.records, records[k]);
    }
  }));
