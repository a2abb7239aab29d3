/**
 * `deno task bench:team [--preset default] [--seed N] [--machines 10] [--rounds 25]
 * [--appends 20] [--out FILE]`: issue 19's team figures, each beside a same-run baseline.
 *  1. the bench corpus and its backfilled store (bench/main.ts's; rebuilt by the backfill
 *     phase when missing or of another parser version), split into `machines` stores
 *     (split.ts: each a real store with its share of the sessions);
 *  2. a real PostgreSQL started here (tests/helpers/pg_cluster.ts, `durable`: fsync and
 *     synchronous commit ON; shared_buffers 1 GiB; defaults otherwise), the schema migrated;
 *  3. publish: baseline A — PostgreSQL's raw COPY of the same rows into an unindexed
 *     table (copy_baseline.ts); baseline B — one machine alone into its own database;
 *     then every machine at once, one process each (publish_child.ts): aggregate
 *     messages/s = all records / wall time from the first start to the last end;
 *  4. disk: the replica's relations (heap, TOAST, indexes) against the prose bytes;
 *  5. queries (query_child.ts): team p50/p95 per needle kind beside the local engine over
 *     the unsplit store, and the complete counts of both compared;
 *  6. append → team-searchable: the publish path alone (append_child.ts: a store append, a
 *     publish, a reader's poll) and the whole path through a real `serve --team` daemon over
 *     fixture homes (daemon_append_child.ts), each beside append → locally searchable.
 * Prints one table to stdout, writes the figures as JSON (bench/results_team.json).
 */
import { join } from "node:path";
import { PARSER_VERSION } from "../../lib/message_search/mod.ts";
import { migrateTeamDb, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { startPgCluster } from "../../tests/helpers/pg_cluster.ts";
import { ensureCorpus, PRESETS } from "../corpus/mod.ts";
import { DAEMON_V8_FLAGS } from "../../lib/relaunch.ts";

function flag(name: string, dflt: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : dflt;
}

const presetName = flag("preset", "default");
const preset = PRESETS[presetName];
if (!preset) throw new RangeError(`Unknown preset "${presetName}"`);
const seed = Number(flag("seed", "1"));
const machines = Number(flag("machines", "10"));
const rounds = flag("rounds", "25");
const appends = flag("appends", "20");
const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
const dir = join(tmp, "intendant-bench", `${presetName}-${seed}`);
const storeRoot = join(dir, "..", `${presetName}-${seed}-store`);
const splitDir = join(dir, "..", `${presetName}-${seed}-team-${machines}`);
const out = flag("out", new URL("../results_team.json", import.meta.url).pathname);
const log = (l: string) => console.error(l);
const here = (f: string) => new URL(f, import.meta.url).pathname;

/** Runs a bench script in a child process; returns its last stdout line as JSON. */
async function child(script: string, args: string[]): Promise<Record<string, unknown>> {
  const p = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${["--expose-gc", ...DAEMON_V8_FLAGS].join(",")}`,
      script,
      ...args,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!p.success) throw new Error(`${script} failed with exit code ${p.code}`);
  return JSON.parse(new TextDecoder().decode(p.stdout).trim().split("\n").at(-1)!);
}

const loadAtStart = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
await ensureCorpus({ dir, preset, seed, log });
const storeCurrent = await Deno.readTextFile(join(storeRoot, "manifest.json")).then(
  (t) => JSON.parse(t).parser_version === PARSER_VERSION,
  () => false,
);
if (!storeCurrent) {
  log("bench:team: backfilling the full store (bench/phases.ts backfill)…");
  await child(here("../phases.ts"), ["backfill", dir, storeRoot]);
}
log(`bench:team: splitting into ${machines} machine stores…`);
const split = await child(here("./split.ts"), [storeRoot, splitDir, String(machines)]) as {
  records: number;
  sessions: number;
  per: { sessions: number; records: number }[];
};

/**
 * The server as a team would run it: durable (fsync and synchronous commit on) and
 * shared_buffers sized for its data (1 GiB for a ≈ 0.9 GiB replica; the default 128 MiB
 * is a laptop's install, not a shared server's), everything else PostgreSQL's defaults.
 */
const SERVER_SETTINGS = ["shared_buffers=1GB", "effective_cache_size=4GB"];
const pg = await startPgCluster({ durable: true, settings: SERVER_SETTINGS });
if (!pg) throw new Error("PostgreSQL is needed for bench:team (apt-get install -y postgresql)");
const results: Record<string, unknown> = {};
/** Written after every phase: a phase that fails leaves the figures before it. */
const save = () => Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
try {
  const admin = await openTeamDb(parseTeamUrl(pg.url));
  try {
    results.server = { version: admin.serverVersion, settings: SERVER_SETTINGS };
    // Baseline B first, in its own database: one machine alone.
    await admin.sql.unsafe(`CREATE DATABASE solo TEMPLATE template0 ENCODING 'UTF8'`);
    const soloUrl = pg.url.replace(/\/postgres$/, "/solo");
    const solo = await openTeamDb(parseTeamUrl(soloUrl));
    await migrateTeamDb(solo, { binaryVersion: "bench" });
    await solo.close();
    log("bench:team: baseline B: one machine alone…");
    const alone = await child(here("./publish_child.ts"), [join(splitDir, "m0"), "m0", soloUrl]);
    await admin.sql.unsafe(`DROP DATABASE solo`);
    await migrateTeamDb(admin, { binaryVersion: "bench" });
    log("bench:team: baseline A: raw COPY of the same rows…");
    const copy = await child(here("./copy_baseline.ts"), [splitDir, String(machines), pg.url]);
    log(`bench:team: ${machines} machines publishing at once…`);
    const t0 = performance.now();
    const each = await Promise.all(
      Array.from(
        { length: machines },
        (_, i) => child(here("./publish_child.ts"), [join(splitDir, `m${i}`), `m${i}`, pg.url]),
      ),
    );
    const wallMs = performance.now() - t0;
    const inserted = each.reduce(
      (a, r) => a + ((r.report as { records_inserted: number }).records_inserted),
      0,
    );
    const aloneRecords = (alone.report as { records_inserted: number }).records_inserted;
    results.publish = {
      machines,
      records: inserted,
      expected: split.records,
      wallMs,
      msgsPerS: inserted / (wallMs / 1000),
      aloneMsgsPerS: aloneRecords / ((alone.ms as number) / 1000),
      copyMsgsPerS: (copy.records as number) / ((copy.ms as number) / 1000),
      peakRssMax: Math.max(...each.map((r) => r.peakRss as number)),
    };
    await save();
    // What a real server's autovacuum does shortly after a bulk load: statistics for the
    // planner (the 2-character plan's choice reads them).
    await admin.sql.unsafe(`VACUUM ANALYZE intendant.records`);
    await admin.sql.unsafe(`VACUUM ANALYZE intendant.sessions`);
    const [disk] = await admin.sql<{ rel: string; prose: string; rows: string }[]>`
      SELECT (pg_total_relation_size('intendant.records') +
              pg_total_relation_size('intendant.sessions'))::text AS rel,
             (SELECT sum(octet_length(text)) FROM intendant.records)::text AS prose,
             (SELECT count(*) FROM intendant.records)::text AS rows`;
    results.disk = {
      bytes: Number(disk!.rel),
      proseBytes: Number(disk!.prose),
      ratio: Number(disk!.rel) / Number(disk!.prose),
      rows: Number(disk!.rows),
    };
    await save();
  } finally {
    await admin.close();
  }
  log("bench:team: queries (team beside local)…");
  results.queries = await child(here("./query_child.ts"), [pg.url, storeRoot, rounds]);
  await save();
  log("bench:team: append → team-searchable…");
  results.append = await child(here("./append_child.ts"), [
    join(splitDir, "m1"),
    "m1",
    pg.url,
    appends,
  ]);
  log("bench:team: append → team-searchable through a real serve --team daemon…");
  results.daemonAppend = await child(here("./daemon_append_child.ts"), [pg.url, appends]);
  await save();
} finally {
  await pg.stop();
}
results.machine = { nproc: navigator.hardwareConcurrency, load: loadAtStart, split };
await save();
console.log(renderTeamTable(results));

/** The figures beside their baselines and targets. */
function renderTeamTable(r: Record<string, unknown>): string {
  const p = r.publish as {
    machines: number;
    records: number;
    expected: number;
    msgsPerS: number;
    aloneMsgsPerS: number;
    copyMsgsPerS: number;
  };
  const d = r.disk as { bytes: number; proseBytes: number; ratio: number };
  const q = (r.queries as { queries: Record<string, Record<string, Record<string, unknown>>> })
    .queries;
  type Stats = { p50: number; p95: number };
  const a = r.append as { team: Stats; local: Stats; publish: Stats };
  const da = r.daemonAppend as { team: Stats; local: Stats };
  const f = (x: number, digits = 1) => x.toFixed(digits);
  const lines = [
    `| figure | measured | same-run baseline | ratio | target |`,
    `|---|---|---|---|---|`,
    `| publish, ${p.machines} machines at once | ${
      f(p.msgsPerS, 0)
    } msg/s (${p.records} of ${p.expected}) | raw COPY ${
      f(p.copyMsgsPerS, 0)
    } msg/s; one machine alone ${f(p.aloneMsgsPerS, 0)} msg/s | ${
      f(p.msgsPerS / p.copyMsgsPerS, 2)
    }× COPY | ≥ 20,000 msg/s |`,
    `| server disk | ${f(d.bytes / 2 ** 20)} MiB | prose ${f(d.proseBytes / 2 ** 20)} MiB | ${
      f(d.ratio, 2)
    }× | ≤ 5× |`,
    `| append → team-searchable through serve --team, p95 | ${f(da.team.p95)} ms (p50 ${
      f(da.team.p50)
    }) | the daemon's local search p95 ${f(da.local.p95)} ms | ${
      f(da.team.p95 / da.local.p95, 1)
    }× | ≤ 2,000 ms |`,
    `| append → team-searchable, publish path only, p95 | ${f(a.team.p95)} ms (publish p95 ${
      f(a.publish.p95)
    } ms) | append → locally searchable p95 ${f(a.local.p95)} ms | ${
      f(a.team.p95 / a.local.p95, 1)
    }× | ≤ 2,000 ms |`,
  ];
  for (const [name, v] of Object.entries(q)) {
    const t = v.team as Record<string, number | string>;
    const l = v.local as Record<string, number>;
    const c = v.counts as Record<string, number | boolean>;
    const target = name === "stopword" || name === "2char"
      ? "≤ 150 ms"
      : name === "nohit"
      ? "—"
      : "≤ 20 ms";
    lines.push(
      `| team ${name} p95 (${t.state}) | ${t.p95} ms (p50 ${t.p50}) | local p95 ${l.p95} ms | ${
        f((t.p95 as number) / l.p95!, 1)
      }× | ${target}; counts ${
        c.identical ? "identical" : "DIFFER"
      } (${c.teamSessions}/${c.teamHits} vs ${c.localSessions}/${c.localHits}) |`,
    );
  }
  return lines.join("\n");
}
