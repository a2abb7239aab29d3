/**
 * Cold is the common case (issue 16): over a realistic corpus (the bench's small preset:
 * all five sources in their exact on-disk formats, indexed by the real indexer into a
 * real store), a fresh engine's first page for every needle kind — with the default
 * budgets, no `complete` — is `ready` and exactly the page a warm engine answers. The old
 * engine answered most of these `partial/timeout` cold (bench: 6 of 8 on the default
 * preset).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensureCorpus, NEEDLES, PRESETS } from "../bench/corpus/mod.ts";
import { rootsOf } from "../bench/harness.ts";
import {
  buildExtractors,
  createSearchEngine,
  Indexer,
  openStore,
  PARSER_VERSION,
  type SearchResponse,
} from "../lib/message_search/mod.ts";
import { withTempDir } from "./helpers/temp.ts";

const KINDS: [string, string][] = [
  ["rare", NEEDLES.rare],
  ["mid", NEEDLES.mid],
  ["stopword", NEEDLES.stopword],
  ["phrase", `"${NEEDLES.phrase}"`],
  ["and", NEEDLES.and.join(" ")],
  ["accented", NEEDLES.accented],
  ["cjk", NEEDLES.cjk],
  ["nohit", NEEDLES.none],
];
/** Fresh engines tried per needle: a CPU-starved CI box may stall one past the budget. */
const COLD_TRIALS = 3;

Deno.test("every needle kind's cold first page is ready and equal to the warm one", () =>
  withTempDir(async (root) => {
    const corpus = await ensureCorpus({
      dir: join(root, "corpus"),
      preset: PRESETS.small!,
      seed: 1,
    });
    const store = await openStore({
      root: join(root, "store"),
      parserVersion: PARSER_VERSION,
      windowDays: null,
      cacheReads: true,
    });
    const indexer = new Indexer({
      store,
      extractors: () => Promise.resolve(buildExtractors(rootsOf(corpus))),
      windowDays: null,
    });
    await indexer.sweep();
    const cursorKey = new Uint8Array(32).fill(9);
    const engine = () => createSearchEngine({ store, windowDays: null, cursorKey });
    const warm = engine();
    const stalls: string[] = [];
    for (const [kind, q] of KINDS) {
      let want: SearchResponse | null = null;
      for (let i = 0; i < 60 && want?.state !== "ready"; i++) want = await warm.search({ q });
      assert.equal(want!.state, "ready", `${kind}: warm`);
      let got: SearchResponse | null = null;
      for (let t = 0; t < COLD_TRIALS && got?.state !== "ready"; t++) {
        if (got) stalls.push(`${kind}: ${got.state}/${got.partial_reason} in ${got.took_ms} ms`);
        got = await engine().search({ q });
      }
      assert.equal(got!.state, "ready", `${kind}: cold ${got!.partial_reason} (${stalls})`);
      assert.deepEqual(got!.groups, want!.groups, kind);
      assert.equal(got!.cursor, want!.cursor, kind);
    }
    assert.ok(stalls.length <= 1, `cold pages cut short: ${stalls.join("; ")}`);
  }));
