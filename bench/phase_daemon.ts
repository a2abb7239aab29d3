/**
 * The figures of the daemon as users run it (issue 16: "measure the daemon as users run
 * it"), taken on real `intendant serve --locked` processes (daemon.ts) over HTTP:
 *  - backfill: a daemon started on an empty store; its first sweep IS the backfill; its
 *    peak RSS (VmHWM) when coverage turns `ready`, and the first sweep's wall time;
 *  - floor: a daemon on an empty state root (no sessions): the process's own RSS, the
 *    same-run baseline of the idle figure;
 *  - cold: per needle kind, a fresh daemon on the backfilled store, queried once as soon
 *    as it is ready (the dashboard's interactive request): the cold engine's first page;
 *  - warm: one daemon, idle RSS (sampled after its first sweep), then each query until it
 *    is no longer cut short (≤ 60 times), then ROUNDS rounds over the set, timed on the
 *    client (HTTP wall: the loopback round trip; no search sweeps since issue 28) and by the
 *    engine (took_ms); its RSS after the loop; then appends to the largest session,
 *    polled through the search route every POLL_MS (a search never sweeps: the daemon's
 *    file watch picks the append up, so polling fast measures without helping it);
 *  - peak: the largest VmHWM over every daemon but the backfilling one;
 *  - one-shot: with no daemon running, `intendant search Q --json` per needle (a new
 *    process, no daemon: the complete first page), beside `intendant --version` (the same
 *    process start and module graph, no search) as its floor; and a no-op `intendant
 *    index`, whose store writes are found by comparing every store file's size, mtime and
 *    ctime before and after (a process of its own has no counting Fs).
 * The largest session is appended to and truncated back (the corpus stays reusable).
 */
import { join } from "node:path";
import { appender, appendTarget, type Corpus, homesOf } from "./corpus/mod.ts";
import { Rng } from "./corpus/rng.ts";
import {
  daemonStoreRoot,
  idleRss,
  oneShotFloor,
  oneShotSearch,
  type Page,
  procMemory,
  type RunningDaemon,
  startDaemon,
  userArgsRun,
} from "./daemon.ts";
import { sleep, stats } from "./harness.ts";
import { QUERIES } from "./phase_query.ts";

const ROUNDS = 25;
const WARMUP_MAX = 60;
const APPENDS = 24;
const POLL_MS = 20;
/** How long an idle daemon is sampled before its RSS is read. */
const IDLE_SAMPLE_MS = 2_000;

function summary(p: Page) {
  return {
    state: p.state + (p.partial_reason ? `:${p.partial_reason}` : ""),
    groups: p.groups.length,
    hits: p.groups.reduce((n, g) => n + g.total_hits, 0),
    keys: p.groups.map((g) => g.session_key),
  };
}

/** Backfill by a daemon started on an empty store. */
export async function daemonBackfill(c: Corpus, home: string, log: (l: string) => void) {
  await Deno.remove(daemonStoreRoot(c), { recursive: true }).catch(() => {});
  const d = await startDaemon({ homes: c.homes, home, log });
  const peakRss = d.memory().peak;
  const idle = await idleRss(d, IDLE_SAMPLE_MS);
  await d.stop();
  return {
    firstSweepMs: d.readyMs - d.startedMs,
    startedMs: d.startedMs,
    peakRss,
    rssAfter: idle.rss,
    storeBytesOnDisk: await treeBytes(daemonStoreRoot(c)),
  };
}

/** Every daemon figure but the backfill (see the header). */
export async function daemonServe(c: Corpus, home: string, log: (l: string) => void) {
  const peaks: number[] = [];
  const floor = await emptyDaemon(home);
  log("bench: cold daemons…");
  const cold: Record<string, ReturnType<typeof summary> & { ms: number; tookMs: number }> = {};
  for (const [name, q] of QUERIES) {
    const d = await startDaemon({ homes: c.homes, home, log });
    const r = await d.search(q);
    cold[name] = { ms: r.ms, tookMs: r.page.took_ms, ...summary(r.page) };
    peaks.push(d.memory().peak);
    await d.stop();
  }
  log("bench: warm daemon…");
  const d = await startDaemon({ homes: c.homes, home, log });
  const idle = await idleRss(d, IDLE_SAMPLE_MS);
  const launcherRss = procMemory(d.launcherPid).rss;
  const warm = await warmLoop(d);
  const afterQueries = await idleRss(d, IDLE_SAMPLE_MS);
  log("bench: appends through the search route…");
  const append = await appendLatency(c, d);
  peaks.push(append.peakBeforeReparse);
  await d.stop();
  log("bench: one-shot CLI…");
  const oneShot = await oneShots(c, home, warm);
  return {
    floor,
    startedMs: d.startedMs,
    readyMs: d.readyMs,
    idleRss: idle.rss,
    idleRssMax: idle.max,
    launcherRss,
    afterQueriesRss: afterQueries.rss,
    peakRss: Math.max(...peaks),
    cold,
    warm,
    append,
    oneShot,
  };
}

/** A daemon on an empty state root: the process floor. */
async function emptyDaemon(home: string) {
  const root = join(home, "empty-state");
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const homes = homesOf(root);
  await Deno.mkdir(homes.userHome, { recursive: true });
  const d = await startDaemon({ homes, home });
  const idle = await idleRss(d, IDLE_SAMPLE_MS);
  await d.stop();
  return { idleRss: idle.rss, startedMs: d.startedMs, readyMs: d.readyMs };
}

async function warmLoop(d: RunningDaemon) {
  const warmup: Record<string, number> = {};
  for (const [name, q] of QUERIES) {
    let n = 0;
    for (; n < WARMUP_MAX; n++) if ((await d.search(q)).page.state !== "partial") break;
    warmup[name] = n + 1;
  }
  const wall: Record<string, number[]> = Object.fromEntries(QUERIES.map(([n]) => [n, []]));
  const took: Record<string, number[]> = Object.fromEntries(QUERIES.map(([n]) => [n, []]));
  const last: Record<string, ReturnType<typeof summary>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, q] of QUERIES) {
      const r = await d.search(q);
      wall[name]!.push(r.ms);
      took[name]!.push(r.page.took_ms);
      last[name] = summary(r.page);
    }
  }
  return Object.fromEntries(QUERIES.map(([n]) => [n, {
    wallMs: stats(wall[n]!),
    tookMs: stats(took[n]!),
    ...last[n]!,
    warmupQueries: warmup[n]!,
  }]));
}

/** Append → searchable through the search route (the daemon's watch sweeps it; searching does not). */
async function appendLatency(c: Corpus, d: RunningDaemon) {
  const target = appendTarget(c);
  const path = target.append.path;
  const st0 = await Deno.stat(path);
  const line = appender(target.append);
  const rng = new Rng(99);
  const latency: number[] = [];
  let lastWord = "";
  try {
    for (let i = 0; i < APPENDS; i++) {
      // A search refreshes a stale index first: the append lands 0–1 s after that.
      await d.search(`benchappendwarm${i}`);
      await sleep(rng.int(1000));
      const word = `benchappend${i}q${rng.u32().toString(36)}`;
      lastWord = word;
      const bytes = new TextEncoder().encode(
        line(`Please also check ${word} before the release`, Date.now()),
      );
      const t0 = performance.now();
      const f = await Deno.open(path, { append: true });
      await f.write(bytes);
      f.close();
      for (;;) {
        const r = await d.search(word);
        if (r.page.groups.some((g) => g.session_key === target.key)) break;
        if (performance.now() - t0 > 30_000) throw new Error(`append ${i} never became searchable`);
        await sleep(POLL_MS);
      }
      latency.push(performance.now() - t0);
    }
  } finally {
    await Deno.truncate(path, st0.size);
    await Deno.utime(path, st0.atime ?? new Date(), st0.mtime ?? new Date());
  }
  // The one-shot searches that follow compare their first page with the warm loop's,
  // which ran before these appends: wait until the daemon has swept the truncation (the
  // appended messages are gone or superseded), or the stopword's page would differ by
  // the session the appends made the newest.
  // The peak so far is the query-serving peak; re-deriving the truncated session is a
  // re-extraction (backfill-like work) and is reported on its own.
  const peakBeforeReparse = d.memory().peak;
  const settleMs = await settleTruncation(d, target.key, lastWord);
  return {
    session: { key: target.key, messages: target.messages },
    appends: APPENDS,
    latencyMs: stats(latency),
    settleMs,
    peakBeforeReparse,
    peakAfterReparse: d.memory().peak,
  };
}

/**
 * Polls (each search refreshes a stale index) until the last appended word no longer
 * finds a current record of `key`; null when that takes over 30 s.
 */
async function settleTruncation(d: RunningDaemon, key: string, word: string) {
  const t0 = performance.now();
  while (performance.now() - t0 < 30_000) {
    const r = await d.search(word);
    const group = r.page.groups.find((g) => g.session_key === key);
    if (!group?.hits.some((h) => !h.superseded)) return Math.round(performance.now() - t0);
    await sleep(250);
  }
  return null;
}

async function oneShots(c: Corpus, home: string, warm: Awaited<ReturnType<typeof warmLoop>>) {
  const floorMs: number[] = [];
  for (let i = 0; i < 3; i++) floorMs.push(await oneShotFloor(c.homes, home));
  const search: Record<
    string,
    ReturnType<typeof summary> & { ms: number; answeredBy: string; sameAsWarm: boolean }
  > = {};
  for (const [name, q] of QUERIES) {
    const r = await oneShotSearch(c.homes, home, q);
    const s = summary(r.page);
    const w = warm[name] as { keys: string[] } | undefined;
    search[name] = {
      ms: r.ms,
      answeredBy: r.page.answered_by,
      ...s,
      sameAsWarm: w !== undefined && w.keys.join("\n") === s.keys.join("\n"),
    };
  }
  const index = await noopIndex(c, home);
  return { floorMs: stats(floorMs), search, index };
}

/** A no-op `intendant index` (after the daemons' sweeps): which store files it changed. */
async function noopIndex(c: Corpus, home: string) {
  const root = daemonStoreRoot(c);
  await userArgsRun(c.homes, home, ["index", "--json"]); // settles anything pending
  const before = await fileFacts(root);
  const t = performance.now();
  await userArgsRun(c.homes, home, ["index", "--json"]);
  const ms = performance.now() - t;
  const after = await fileFacts(root);
  const changed: string[] = [];
  let bytes = 0;
  for (const [name, f] of after) {
    const b = before.get(name);
    if (!b || b.size !== f.size || b.mtime !== f.mtime || b.ctime !== f.ctime) {
      changed.push(name);
      bytes += f.size;
    }
  }
  return { ms, changedFiles: changed.slice(0, 10), changedCount: changed.length, bytes };
}

async function fileFacts(root: string) {
  const out = new Map<string, { size: number; mtime: number; ctime: number }>();
  const walk = async (dir: string, rel: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p, `${rel}${e.name}/`);
      else {
        const st = await Deno.lstat(p);
        out.set(rel + e.name, {
          size: st.size,
          mtime: st.mtime?.getTime() ?? 0,
          ctime: st.ctime?.getTime() ?? 0,
        });
      }
    }
  };
  await walk(root, "");
  return out;
}

/** Bytes of every file under `root`. */
export async function treeBytes(root: string): Promise<number> {
  let n = 0;
  for (const f of (await fileFacts(root)).values()) n += f.size;
  return n;
}
