/**
 * The sweep's publish pipeline: a sweep over more text than one batch publishes several
 * complete revisions with at most one publish in flight while the next batch is
 * extracted; a publish that fails mid-sweep fails the sweep (never an unhandled
 * rejection), and the next sweep publishes everything. The query edge's staleness is
 * measured from a sweep's start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createIntendantExtractor,
  Indexer,
  openStore,
  type Store,
} from "../lib/message_search/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { PV, withTempDir } from "./helpers/store_fixtures.ts";

/**
 * `store` with publish observed: concurrency, calls, an optional failing call, and a hook
 * run as each publish starts.
 */
function observed(store: Store, failAt: { n: number | null }, onPublish = () => {}) {
  const seen = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const wrapped: Store = {
    root: store.root,
    readManifest: () => store.readManifest(),
    async publish(updates) {
      seen.calls++;
      onPublish();
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      try {
        // Let extraction run meanwhile, as fsyncs would.
        await new Promise((r) => setTimeout(r, 5));
        if (failAt.n === seen.calls) throw new Error("EIO: injected publish failure");
        return await store.publish(updates);
      } finally {
        seen.inFlight--;
      }
    },
    deleteSession: (k) => store.deleteSession(k),
    liftTombstone: (k) => store.liftTombstone(k),
    loadSegment: (n) => store.loadSegment(n),
    loadSummaries: () => store.loadSummaries(),
    loadLexicon: (k) => store.loadLexicon(k),
    refreshLexicon: (o) => store.refreshLexicon(o),
    gc: () => store.gc(),
    verifyAll: () => store.verifyAll(),
    dropEntries: (k) => store.dropEntries(k),
  };
  return { wrapped, seen };
}

Deno.test("a sweep over several batches publishes each with at most one publish in flight", () =>
  withTempDir(async (dir) => {
    const logsDir = join(dir, "logs");
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await writeNativeSession(logsDir, { turns: 2 })).id);
    const store = await openStore({
      root: join(dir, "store"),
      parserVersion: PV,
      windowDays: null,
    });
    const { wrapped, seen } = observed(store, { n: null });
    const indexer = new Indexer({
      store: wrapped,
      extractors: [createIntendantExtractor({ logsDir })],
      windowDays: null,
      publishBatchUnits: 1,
    });
    const r = await indexer.sweep();
    assert.ok(seen.calls >= 6, `one publish per session here, got ${seen.calls}`);
    assert.equal(seen.maxInFlight, 1);
    assert.equal(r.sources.intendant!.published, 6);
    const m = await store.readManifest();
    assert.deepEqual(Object.keys(m.sessions).sort(), ids.map((id) => `intendant:${id}`).sort());
    assert.equal(r.revision, m.revision);
  }));

Deno.test("a publish failing mid-sweep fails the sweep; the next sweep publishes everything", () =>
  withTempDir(async (dir) => {
    let unhandled = 0;
    const onUnhandled = (e: PromiseRejectionEvent) => {
      unhandled++;
      e.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", onUnhandled);
    try {
      const logsDir = join(dir, "logs");
      for (let i = 0; i < 6; i++) await writeNativeSession(logsDir, { turns: 2 });
      const store = await openStore({
        root: join(dir, "store"),
        parserVersion: PV,
        windowDays: null,
      });
      const failAt = { n: 2 as number | null };
      const { wrapped } = observed(store, failAt);
      const indexer = new Indexer({
        store: wrapped,
        extractors: [createIntendantExtractor({ logsDir })],
        windowDays: null,
        publishBatchUnits: 1,
      });
      await assert.rejects(indexer.sweep(), /injected publish failure/);
      failAt.n = null;
      await indexer.sweep();
      assert.equal(Object.keys((await store.readManifest()).sessions).length, 6);
      assert.equal(unhandled, 0);
    } finally {
      globalThis.removeEventListener("unhandledrejection", onUnhandled);
    }
  }));
