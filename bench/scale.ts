/**
 * `deno task bench:scale [--preset quad] [--seed N] [--baseline-rev REV] [--out FILE]`
 * (issue 27 item 5): the cost of search as the corpus grows. Generates (or reuses) the
 * 4× corpus (6,800 sessions, 2.12M messages), then in child processes with the daemon's
 * V8 flags: the bare parse (phases.ts baseline), the store-level backfill plus the
 * lexicon build, and the scale phase — the fixed query set cold and warm with the
 * lexicon and, as the same-run baseline, with an engine that never reads it, and every
 * needle's complete count from both (they must be equal). With `--baseline-rev`, the
 * backfill phase of that revision runs too, from a git worktree, over the same corpus,
 * so store bytes and backfill speed are compared against it in the same run. Prints one
 * table and writes bench/results_scale.json.
 */
import { join } from "node:path";
import { ensureCorpus, PRESETS } from "./corpus/mod.ts";
import { DAEMON_V8_FLAGS } from "../lib/relaunch.ts";
import { QUERIES } from "./phase_query.ts";

function flag(name: string, dflt: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : dflt;
}

const presetName = flag("preset", "quad");
const preset = PRESETS[presetName];
if (!preset) throw new RangeError(`Unknown preset "${presetName}"`);
const seed = Number(flag("seed", "1"));
const baselineRev = flag("baseline-rev", "");
const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
const dir = join(tmp, "intendant-bench", `${presetName}-${seed}`);
const storeRoot = join(dir, "..", `${presetName}-${seed}-store`);
const out = flag("out", new URL("./results_scale.json", import.meta.url).pathname);
const log = (l: string) => console.error(l);
const here = new URL("..", import.meta.url).pathname;

const loadAtStart = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
const corpus = await ensureCorpus({ dir, preset, seed, log });

// deno-lint-ignore no-explicit-any
type R = any;

async function phase(name: string, o: { cwd?: string; root?: string } = {}): Promise<R> {
  log(`bench:scale: phase ${name}${o.cwd ? ` (${o.cwd})` : ""}…`);
  const t = performance.now();
  const cwd = o.cwd ?? here;
  const p = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${["--expose-gc", ...DAEMON_V8_FLAGS].join(",")}`,
      join(cwd, "bench", "phases.ts"),
      name,
      dir,
      o.root ?? storeRoot,
    ],
    cwd,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!p.success) throw new Error(`Phase "${name}" failed with exit code ${p.code}`);
  log(`bench:scale: phase ${name} done in ${Math.round(performance.now() - t)} ms`);
  return JSON.parse(new TextDecoder().decode(p.stdout).trim().split("\n").at(-1)!);
}

/** Bytes of every file under `root`. */
async function duBytes(root: string): Promise<number> {
  let n = 0;
  for await (const e of Deno.readDir(root)) {
    const p = join(root, e.name);
    if (e.isDirectory) n += await duBytes(p);
    else if (e.isFile) n += (await Deno.stat(p)).size;
  }
  return n;
}

/** The backfill of revision `rev` over the same corpus, from a worktree. */
async function baselineBackfill(rev: string): Promise<R> {
  const wt = join(tmp, `intendant-baseline-${rev}`);
  const git = (...args: string[]) => new Deno.Command("git", { args, cwd: here }).output();
  if (!(await Deno.stat(wt).then(() => true, () => false))) {
    const r = await git("worktree", "add", "--detach", wt, rev);
    if (!r.success) {
      throw new Error(`git worktree add failed: ${new TextDecoder().decode(r.stderr)}`);
    }
  }
  // The same npm packages (the lock is shared): install from Deno's cache.
  const inst = await new Deno.Command(Deno.execPath(), {
    args: ["install", "--frozen", "--quiet"],
    cwd: wt,
  }).output();
  if (!inst.success) throw new Error(`deno install in the baseline worktree failed`);
  const root = `${storeRoot}-${rev}`;
  const r = await phase("backfill", { cwd: wt, root });
  return { rev, ...r, storeBytesOnDisk: await duBytes(root) };
}

const baseline = await phase("baseline");
const backfill = await phase("backfill");
const storeBytesOnDisk = await duBytes(storeRoot);
const scale = await phase("scale");
const before = baselineRev ? await baselineBackfill(baselineRev) : null;

const results = {
  at: new Date().toISOString(),
  load: loadAtStart,
  corpus: {
    preset: presetName,
    sessions: corpus.sessions.length,
    messages: corpus.messages,
    bytes: corpus.bytes,
    planted: corpus.planted,
  },
  baseline,
  backfill: { ...backfill, storeBytesOnDisk },
  scale,
  before,
};
await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
console.log(renderScale(results));
log(`bench:scale: figures written to ${out}`);

/** The table (pure). */
function renderScale(r: R): string {
  const MB = 1024 * 1024;
  const n = (x: number, d = 0) =>
    Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: d }) : "–";
  const ms = (x: number) => `${n(x, x < 10 ? 2 : 1)} ms`;
  const ratio = (a: number, b: number) => (b > 0 ? `${n(a / b, 2)}×` : "–");
  const rows: string[][] = [];
  const s = r.scale;
  const lx = s.withLexicon;
  const bare = s.bare;
  for (const [name] of QUERIES) {
    const c = lx.cold[name];
    const cb = bare.cold[name];
    rows.push([
      `cold first query: ${name}`,
      `${ms(c.ms)} ${c.state}, ${c.groups} groups`,
      `no lexicon: ${ms(cb.ms)} ${cb.state}, ${cb.groups} groups`,
      ratio(c.ms, cb.ms),
      name === "stopword" ? "–" : "ready ≤ 150 ms",
    ]);
  }
  for (const [name] of QUERIES) {
    const w = lx.warm[name];
    const wb = bare.warm[name];
    rows.push([
      `warm query: ${name} (${w.groups} groups, ${n(w.hits)} hits, ${w.state})`,
      `p50 ${ms(w.p50)} · p95 ${ms(w.p95)}`,
      `no lexicon: p50 ${ms(wb.p50)} · p95 ${ms(wb.p95)} (${wb.state})`,
      ratio(w.p95, wb.p95),
      name === "stopword" ? "–" : "p95 ≤ 25 ms",
    ]);
  }
  for (const [name] of QUERIES) {
    const c = s.counts[name];
    rows.push([
      `complete count: ${name}`,
      `${c.sessions ?? "null"} sessions, ${n(c.hits)} hits on the page, ${ms(c.ms)}`,
      `no lexicon: ${c.baseline ?? "null"} sessions, ${n(c.baselineHits)} hits, ${
        ms(c.baselineMs)
      }`,
      c.sessions === c.baseline && c.hits === c.baselineHits ? "equal" : "**differ**",
      "equal",
    ]);
  }
  const rv = lx.relevance;
  if (rv) {
    const names = Object.keys(rv.warm);
    rows.push([
      "relevance warm p95 per needle · cold first page worst",
      names.map((k) => `${k} ${n(rv.warm[k].p95, 1)}`).join(" · ") +
      ` · cold ${ms(Math.max(...names.map((k) => rv.cold[k].ms)))}`,
      `newest warm p95 worst ${ms(Math.max(...names.map((k) => lx.warm[k].p95)))}`,
      "–",
      "≤ 20 ms (stopword ≤ 50), cold ≤ 300 ms",
    ]);
  }
  const bf = r.backfill;
  const lex = bf.lexicon;
  rows.push([
    "backfill (store level)",
    `${n((bf.records / bf.ms) * 1000)} msg/s · ${ms(bf.ms)} · ${
      n(bf.records)
    } records; lexicon build ${ms(lex.ms)} (${n(lex.covered)} generations, ${
      n(lex.entries)
    } entries, ${n(lex.bytes / MB, 1)} MiB, peak RSS ${n(lex.peakRss / MB)} MiB)`,
    r.before
      ? `${r.before.rev}: ${n((r.before.records / r.before.ms) * 1000)} msg/s · ${ms(r.before.ms)}`
      : `bare parse ${ms(r.baseline.parseMs)}`,
    r.before ? ratio(r.before.ms, bf.ms) : ratio(r.baseline.parseMs, bf.ms),
    "≥ 0.9× the baseline revision's speed",
  ]);
  rows.push([
    "store bytes on disk",
    `${n(bf.storeBytesOnDisk / MB, 1)} MiB (lexicon ${n(lex.bytes / MB, 1)} MiB)`,
    r.before
      ? `${r.before.rev}: ${n(r.before.storeBytesOnDisk / MB, 1)} MiB`
      : `corpus ${n(r.corpus.bytes / MB)} MiB`,
    r.before
      ? ratio(bf.storeBytesOnDisk, r.before.storeBytesOnDisk)
      : ratio(bf.storeBytesOnDisk, r.corpus.bytes),
    "≤ 1.3× the baseline revision's",
  ]);
  rows.push([
    "engine RSS: before the queries · after (lexicon resident)",
    `${n(s.rss.before / MB)} MiB · ${n(s.rss.afterQueries / MB)} MiB (lexicon ${
      n(lx.lexiconBytes / MB, 1)
    } MiB)`,
    "–",
    "–",
    "–",
  ]);
  const head = ["figure", "measured", "same-run baseline", "ratio", "target"];
  return [
    `corpus ${r.corpus.preset}: ${n(r.corpus.sessions)} sessions, ${
      n(r.corpus.messages)
    } messages, ${n(r.corpus.bytes / MB)} MiB; load at start ${r.load}`,
    "",
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((x) => `| ${x.join(" | ")} |`),
  ].join("\n");
}
