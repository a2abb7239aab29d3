/**
 * F8 (reliability-plan §F, issue 15): a damaged generation is never served as "ready".
 * A real world (helpers/degraded_world.ts: 120 sessions of all five sources, 24 of them
 * native, each holding known needles, indexed by the real indexer into a real store)
 * searched through the real Hono app wired as the daemon wires it (engine →
 * Indexer.reportDamage). 100 generation files are damaged (byte flip, truncation, zero
 * fill, in rotation; native and external). Every answer must then either contain all the
 * expected hits or carry `partial`/`degraded` for at least as many sessions as it misses
 * (a silent answer: misses hits while claiming ready, or names fewer than it misses); the
 * search that meets the damage starts one background sweep that quarantines and
 * re-derives every damaged shard, after which every answer is whole and `ready` again.
 * Negative control: the old loop (skip what fails to load, answer ready) over the same
 * damaged store.
 * No search sweeps (issue 28) and the world's app has no freshness scheduler, so every
 * sweep counted is one the damage started (sweeps to heal is exact).
 */
import assert from "node:assert/strict";
import { NotFoundError } from "../lib/errors.ts";
import { formatResults } from "../lib/cli/cmd_search.ts";
import {
  CorruptGenerationError,
  type Coverage,
  createMessageIndex,
  createSearchEngine,
  decodeRecords,
  fold,
  type SearchResponse,
  type Store,
} from "../lib/message_search/mod.ts";
import { startDaemon } from "../lib/server/mod.ts";
import {
  buildF8World,
  damage,
  damageText,
  type F8World,
  genPath,
  PER_SOURCE,
  SHARED,
  SOURCES_WRITTEN,
} from "./helpers/degraded_world.ts";
import { figure } from "./helpers/figures.ts";
import { withTempDir } from "./helpers/temp.ts";

const DAMAGED = 100;

type Page = SearchResponse & { coverage: Coverage };

async function search(w: F8World, q: string): Promise<Page> {
  const r = await w.get(
    `/api/sessions/message-search?q=${encodeURIComponent(q)}&limit=100&complete=true`,
  );
  assert.equal(r.status, 200, await r.clone().text());
  return await r.json() as Page;
}

/** session key → total_hits of a page. */
function hitsOf(page: SearchResponse): Map<string, number> {
  return new Map(page.groups.map((g) => [g.session_key, g.total_hits]));
}

type Verdict = "whole" | "honest" | "silent";

/**
 * whole: every expected group with its hits, and `ready`; honest: something is missing
 * but the page is not `ready` and names at least as many sessions as it misses; silent:
 * anything else (the F8 bug). A group never expected is always a failure (asserted).
 */
function judge(page: SearchResponse, expected: Map<string, number>): Verdict {
  const got = hitsOf(page);
  for (const [k, n] of got) assert.equal(expected.get(k), n, `unexpected or wrong group ${k}`);
  const missing = [...expected.keys()].filter((k) => !got.has(k)).length;
  if (missing === 0) return page.state === "ready" && !page.degraded ? "whole" : "honest";
  const named = page.degraded?.count ?? 0;
  return page.state !== "ready" && named >= missing ? "honest" : "silent";
}

/** The old engine's loop: a generation that fails to load skips its session, silently. */
async function oldLoopSearch(store: Store, q: string): Promise<SearchResponse> {
  const needle = fold(q);
  const m = await store.readManifest();
  const groups: SearchResponse["groups"] = [];
  for (const [key, e] of Object.entries(m.sessions)) {
    let hits = 0;
    try {
      for (const g of e.generations) {
        const seg = await store.loadSegment(g);
        hits += decodeRecords(seg).filter((r) => fold(r.text).includes(needle)).length;
      }
    } catch (err) {
      if (err instanceof CorruptGenerationError || err instanceof NotFoundError) continue;
      throw err;
    }
    if (hits === 0) continue;
    groups.push({
      session_key: key,
      source: e.source,
      session_id: e.session_id,
      best_ts_ms: e.newest_ts_ms,
      total_hits: hits,
      source_gone: e.source_gone,
      title: e.meta.title,
      project: e.meta.project,
      hits: [],
    });
  }
  return { state: "ready", window_days: null, groups, cursor: null, took_ms: 0 };
}

Deno.test("F8: damaged generations are never answered silently as ready, and one sweep heals them", () =>
  withTempDir(async (root) => {
    const w = await buildF8World(root);
    const manifest = await w.store.readManifest();
    const keys = Object.keys(manifest.sessions).sort();
    assert.equal(keys.length, PER_SOURCE * SOURCES_WRITTEN.length, "every session indexed");

    // The reference: the healthy store answers each needle with exactly the sessions it
    // was planted in (so the expected hits are known independently of the engine). Its
    // own engine: the app's arena stays cold, as a daemon's is for shards not yet read
    // (a resident shard is served from memory and never meets the damage on disk).
    const reference = createSearchEngine({
      store: w.store,
      windowDays: w.cfg.messageSearch.windowDays,
      cursorKey: new Uint8Array(32).fill(8),
    });
    const queries = [
      ...SHARED,
      ...keys.filter((_, i) => i % 6 === 0).map((k) => w.uniqueOf.get(k)!),
    ];
    const expected = new Map<string, Map<string, number>>();
    for (const q of queries) {
      const page = await reference.search({ q, limit: 100, complete: true });
      assert.equal(page.state, "ready", q);
      assert.deepEqual(new Set(hitsOf(page).keys()), w.planted.get(q), q);
      expected.set(q, hitsOf(page));
    }

    // Damage 100 generation files (every generation of the chosen sessions), modes in
    // rotation, chosen across all sources; 20 sessions stay healthy.
    const order = [...keys].sort((a, b) => (fold(a + "f8") < fold(b + "f8") ? -1 : 1));
    const chosen = order.filter((_, i) => i % 6 !== 5).slice(0, DAMAGED);
    let files = 0;
    const modes = [0, 0, 0];
    for (const [i, key] of chosen.entries()) {
      for (const g of manifest.sessions[key]!.generations) {
        await damage(genPath(w, g), files % 3, i + 1);
        modes[files % 3]!++;
        files++;
      }
    }
    assert.ok(files >= DAMAGED);
    const damagedSet = new Set(chosen);
    const native = chosen.filter((k) => k.startsWith("intendant:")).length;
    assert.ok(native > 0 && native < chosen.length, "native and external sessions damaged");

    // Negative control: the old loop over the same damaged store answers ready, silently.
    let controlSilent = 0;
    for (const q of queries) {
      if (judge(await oldLoopSearch(w.store, q), expected.get(q)!) === "silent") controlSilent++;
    }

    // Through the app: the first search meets the damage and starts the repair sweep in
    // the background; the others run while it quarantines and re-derives.
    const sweeps0 = w.indexer.sweepsStarted;
    const tally = { whole: 0, honest: 0, silent: 0 };
    let sample: Page | null = null;
    for (const q of queries) {
      const page = await search(w, q);
      const v = judge(page, expected.get(q)!);
      tally[v]++;
      for (const s of page.degraded?.sessions ?? []) {
        assert.ok(
          damagedSet.has(s.session_key),
          `only damaged sessions are named: ${s.session_key}`,
        );
        assert.notEqual(s.reason, "source_gone");
      }
      if (v === "honest") {
        assert.ok(page.coverage.degraded.count > 0, "coverage names the degraded shards too");
        if (!sample || page.groups.length === 0) sample = page;
      }
    }
    assert.equal(tally.silent, 0, "no answer misses hits while claiming to be complete");
    assert.ok(tally.honest > 0, "the damage was met by the app's searches");
    await w.indexer.settled();
    const sweepsToHeal = w.indexer.sweepsStarted - sweeps0;
    assert.deepEqual(w.indexer.lastReport?.quarantined.sort(), [...damagedSet].sort());

    // Whole again: every answer ready with every expected hit; nothing degraded anywhere.
    for (const q of queries) {
      const page = await search(w, q);
      const v = judge(page, expected.get(q)!);
      tally[v]++;
      assert.equal(v, "whole", `${q}: ${page.state}/${page.partial_reason}`);
      assert.equal(page.coverage.degraded.count, 0);
    }
    assert.deepEqual(await w.store.verifyAll(), []);
    assert.equal(w.indexer.sweepsStarted - sweeps0, sweepsToHeal, "healthy answers start no sweep");

    // The CLI's wording for a degraded page: never "no matches", says what is missing.
    const text = formatResults(sample!, { answeredBy: "daemon" });
    // "its" or "their": a page names the damaged sessions it needed (a query rules the
    // others out by their summaries), which for a one-session needle is one.
    assert.match(
      text,
      /could not be searched: (its|their) index data is damaged and is being rebuilt/,
    );
    assert.doesNotMatch(text, /^no matches$/m);

    figure(
      "F8",
      `silent degraded answers: ${tally.silent}, sweeps to heal: ${sweepsToHeal}, ` +
        `control: ${controlSilent}/${queries.length} answers silent ` +
        `(${files} generations: ${modes[0]} flipped, ${modes[1]} truncated, ${modes[2]} zeroed; ` +
        `${native} native, ${chosen.length - native} external sessions; ` +
        `${tally.honest} degraded answers, ${tally.whole} whole)`,
    );
    assert.equal(tally.silent, 0);
    assert.equal(sweepsToHeal, 1);
    assert.equal(
      controlSilent,
      queries.length,
      "the old loop answers every damaged query silently",
    );
  }));

Deno.test("F8: a damaged session whose source is gone is reported lost, its detail view degrades, nothing loops", () =>
  withTempDir(async (root) => {
    const w = await buildF8World(root);
    const m = await w.store.readManifest();
    const codex = w.written.find((s) => s.source === "codex")!;
    const claude = w.written.find((s) => s.source === "claude-code")!;
    // The codex session's rollout vanishes: a sweep marks it source_gone (still served).
    await Deno.remove(codex.files[0]!);
    await w.indexer.sweep();
    assert.equal((await w.store.readManifest()).sessions[codex.key]!.source_gone, true);
    for (const key of [codex.key, claude.key]) {
      for (const g of m.sessions[key]!.generations) await damage(genPath(w, g), 0, 3);
    }

    // The detail view of the damaged claude session: a clear 503, never the generic 500.
    const detail = await w.get(`/api/session/${encodeURIComponent(claude.key)}`);
    assert.equal(detail.status, 503);
    const body = await detail.json();
    assert.equal(body.error, "index_rebuilding");
    assert.match(body.message, /damaged and is being rebuilt/);
    await w.indexer.settled();
    const healed = await w.get(`/api/session/${encodeURIComponent(claude.key)}`);
    assert.equal(healed.status, 200);
    assert.ok((await healed.json()).entries.length > 0);

    // The lost one: every answer names it (never ready), the repair sweep cannot re-derive
    // it, and later answers trigger no further sweep.
    const q = w.uniqueOf.get(codex.key)!;
    const first = await search(w, q);
    assert.equal(first.state, "partial");
    assert.equal(first.partial_reason, "degraded");
    assert.deepEqual(first.degraded?.sessions, [
      { session_key: codex.key, source: "codex", reason: "source_gone" },
    ]);
    await w.indexer.settled();
    const entry = (await w.store.readManifest()).sessions[codex.key]!;
    assert.equal(typeof entry.quarantined_at_ms, "number", "quarantined, not served");
    const before = w.indexer.sweepsStarted;
    for (let i = 0; i < 5; i++) {
      const page = await search(w, q);
      assert.equal(page.partial_reason, "degraded");
      assert.equal(page.degraded?.lost, 1);
      assert.equal(page.coverage.degraded.lost, 1);
      assert.deepEqual(page.coverage.degraded.sessions.map((s) => s.session_key), [codex.key]);
    }
    await w.indexer.settled();
    assert.equal(w.indexer.sweepsStarted, before, "a lost shard never loops sweeps");
    const cov = await (await w.get("/api/coverage")).json() as Coverage;
    assert.deepEqual(cov.degraded, {
      count: 1,
      rebuilding: 0,
      lost: 1,
      sessions: [{
        session_key: codex.key,
        source: "codex",
        reason: "source_gone",
        since_ms: entry.quarantined_at_ms!,
      }],
    });
    const lost = await w.get(`/api/session/${encodeURIComponent(codex.key)}`);
    assert.equal(lost.status, 410);
    assert.equal((await lost.json()).error, "index_lost");
  }));

Deno.test("F8: the startup check quarantines damage the same way, and the first sweep re-derives it", () =>
  withTempDir(async (root) => {
    const w = await buildF8World(root);
    const m = await w.store.readManifest();
    const keys = Object.keys(m.sessions).sort().filter((_, i) => i % 12 === 0);
    for (const [i, key] of keys.entries()) {
      for (const g of m.sessions[key]!.generations) await damage(genPath(w, g), i % 3, i + 5);
    }
    // A restart: a new index over the same state root.
    const next = await createMessageIndex(w.cfg);
    const { quarantined } = await next.indexer.startup();
    assert.deepEqual(quarantined.sort(), keys);
    const engine = createSearchEngine({
      store: next.store,
      windowDays: w.cfg.messageSearch.windowDays,
      cursorKey: new Uint8Array(32).fill(8),
    });
    const q = w.uniqueOf.get(keys[0]!)!;
    const page = await engine.search({ q, complete: true });
    assert.equal(page.partial_reason, "degraded");
    assert.deepEqual(page.groups, []);
    // Every quarantined session in scope is named (none can be ruled out unread).
    assert.equal(page.degraded?.count, keys.length);
    assert.deepEqual(page.degraded?.sessions.map((s) => s.session_key).sort(), keys);
    assert.ok(page.degraded?.sessions.every((s) => s.reason === "rebuilding"));
    const report = await next.indexer.sweep();
    assert.deepEqual(report.quarantined, []);
    const after = await engine.search({ q, complete: true });
    assert.equal(after.state, "ready");
    assert.deepEqual(after.groups.map((g) => g.session_key), [keys[0]]);
    assert.deepEqual(await next.store.verifyAll(), []);
  }));

Deno.test("F8: the daemon wires the query edge to the repair sweep (real HTTP)", () =>
  withTempDir(async (root) => {
    const w = await buildF8World(root);
    const m = await w.store.readManifest();
    const [key, key2] = [Object.keys(m.sessions).sort()[3]!, Object.keys(m.sessions).sort()[7]!];
    // Damaged before the daemon starts: its startup check quarantines it.
    for (const g of m.sessions[key]!.generations) await damage(genPath(w, g), 2, 1);
    const d = await startDaemon({ ...w.cfg, server: { host: "127.0.0.1", port: 0 } }, {
      noInitialSweep: true,
      // No watch and no safety net within the test: every sweep is the repair's.
      freshness: { watch: null, safetyNetMs: 3_600_000, pollMinMs: 3_600_000 },
    });
    try {
      // Damaged while it runs: the first search that reads it meets it.
      for (const g of m.sessions[key2]!.generations) await damageText(genPath(w, g), 9);
      const ask = async (sessionKey: string) => {
        const q = encodeURIComponent(w.uniqueOf.get(sessionKey)!);
        const r = await fetch(`${d.url}api/sessions/message-search?q=${q}&complete=true`, {
          headers: { authorization: `Bearer ${d.token}` },
        });
        assert.equal(r.status, 200);
        return await r.json() as Page;
      };
      // key2's own needle: a query reads only the sessions whose summaries may hold its
      // needles (the store's summaries pack), so it is the one that meets key2's damage;
      // the quarantined key is named on every page in scope.
      const first = await ask(key2);
      assert.equal(first.state, "partial");
      const reasons = new Map(first.degraded?.sessions.map((s) => [s.session_key, s.reason]));
      assert.equal(reasons.get(key), "rebuilding");
      assert.equal(reasons.get(key2), "damaged");
      // The sweep that search started (no periodic or first sweep runs here) re-derives
      // both: whole again.
      const deadline = Date.now() + 20_000;
      let page = await ask(key);
      while (page.state !== "ready" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        page = await ask(key);
      }
      assert.equal(page.state, "ready");
      assert.deepEqual(page.groups.map((g) => g.session_key), [key]);
      assert.equal(page.coverage.degraded.count, 0);
      assert.deepEqual((await ask(key2)).groups.map((g) => g.session_key), [key2]);
    } finally {
      await d.shutdown();
    }
  }));
