/**
 * `deno task bench [--preset default|small|default-five|small-five] [--seed N] [--dir PATH]
 * [--out FILE]` (`default` and `small` hold all twelve sources; the `-five` presets are
 * issue 16's five-source corpora, the same-run baseline of a twelve-source run):
 * generates (or reuses) the corpus, runs the store-level phases each in a child process
 * with the daemon's V8 flags (phases.ts), then the daemon as users run it — real
 * `intendant serve --locked` processes driven over HTTP, and the one-shot CLI
 * (phase_daemon.ts) — runs ripgrep over the raw homes as the scan baseline, sizes the UI
 * bundle, then prints ONE table with every figure beside its same-run baseline and
 * target, and writes the figures as JSON (bench/results.json by default). Progress goes
 * to stderr; the table to stdout.
 * Stores: the backfill phase builds `<dir>/../<preset>-<seed>-store` (its bytes counted
 * through the store's Fs); the daemon builds its own, where the program puts it
 * (`<corpus>/state/cache/message_search/v1`); HOME is the corpus's `home/`, the working
 * directory and Deno's cache `<dir>/../<preset>-<seed>-home`.
 */
import { join } from "node:path";
import { ensureCorpus, NEEDLES, PRESETS, scanRoots } from "./corpus/mod.ts";
import { timeRg } from "./phase_deep.ts";
import { QUERIES } from "./phase_query.ts";
import { renderTable } from "./report.ts";
import { DAEMON_V8_FLAGS } from "../lib/relaunch.ts";
import { daemonBackfill, daemonServe } from "./phase_daemon.ts";
import { steadyPhases } from "./phase_steady.ts";

function flag(name: string, dflt: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : dflt;
}

const presetName = flag("preset", "default");
const preset = PRESETS[presetName];
if (!preset) {
  throw new RangeError(
    `Unknown preset "${presetName}": use ${Object.keys(PRESETS).map((k) => `"${k}"`).join(", ")}`,
  );
}
const seed = Number(flag("seed", "1"));
const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
const dir = flag("dir", join(tmp, "intendant-bench", `${presetName}-${seed}`));
const out = flag("out", new URL("./results.json", import.meta.url).pathname);
const storeRoot = join(dir, "..", `${presetName}-${seed}-store`);
const home = join(dir, "..", `${presetName}-${seed}-home`);
const log = (l: string) => console.error(l);

/** Load average when the run starts (other work on the machine skews every figure). */
const loadAtStart = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
const corpus = await ensureCorpus({ dir, preset, seed, log });

async function phase(name: string): Promise<Record<string, unknown>> {
  log(`bench: phase ${name}…`);
  const t = performance.now();
  const p = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${["--expose-gc", ...DAEMON_V8_FLAGS].join(",")}`,
      new URL("./phases.ts", import.meta.url).pathname,
      name,
      dir,
      storeRoot,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!p.success) throw new Error(`Phase "${name}" failed with exit code ${p.code}`);
  const text = new TextDecoder().decode(p.stdout).trim().split("\n").at(-1)!;
  log(`bench: phase ${name} done in ${Math.round(performance.now() - t)} ms`);
  return JSON.parse(text);
}

async function ripgrep(): Promise<Record<string, number>> {
  // Only the homes the corpus wrote (a five-source corpus has no Gemini home): rg exits 2
  // on a missing path.
  const homes: string[] = [];
  for (const h of scanRoots(corpus.homes)) {
    if (await Deno.stat(h).then(() => true, () => false)) homes.push(h);
  }
  const needles: Record<string, string> = {
    rare: NEEDLES.rare,
    scarce: NEEDLES.scarce,
    mid: NEEDLES.mid,
    stopword: NEEDLES.stopword,
    phrase: NEEDLES.phrase,
    and: NEEDLES.and[0],
    accented: NEEDLES.accented,
    cjk: NEEDLES.cjk,
    nohit: NEEDLES.none,
  };
  const run = async (needle: string) => {
    const ms = await timeRg(homes, needle);
    if (ms === null) throw new Deno.errors.NotFound("rg");
    return ms;
  };
  try {
    await run(NEEDLES.none); // page cache warm-up
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      log("bench: rg not found (apt-get install -y ripgrep); the scan baseline is skipped");
      return {};
    }
    throw err;
  }
  const outRg: Record<string, number> = {};
  for (const [name] of QUERIES) outRg[name] = await run(needles[name]!);
  return outRg;
}

async function uiGzipBytes(): Promise<number | null> {
  try {
    const { buildUi } = await import("../build.ts");
    return (await buildUi()).gzipBytes;
  } catch (err) {
    log(`bench: UI bundle not built: ${(err as Error).message}`);
    return null;
  }
}

async function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(await Deno.readTextFile("/proc/cpuinfo"))?.[1];
  const mem = /MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))?.[1];
  return {
    nproc: navigator.hardwareConcurrency,
    cpu: cpu ?? "unknown",
    ramGiB: mem ? Math.round(Number(mem) / 1024 / 1024) : null,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    os: Deno.build.os + "/" + Deno.build.arch,
    load: loadAtStart,
  };
}

// `--only steady`: the steady-state phase alone (over the daemon store the last full run
// built, or building it first), into results_steady.json (results_steady_<preset>.json for
// another preset); `--no-team` leaves the team half out.
if (flag("only", "") === "steady") {
  await Deno.mkdir(home, { recursive: true });
  const steady = await steadyPhases(corpus, home, log, { team: !Deno.args.includes("--no-team") });
  const name = presetName === "default"
    ? "results_steady.json"
    : `results_steady_${presetName}.json`;
  const path = new URL(`./${name}`, import.meta.url).pathname;
  await Deno.writeTextFile(
    path,
    JSON.stringify({ at: new Date().toISOString(), steady }, null, 2) + "\n",
  );
  console.log(JSON.stringify(steady, null, 2));
  Deno.exit(0);
}

const baseline = await phase("baseline");
const backfill = await phase("backfill");
const sources = await phase("sources");
const stages = await phase("stages");
const vault = await phase("vault");
const deep = await phase("deep");
await Deno.mkdir(home, { recursive: true });
log("bench: daemon backfill (intendant serve --locked on an empty store)…");
const daemonFill = await daemonBackfill(corpus, home, log);
const serve = await phase("serve");
const daemon = await daemonServe(corpus, home, log);
log("bench: steady state (at rest, sparse searches, searches while an agent appends)…");
const steady = await steadyPhases(corpus, home, log);
log("bench: ripgrep baseline…");
const rg = await ripgrep();
const uiGzip = await uiGzipBytes();
const results = {
  at: new Date().toISOString(),
  machine: await machine(),
  corpus: {
    preset: presetName,
    seed,
    sessions: corpus.sessions.length,
    files: corpus.files,
    messages: corpus.messages,
    bytes: corpus.bytes,
    bySource: corpus.bySource,
    planted: corpus.planted,
    plantedBySource: corpus.plantedBySource,
    generatedInMs: corpus.generatedInMs,
  },
  baseline,
  backfill,
  sources,
  stages,
  vault,
  deep,
  serve,
  daemonBackfill: daemonFill,
  daemon,
  steady,
  rg,
  uiGzip,
};
await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
console.log(renderTable(results));
log(`bench: figures written to ${out}`);
