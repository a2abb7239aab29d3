/**
 * The steady state (issue 28): a daemon as a user meets it all day — at rest, asked now
 * and then, while an agent writes. On a real `intendant serve --locked` over the corpus
 * (bench/daemon.ts), after its first sweep, once its background work (the lexicon build)
 * has settled, and after one pass over the query kinds (each until it is no longer cut
 * short: a daemon a user has been using; a fresh daemon's first queries are the bench's
 * "cold first query" rows):
 *  - rest: the daemon's CPU over IDLE_MS from /proc/<pid>/stat (utime + stime), as a
 *    share of one core, and its RSS; beside it the same figure of a daemon on an empty
 *    state root (the process's own floor, same run);
 *  - sparse: one search every SPARSE_EVERY_MS for SPARSE_MS, cycling the bench's query
 *    kinds: the HTTP wall p50/p95/max beside the engine's own took_ms for the same
 *    requests (the in-process latency; the gap is loopback, the route and anything
 *    that waits on the query path);
 *  - writing: the same searches while an agent appends a message to the largest session
 *    every APPEND_EVERY_MS: the searches' wall and took_ms, and each append's time until a
 *    probe search finds it (probing every PROBE_MS: searches never sweep, so probing
 *    fast measures without helping it), plus the daemon's CPU over the phase.
 * With `team`, the same against a daemon publishing to a real PostgreSQL (`serve` with
 * INTENDANT_TEAM_URL: the publisher wakes after each sweep that moved the index).
 * The appended lines are truncated away afterwards (the corpus stays reusable).
 */
import { join } from "node:path";
import { appender, appendTarget, type Corpus, homesOf } from "./corpus/mod.ts";
import { Rng } from "./corpus/rng.ts";
import { type RunningDaemon, startDaemon, userArgsRun } from "./daemon.ts";
import { startPgCluster } from "../tests/helpers/pg_cluster.ts";
import { sleep, stats } from "./harness.ts";
import { QUERIES } from "./phase_query.ts";

const IDLE_MS = 60_000;
const FLOOR_IDLE_MS = 30_000;
const SPARSE_MS = 30_000;
const SPARSE_EVERY_MS = 700;
const APPEND_EVERY_MS = 1_500;
const PROBE_MS = 50;
/** Background work counts as settled once a 2 s window costs less than this share of a core. */
const SETTLED_SHARE = 0.05;
const SETTLE_MAX_MS = 180_000;
/** Linux's USER_HZ: /proc times are in these ticks on every architecture Deno ships for. */
const CLK_TCK = 100;

/** utime + stime of `pid`, in seconds. */
function cpuSeconds(pid: number): number {
  const s = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) start after the last ")".
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** The share of one core `pid` used over the next `ms`. */
async function cpuShare(pid: number, ms: number): Promise<number> {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  await sleep(ms);
  return (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000);
}

/** Waits until the daemon's background work (the lexicon build) has settled. */
async function settle(d: RunningDaemon): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < SETTLE_MAX_MS) {
    if (await cpuShare(d.pid, 2_000) < SETTLED_SHARE) break;
  }
  return Math.round(performance.now() - t0);
}

/** Each query kind until it is no longer cut short (at most 60 times); the searches it took. */
async function warmUp(d: RunningDaemon): Promise<number> {
  let n = 0;
  for (const [, q] of QUERIES) {
    for (let i = 0; i < 60; i++, n++) if ((await d.search(q)).page.state !== "partial") break;
  }
  return n;
}

/** Searches every SPARSE_EVERY_MS for `ms`: wall and engine times. */
async function sparse(d: RunningDaemon, ms: number) {
  const wall: number[] = [];
  const took: number[] = [];
  const states: Record<string, number> = {};
  let i = 0;
  for (const end = performance.now() + ms; performance.now() < end; i++) {
    const t = performance.now();
    const r = await d.search(QUERIES[i % QUERIES.length]![1]);
    wall.push(r.ms);
    took.push(r.page.took_ms);
    const st = r.page.state + (r.page.partial_reason ? `:${r.page.partial_reason}` : "");
    states[st] = (states[st] ?? 0) + 1;
    await sleep(Math.max(0, SPARSE_EVERY_MS - (performance.now() - t)));
  }
  return { searches: wall.length, wallMs: stats(wall), tookMs: stats(took), states };
}

/** Sparse searches while appends land; each append's time to searchable. */
async function writing(c: Corpus, d: RunningDaemon) {
  const target = appendTarget(c);
  const path = target.append.path;
  const st0 = await Deno.stat(path);
  const line = appender(target.append);
  const rng = new Rng(28);
  const latency: number[] = [];
  const c0 = cpuSeconds(d.pid);
  const t0 = performance.now();
  let stop = false;
  const appends = (async () => {
    for (let i = 0; !stop; i++) {
      const t = performance.now();
      const word = `steadyappend${i}q${rng.u32().toString(36)}`;
      const bytes = new TextEncoder().encode(line(`Check ${word} in the build`, Date.now()));
      const f = await Deno.open(path, { append: true });
      await f.write(bytes);
      f.close();
      const ta = performance.now();
      for (;;) {
        const r = await d.search(word);
        if (r.page.groups.some((g) => g.session_key === target.key)) break;
        if (performance.now() - ta > 30_000) throw new Error(`append ${i} never became searchable`);
        await sleep(PROBE_MS);
      }
      latency.push(performance.now() - ta);
      await sleep(Math.max(0, APPEND_EVERY_MS - (performance.now() - t)));
    }
  })();
  try {
    const searches = await sparse(d, SPARSE_MS);
    stop = true;
    await appends;
    const cpu = (cpuSeconds(d.pid) - c0) / ((performance.now() - t0) / 1000);
    return { ...searches, appends: latency.length, appendToSearchableMs: stats(latency), cpu };
  } finally {
    stop = true;
    await appends.catch(() => {});
    await Deno.truncate(path, st0.size);
    await Deno.utime(path, st0.atime ?? new Date(), st0.mtime ?? new Date());
  }
}

/** Options for {@link daemonSteady}. */
export interface SteadyOptions {
  /** A team database URL: the daemon publishes to it (`serve` with INTENDANT_TEAM_URL). */
  teamUrl?: string;
}

/** The steady-state figures of one daemon over the corpus (see the header). */
export async function daemonSteady(
  c: Corpus,
  home: string,
  log: (l: string) => void,
  o: SteadyOptions = {},
) {
  const env: Record<string, string> = o.teamUrl
    ? { INTENDANT_TEAM_URL: o.teamUrl, INTENDANT_MACHINE: "bench" }
    : {};
  const d = await startDaemon({ homes: c.homes, home, log, env });
  try {
    log(`bench: steady${o.teamUrl ? " (team)" : ""}: settling…`);
    const settledMs = await settle(d);
    const warmup = await warmUp(d);
    log(`bench: steady: at rest for ${IDLE_MS / 1000} s…`);
    const idleCpu = await cpuShare(d.pid, IDLE_MS);
    const idleRss = d.memory().rss;
    log("bench: steady: sparse searches…");
    const sparseRun = await sparse(d, SPARSE_MS);
    log("bench: steady: searches while an agent appends…");
    const write = await writing(c, d);
    const restAfter = await cpuShare(d.pid, 10_000);
    return {
      team: o.teamUrl !== undefined,
      settledMs,
      warmup,
      idleCpu,
      idleRss,
      sparse: sparseRun,
      writing: write,
      idleCpuAfter: restAfter,
      rssAfter: d.memory().rss,
      peakRss: d.memory().peak,
    };
  } finally {
    await d.stop();
  }
}

/** The floor: a daemon on an empty state root, at rest (its CPU and RSS). */
export async function steadyFloor(home: string) {
  const root = join(home, "empty-steady");
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const homes = homesOf(root);
  await Deno.mkdir(homes.userHome, { recursive: true });
  const d = await startDaemon({ homes, home });
  try {
    await settle(d);
    return { idleCpu: await cpuShare(d.pid, FLOOR_IDLE_MS), idleRss: d.memory().rss };
  } finally {
    await d.stop();
  }
}

/**
 * Every steady-state figure: the floor, the daemon alone, and the daemon publishing to a
 * team database on a throwaway PostgreSQL (skipped, saying why, where none can start, or
 * when `o.team` is false: `--no-team`, for a quick run on a large corpus).
 */
export async function steadyPhases(
  c: Corpus,
  home: string,
  log: (l: string) => void,
  o: { team?: boolean } = {},
) {
  log("bench: steady: floor (empty state root)…");
  const floor = await steadyFloor(home);
  const local = await daemonSteady(c, home, log);
  let team: Awaited<ReturnType<typeof daemonSteady>> | { skipped: string };
  const pg = o.team === false ? null : await startPgCluster({ durable: true });
  if (o.team === false) team = { skipped: "--no-team" };
  else if (!pg) team = { skipped: "no PostgreSQL ≥ 15 could be started here" };
  else {
    try {
      const url = pg.url;
      await userArgsRun(c.homes, home, ["team", "init"], { INTENDANT_TEAM_URL: url });
      team = await daemonSteady(c, home, log, { teamUrl: url });
    } finally {
      await pg.stop();
    }
  }
  return { floor, local, team };
}
