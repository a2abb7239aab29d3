/**
 * A cold engine (a one-shot CLI, an MCP process, a restarted daemon) rules sessions out
 * with the store's summaries pack instead of opening every generation; without a pack it
 * opens them and the answer is the same.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore, type Store, SUMMARY_PACK_FILE } from "../store/mod.ts";
import { createSearchEngine } from "./engine.ts";
import { rec } from "./_test_support.ts";

const SESSIONS = 30;

async function withWorld(fn: (store: Store, loads: { n: number }, root: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "intendant-pack-" });
  try {
    const root = join(dir, "v2");
    const real = await openStore({ root, parserVersion: 1, windowDays: null });
    for (let s = 0; s < SESSIONS; s++) {
      const sid = `s${s}`;
      const records = [0, 1, 2].map((i) =>
        rec(i, `word${s}x common text ${s === 7 ? "zephyrquartz" : ""}`, {
          session_id: sid,
          ts_ms: 10_000 * s + i,
        })
      );
      const r = await real.publish([{
        kind: "replace",
        key: `pi:${sid}`,
        source: "pi",
        session_id: sid,
        base: null,
        segment: { records, marks: [] },
        source_watermark: 3,
        source_fingerprint: "fp",
        cursors: {},
        meta: { project: null, title: null, parent_session_id: null, files: [] },
      }]);
      assert.deepEqual(r.rejected, []);
    }
    const loads = { n: 0 };
    const counted = (name: string) => {
      loads.n++;
      return real.loadSegment(name);
    };
    const store = new Proxy(real, {
      get(t, p) {
        if (p === "loadSegment") return counted;
        const v = Reflect.get(t, p);
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
    await fn(store, loads, root);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function cold(store: Store) {
  // A budget no loaded CI box reaches: this test counts opens, not milliseconds.
  return createSearchEngine({
    store,
    windowDays: null,
    cursorKey: new Uint8Array(32).fill(5),
    timeBudgetMs: 60_000,
  });
}

Deno.test("a cold engine opens only the generations the summaries pack cannot rule out", () =>
  withWorld(async (store, loads, root) => {
    const none = await cold(store).search({ q: "qqxjvzzk" });
    assert.equal(none.state, "ready");
    assert.equal(none.groups.length, 0);
    assert.equal(loads.n, 0, "a no-hit query opens no generation");
    const rare = await cold(store).search({ q: "zephyrquartz" });
    assert.deepEqual(rare.groups.map((g) => g.session_key), ["pi:s7"]);
    assert.equal(loads.n, 1, "a rare word opens the one generation that holds it");
    // Without the pack: every generation is opened, and the answers are the same.
    await Deno.remove(join(root, SUMMARY_PACK_FILE));
    loads.n = 0;
    const again = await cold(store).search({ q: "zephyrquartz" });
    assert.equal(again.state, "ready");
    assert.deepEqual(again.groups, rare.groups);
    assert.equal(loads.n, SESSIONS);
  }));
