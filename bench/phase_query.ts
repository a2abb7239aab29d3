/**
 * The fixed query set, cold and warm. Cold: the first query of a fresh engine (empty
 * arena; the page cache stays warm: dropping it needs privileges CI machines may lack).
 * Warm: one engine, each query repeated until it answers without a budget or timeout cut
 * (the arena and the per-segment summaries filled), then timed over ROUNDS rounds; the
 * arena's miss counter gives shards loaded per warm query.
 */
import type { SearchResponse } from "../lib/message_search/mod.ts";
import { type Corpus, NEEDLES } from "./corpus/mod.ts";
import type { SearchEngine } from "../lib/message_search/mod.ts";
import { gc, stats, type Wired } from "./harness.ts";

/** Name → query string, in table order. */
export const QUERIES: [string, string][] = [
  ["rare", NEEDLES.rare],
  ["scarce", NEEDLES.scarce],
  ["mid", NEEDLES.mid],
  ["stopword", NEEDLES.stopword],
  ["phrase", `"${NEEDLES.phrase}"`],
  ["and", NEEDLES.and.join(" ")],
  ["accented", NEEDLES.accented],
  ["cjk", NEEDLES.cjk],
  ["nohit", NEEDLES.none],
];

const ROUNDS = 25;
const WARMUP_MAX = 60;

function summary(r: SearchResponse) {
  return {
    state: r.state + (r.partial_reason ? `:${r.partial_reason}` : ""),
    groups: r.groups.length,
    hits: r.groups.reduce((n, g) => n + g.total_hits, 0),
  };
}

/** What runQueries measures besides the defaults. */
export interface QueryRunOptions {
  /** The engines to measure (default w.engine: the store's lexicon in use). */
  engine?: () => SearchEngine;
  /** Also the relevance order (default true). */
  relevance?: boolean;
  /** Timed rounds (default ROUNDS). */
  rounds?: number;
}

/** Runs cold then warm queries; returns per-query figures. */
export async function runQueries(_c: Corpus, w: Wired, o: QueryRunOptions = {}) {
  const engine = o.engine ?? w.engine;
  const rounds = o.rounds ?? ROUNDS;
  const cold: Record<string, { ms: number; state: string; groups: number }> = {};
  for (const [name, q] of QUERIES) {
    const e = engine();
    const t = performance.now();
    const r = await e.search({ q });
    cold[name] = { ms: performance.now() - t, ...summary(r) };
    gc(); // each cold engine is a fresh daemon's: its arena must not pile up in this one
  }
  const e = engine();
  const warmup: Record<string, number> = {};
  for (const [name, q] of QUERIES) {
    let n = 0;
    for (; n < WARMUP_MAX; n++) {
      const r = await e.search({ q });
      if (r.state !== "partial") break;
    }
    warmup[name] = n + 1;
  }
  const times: Record<string, number[]> = Object.fromEntries(QUERIES.map(([n]) => [n, []]));
  const last: Record<string, ReturnType<typeof summary>> = {};
  const misses0 = e.stats().misses;
  for (let round = 0; round < rounds; round++) {
    for (const [name, q] of QUERIES) {
      const t = performance.now();
      const r = await e.search({ q });
      times[name]!.push(performance.now() - t);
      last[name] = summary(r);
    }
  }
  const st = e.stats();
  const warm = Object.fromEntries(
    QUERIES.map(([n]) => [n, { ...stats(times[n]!), ...last[n]!, warmupQueries: warmup[n]! }]),
  );
  const relevance = o.relevance === false ? null : await runRelevance(w);
  return {
    cold,
    warm,
    relevance,
    shardsLoadedPerWarmQuery: (st.misses - misses0) / (rounds * QUERIES.length),
    arena: { bytes: st.bytes, capBytes: st.capBytes, shards: st.shards, evictions: st.evictions },
    lexiconBytes: st.lexicon_bytes ?? 0,
  };
}

/**
 * The same query set with `sort: "relevance"` (issue 27): cold (a fresh engine's first
 * page, interactive budget) and warm (complete pages, after the newest pass filled the
 * arena of the same process — so both orders meet the same resident data), timed over
 * ROUNDS rounds; the newest figures above are its same-run baseline.
 */
async function runRelevance(w: Wired) {
  const cold: Record<string, { ms: number; state: string; groups: number }> = {};
  for (const [name, q] of QUERIES) {
    const e = w.engine();
    const t = performance.now();
    const r = await e.search({ q, sort: "relevance" });
    cold[name] = { ms: performance.now() - t, ...summary(r) };
    gc();
  }
  const e = w.engine();
  for (const [, q] of QUERIES) await e.search({ q, sort: "relevance", complete: true });
  const times: Record<string, number[]> = Object.fromEntries(QUERIES.map(([n]) => [n, []]));
  const last: Record<string, ReturnType<typeof summary>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, q] of QUERIES) {
      const t = performance.now();
      const r = await e.search({ q, sort: "relevance", complete: true });
      times[name]!.push(performance.now() - t);
      last[name] = summary(r);
    }
  }
  const warm = Object.fromEntries(QUERIES.map(([n]) => [n, { ...stats(times[n]!), ...last[n]! }]));
  return { cold, warm };
}
