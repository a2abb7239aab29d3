/**
 * The benchmark corpus holds every source (issue 17), and what it says it wrote is what
 * the index holds: a quarter-size `small` corpus is generated (real fixture writers,
 * real files and SQLite databases), swept by the production wiring (bench/harness.ts
 * `wire`: buildExtractors over the corpus's homes, the real Indexer and store), and per
 * source the records added and the sessions in the manifest must equal the corpus's
 * `bySource` counts; each needle kind must be found in each source. The daemon's
 * environment (bench/daemon.ts `userEnv`) must resolve, through the real configuration,
 * to exactly the homes the in-process wiring sweeps — so both halves of the bench read
 * the same twelve homes. A cached corpus is reused only while intact: a database that
 * changed size makes `ensureCorpus` regenerate it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  closeSharedSnapshots,
  resolveSourceRoots,
  type Source,
  SOURCES,
} from "../lib/message_search/mod.ts";
import { ensureCorpus, NEEDLES, PRESETS, scaled } from "../bench/corpus/mod.ts";
import { userEnv } from "../bench/daemon.ts";
import { rootsOf, wire } from "../bench/harness.ts";
import { withTempDir } from "./helpers/temp.ts";

const NEEDLE_QUERIES: [string, string][] = [
  ["rare", NEEDLES.rare],
  ["mid", NEEDLES.mid],
  ["phrase", `"${NEEDLES.phrase}"`],
  ["and", NEEDLES.and.join(" ")],
  ["accented", NEEDLES.accented],
  ["cjk", NEEDLES.cjk],
];

Deno.test("the small bench corpus holds all twelve sources, indexed exactly as written", () =>
  withTempDir(async (dir) => {
    const preset = scaled(PRESETS.small!, 0.25);
    const corpusDir = join(dir, "corpus");
    const corpus = await ensureCorpus({ dir: corpusDir, preset, seed: 5 });
    for (const src of SOURCES) {
      const t = corpus.bySource[src];
      assert.ok(t && t.sessions > 0 && t.messages > 0, `the corpus holds no ${src} session`);
      const planted = corpus.plantedBySource[src]!;
      for (const [kind, n] of Object.entries(planted)) {
        // The scarce needle is three hits in the whole corpus, not in every source.
        if (kind === "scarce") continue;
        assert.ok(n > 0, `no "${kind}" needle planted in ${src}`);
      }
    }
    // The databases are closed: no WAL left beside them (OpenCode's and Goose's own state
    // after their last connection closed).
    assert.deepEqual(corpus.databases.map((d) => d.source).sort(), ["goose", "opencode"]);
    for (const d of corpus.databases) {
      await assert.rejects(Deno.stat(`${d.path}-wal`), Deno.errors.NotFound);
    }

    const w = await wire(corpus, join(dir, "store"));
    try {
      const r = await w.indexer.sweep();
      const m = await w.store.readManifest();
      const sessionsOf: Record<string, number> = {};
      for (const key of Object.keys(m.sessions)) {
        const src = key.slice(0, key.indexOf(":"));
        sessionsOf[src] = (sessionsOf[src] ?? 0) + 1;
      }
      const got: Record<string, [number, number]> = {};
      const want: Record<string, [number, number]> = {};
      for (const src of SOURCES) {
        assert.deepEqual(r.sources[src]?.errors ?? ["not swept"], [], `${src} sweep errors`);
        got[src] = [r.sources[src]!.recordsAdded, sessionsOf[src] ?? 0];
        want[src] = [corpus.bySource[src]!.messages, corpus.bySource[src]!.sessions];
      }
      assert.deepEqual(got, want, "records and sessions per source: indexed vs written");

      const engine = w.engine();
      for (const src of SOURCES) {
        for (const [kind, q] of NEEDLE_QUERIES) {
          const res = await engine.search({
            q,
            source: [src as Source],
            include_superseded: true,
            complete: true,
          });
          assert.ok(res.groups.length > 0, `no ${kind} hit (${q}) in ${src}`);
        }
      }
      // Exactly three scarce hits over the whole corpus, one inside `anemometers`.
      assert.equal(corpus.planted.scarce, 3);
      const scarce = await engine.search({ q: NEEDLES.scarce, complete: true });
      assert.equal(scarce.groups.reduce((n, g) => n + g.total_hits, 0), 3);
      const plural = await engine.search({ q: `${NEEDLES.scarce}s`, complete: true });
      assert.equal(plural.groups.reduce((n, g) => n + g.total_hits, 0), 1);
    } finally {
      closeSharedSnapshots();
    }

    // The daemon's environment resolves to the same homes the in-process wiring sweeps.
    const cfg = resolveConfig(userEnv(corpus.homes, join(dir, "scratch")), { cwd: "/" });
    const fromEnv = (await resolveSourceRoots(cfg)).homes
      .filter((h) => h.origin === "global")
      .map((h) => `${h.source} ${h.path}`)
      .sort();
    const swept = rootsOf(corpus).homes.map((h) => `${h.source} ${h.path}`).sort();
    assert.deepEqual(fromEnv, swept);

    // Reused while intact; a database that changed is regenerated (a new generation time).
    const at = (ms: number) => () => corpus.nowMs + ms;
    const again = await ensureCorpus({ dir: corpusDir, preset, seed: 5, now: at(1000) });
    assert.equal(again.nowMs, corpus.nowMs, "an intact corpus is reused");
    const f = await Deno.open(corpus.databases[0]!.path, { append: true });
    await f.write(new Uint8Array(4096));
    f.close();
    const fresh = await ensureCorpus({ dir: corpusDir, preset, seed: 5, now: at(2000) });
    assert.equal(fresh.nowMs, corpus.nowMs + 2000, "a changed database is regenerated");
    assert.deepEqual(
      Object.fromEntries(SOURCES.map((s) => [s, fresh.bySource[s]!.messages])),
      Object.fromEntries(SOURCES.map((s) => [s, corpus.bySource[s]!.messages])),
      "the same (preset, seed) writes the same messages",
    );
  }));
