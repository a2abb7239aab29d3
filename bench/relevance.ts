/**
 * `deno task bench:relevance [--preset full|ci] [--seed N] [--dir PATH]`: the relevance
 * suite of issue 27 at full size. Writes the corpus (tests/helpers/relevance_corpus.ts),
 * indexes it with the product's wiring (resolveConfig → createMessageIndex → one sweep,
 * createSearchEngine over the store, nothing mocked), checks the index holds exactly the
 * prose written, asks every question through the engine with `sort: "relevance"` and
 * through the FTS5 baseline (tests/helpers/relevance_baseline.ts) in the same run, and
 * prints ONE table: hit@1, hit@3 and MRR per question kind for both, with query latency
 * p50/p95. Exits 1 when the gate fails (ours below the baseline on hit@3 or MRR for the
 * keyword or natural-language questions). Progress goes to stderr, the table to stdout.
 * tests/relevance_test.ts runs the same functions on the `ci` preset.
 * A question the engine refuses (it throws) counts as a miss and is named in `errors`.
 */
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  closeSharedSnapshots,
  createMessageIndex,
  createSearchEngine,
  decodeRecords,
  type Indexer,
  type SearchEngine,
  type SearchRequest,
  type Source,
  type Store,
} from "../lib/message_search/mod.ts";
import { type Baseline, openBaseline } from "../tests/helpers/relevance_baseline.ts";
import {
  QUESTION_KINDS,
  type QuestionKind,
  RELEVANCE_PRESETS,
  type RelevanceCorpus,
  relevanceEnv,
  type RelevancePreset,
  type RelevanceQuestion,
  writeRelevanceCorpus,
} from "../tests/helpers/relevance_corpus.ts";
import { pct } from "./harness.ts";

/** Results scored per question (a target ranked below this is a miss). */
export const RELEVANCE_DEPTH = 10;
/** The kinds the gate holds to the baseline (paraphrases are reported only). */
export const GATED_KINDS: readonly QuestionKind[] = ["keyword", "natural"];

/** A corpus written, indexed and checked, with both rankers open over it. */
export interface RelevanceSetup {
  corpus: RelevanceCorpus;
  store: Store;
  indexer: Indexer;
  engine: SearchEngine;
  baseline: Baseline;
  /** Sessions per source in the manifest after the sweep. */
  indexed: Partial<Record<Source, number>>;
  /** Sessions whose indexed prose differs from what the corpus wrote (or is missing). */
  mismatched: string[];
  /** The sweep's per-source errors, `<source>: <error>`. */
  sweepErrors: string[];
  /** Milliseconds: writing the corpus, the sweep, opening the baseline. */
  ms: { write: number; index: number; baseline: number };
  close(): Promise<void>;
}

/** Writes the corpus of `preset` under `root`, indexes it and opens both rankers. */
export async function prepareRelevance(
  root: string,
  o: { preset: RelevancePreset; seed?: number; log?: (line: string) => void },
): Promise<RelevanceSetup> {
  const { preset, seed, log = () => {} } = o;
  const corpus = await writeRelevanceCorpus(join(root, "corpus"), { preset, seed });
  log(`relevance: wrote ${corpus.sessions.length} sessions in ${corpus.generatedInMs} ms`);
  const cfg = resolveConfig(relevanceEnv(corpus.homes, root), { cwd: root });
  const { store, indexer } = await createMessageIndex(cfg);
  const t0 = performance.now();
  const report = await indexer.sweep();
  const indexMs = Math.round(performance.now() - t0);
  log(`relevance: indexed in ${indexMs} ms`);
  const sweepErrors = Object.entries(report.sources)
    .flatMap(([src, s]) => s.errors.map((e) => `${src}: ${e}`));
  const { indexed, mismatched } = await checkIndex(store, corpus);
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: crypto.getRandomValues(new Uint8Array(32)),
    isReady: () => indexer.ready,
  });
  const t1 = performance.now();
  const baseline = openBaseline(corpus.messages);
  const baselineMs = Math.round(performance.now() - t1);
  return {
    corpus,
    store,
    indexer,
    engine,
    baseline,
    indexed,
    mismatched,
    sweepErrors,
    ms: { write: corpus.generatedInMs, index: indexMs, baseline: baselineMs },
    async close() {
      baseline.close();
      await indexer.stop();
      closeSharedSnapshots();
    },
  };
}

/** Sessions per source in the store, and the sessions whose prose is not what was written. */
async function checkIndex(store: Store, corpus: RelevanceCorpus) {
  const m = await store.readManifest();
  const indexed: Partial<Record<Source, number>> = {};
  for (const e of Object.values(m.sessions)) indexed[e.source] = (indexed[e.source] ?? 0) + 1;
  const written = new Map<string, string[]>();
  for (const msg of corpus.messages) {
    const list = written.get(msg.key) ?? [];
    list.push(`${msg.role}\t${msg.text}`);
    written.set(msg.key, list);
  }
  const mismatched: string[] = [];
  for (const s of corpus.sessions) {
    const e = m.sessions[s.key];
    if (!e) {
      mismatched.push(`${s.key} (not indexed)`);
      continue;
    }
    const segs = await Promise.all(e.generations.map((g) => store.loadSegment(g)));
    // No writer of the corpus rewinds, so no record is superseded: a mark would hide some
    // of the prose from the engine and not from the baseline.
    if (segs.some((v) => v.marks.length > 0)) mismatched.push(`${s.key} (supersession marks)`);
    const got = segs.flatMap((v) => decodeRecords(v)).map((r) => `${r.role}\t${r.text}`).sort();
    const want = [...(written.get(s.key) ?? [])].sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) mismatched.push(s.key);
  }
  return { indexed, mismatched };
}

/** One question's outcome: the target's 1-based rank in the top RELEVANCE_DEPTH, 0 if absent. */
export interface QuestionResult {
  question: RelevanceQuestion;
  ours: number;
  base: number;
  oursMs: number;
  baseMs: number;
  /** The engine's answer state (`ready`, `partial:<reason>`), or `error: <message>`. */
  state: string;
}

/** hit@1, hit@3 and MRR over one kind's questions. */
export interface Score {
  n: number;
  hit1: number;
  hit3: number;
  mrr: number;
  p50Ms: number;
  p95Ms: number;
}

/** Every question's result and the scores per kind. */
export interface RelevanceScores {
  results: QuestionResult[];
  byKind: Record<QuestionKind, { ours: Score; base: Score }>;
  /** Questions the engine threw on. */
  errors: string[];
}

/** Asks every question of the corpus through the engine and through the baseline. */
export async function scoreRelevance(
  setup: RelevanceSetup,
  o: { request?: Partial<SearchRequest> } = {},
): Promise<RelevanceScores> {
  const results: QuestionResult[] = [];
  const errors: string[] = [];
  for (const question of setup.corpus.questions) {
    let keys: string[] = [];
    let state: string;
    const t0 = performance.now();
    try {
      const r = await setup.engine.search({
        q: question.q,
        sort: "relevance",
        limit: RELEVANCE_DEPTH,
        complete: true,
        ...o.request,
      });
      keys = r.groups.map((g) => g.session_key);
      state = r.state + (r.partial_reason ? `:${r.partial_reason}` : "");
    } catch (err) {
      state = `error: ${(err as Error).message}`;
      errors.push(`${question.id} (${JSON.stringify(question.q)}): ${(err as Error).message}`);
    }
    const oursMs = performance.now() - t0;
    const t1 = performance.now();
    const base = setup.baseline.rank(question.q, RELEVANCE_DEPTH);
    const baseMs = performance.now() - t1;
    results.push({
      question,
      ours: rankOf(keys, question.target),
      base: rankOf(base, question.target),
      oursMs,
      baseMs,
      state,
    });
  }
  const byKind = {} as RelevanceScores["byKind"];
  for (const kind of QUESTION_KINDS) {
    const rs = results.filter((r) => r.question.kind === kind);
    byKind[kind] = {
      ours: score(rs.map((r) => r.ours), rs.map((r) => r.oursMs)),
      base: score(rs.map((r) => r.base), rs.map((r) => r.baseMs)),
    };
  }
  return { results, byKind, errors };
}

function rankOf(keys: string[], target: string): number {
  const i = keys.slice(0, RELEVANCE_DEPTH).indexOf(target);
  return i < 0 ? 0 : i + 1;
}

function score(ranks: number[], ms: number[]): Score {
  const n = ranks.length;
  const mean = (
    f: (r: number) => number,
  ) => (n === 0 ? 0 : ranks.reduce((a, r) => a + f(r), 0) / n);
  return {
    n,
    hit1: mean((r) => (r === 1 ? 1 : 0)),
    hit3: mean((r) => (r >= 1 && r <= 3 ? 1 : 0)),
    mrr: mean((r) => (r > 0 ? 1 / r : 0)),
    p50Ms: pct(ms, 50),
    p95Ms: pct(ms, 95),
  };
}

/** The gate's failures: a gated kind where ours is below the baseline on hit@3 or MRR. */
export function relevanceGate(s: RelevanceScores): string[] {
  const out: string[] = [];
  for (const kind of GATED_KINDS) {
    const { ours, base } = s.byKind[kind];
    if (ours.hit3 < base.hit3) {
      out.push(`${kind}: hit@3 ${f3(ours.hit3)} is below the baseline's ${f3(base.hit3)}`);
    }
    if (ours.mrr < base.mrr) {
      out.push(`${kind}: MRR ${f3(ours.mrr)} is below the baseline's ${f3(base.mrr)}`);
    }
  }
  return out;
}

const f3 = (x: number) => x.toFixed(3);
const fms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : "–");

/** The table: kind × {ours, baseline} × {hit@1, hit@3, MRR} (and latency when asked). */
export function renderRelevance(
  setup: Pick<RelevanceSetup, "corpus" | "ms">,
  s: RelevanceScores,
  o: { latency?: boolean } = {},
): string {
  const c = setup.corpus;
  const head = ["kind", "n", "ours hit@1", "ours hit@3", "ours MRR", "base hit@1", "base hit@3"];
  head.push("base MRR");
  if (o.latency) head.push("ours p50 / p95", "base p50 / p95");
  const rows = [head, head.map(() => "---")];
  for (const kind of QUESTION_KINDS) {
    const { ours, base } = s.byKind[kind];
    const row = [kind, String(ours.n), f3(ours.hit1), f3(ours.hit3), f3(ours.mrr)];
    row.push(f3(base.hit1), f3(base.hit3), f3(base.mrr));
    if (o.latency) {
      row.push(
        `${fms(ours.p50Ms)} / ${fms(ours.p95Ms)}`,
        `${fms(base.p50Ms)} / ${fms(base.p95Ms)}`,
      );
    }
    rows.push(row);
  }
  const sources = Object.entries(c.bySource).map(([k, v]) => `${k} ${v}`).join(", ");
  const kinds = ["target", "cross", "near", "generic"]
    .map((k) => `${k} ${c.sessions.filter((x) => x.kind === k).length}`).join(", ");
  const gate = relevanceGate(s);
  return [
    `Relevance (issue 27), preset "${c.preset.name}", seed ${c.seed}: ${c.sessions.length} ` +
    `sessions (${kinds}), ${c.messages.length} messages; ${sources}.`,
    `ours: the engine with sort "relevance", limit ${RELEVANCE_DEPTH}; base: FTS5 bm25, ` +
    `words ORed. Written in ${setup.ms.write} ms, indexed in ${setup.ms.index} ms.`,
    "",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
    gate.length === 0 ? "gate: pass" : `gate: FAIL — ${gate.join("; ")}`,
  ].join("\n");
}

function flag(name: string, dflt: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : dflt;
}

if (import.meta.main) {
  const name = flag("preset", "full");
  const preset = RELEVANCE_PRESETS[name as keyof typeof RELEVANCE_PRESETS];
  if (!preset) throw new RangeError(`Unknown preset "${name}": use "full" or "ci"`);
  const seed = Number(flag("seed", "27"));
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  const root = flag("dir", join(tmp, "intendant-bench", `relevance-${name}-${seed}`));
  // Always a fresh corpus: its dates are relative to now and it takes seconds to write.
  await Deno.remove(root, { recursive: true }).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
  const log = (l: string) => console.error(l);
  const setup = await prepareRelevance(root, { preset, seed, log });
  try {
    const broken = [...setup.sweepErrors, ...setup.mismatched.map((k) => `prose differs: ${k}`)];
    if (broken.length > 0) {
      throw new Error(`The index does not hold the corpus: ${broken.slice(0, 5).join("; ")}`);
    }
    const scores = await scoreRelevance(setup);
    for (const e of scores.errors) log(`relevance: engine error: ${e}`);
    console.log(renderRelevance(setup, scores, { latency: true }));
    if (relevanceGate(scores).length > 0) Deno.exitCode = 1;
  } finally {
    await setup.close();
  }
}
