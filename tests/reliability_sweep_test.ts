/**
 * Indexer-sweep reliability (reliability-plan B13, B14), with the real Indexer and native
 * extractor over sessions written by the real SessionLog.
 *  - B13 concurrent writers: 8 child processes append to 8 sessions as fast as they can
 *    while the test sweeps every 100 ms and queries the engine meanwhile; afterwards
 *    every message is indexed exactly once, and the lag from write to publish is measured.
 *  - B14 mid-sweep errors: a source deleted after discovery, deleted while being read, its
 *    sidecars gone mid-read (ENOENT), its spine swapped for a directory, unreadable
 *    (EACCES: the sweep runs as uid nobody), and real EIO on its reads (strace -e inject,
 *    scoped to that one file): the error stays with that source and every other source
 *    publishes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createIntendantExtractor,
  createSearchEngine,
  decodeRecords,
  type Extractor,
  Indexer,
  openStore,
  type Store,
} from "../lib/message_search/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { PV, withTempDir } from "./helpers/store_fixtures.ts";
import { systemTool } from "./helpers/temp.ts";

const HELPERS = new URL("./helpers/", import.meta.url).pathname;
const REPO = new URL("../", import.meta.url).pathname;
const KEY = new Uint8Array(32).fill(3);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every record id of `key`, in shard order. */
async function idsOf(store: Store, key: string): Promise<string[]> {
  const e = (await store.readManifest()).sessions[key];
  const ids: string[] = [];
  for (const g of e?.generations ?? []) {
    for (const r of decodeRecords(await store.loadSegment(g))) ids.push(r.id);
  }
  return ids;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

Deno.test("B13: 8 concurrent writers are indexed exactly once with bounded lag", () =>
  withTempDir(async (dir) => {
    const seconds = STRESS ? 60 : 10;
    const logsDir = join(dir, "logs");
    await Deno.mkdir(logsDir);
    const store = await openStore({
      root: join(dir, "store"),
      parserVersion: PV,
      windowDays: null,
      cacheReads: true,
    });
    // Lag: from a message's write (its ts_ms) to the publish that first acknowledged it.
    const seen = new Set<string>();
    const lags: number[] = [];
    const recording: Store = {
      root: store.root,
      readManifest: () => store.readManifest(),
      async publish(updates) {
        const r = await store.publish(updates);
        const at = Date.now();
        const ok = new Set(r.accepted);
        for (const u of updates) {
          if (!ok.has(u.key)) continue;
          for (const rec of u.segment?.records ?? []) {
            const id = `${u.key}|${rec.id}`;
            if (seen.has(id)) continue;
            seen.add(id);
            lags.push(at - rec.ts_ms);
          }
        }
        return r;
      },
      deleteSession: (k) => store.deleteSession(k),
      liftTombstone: (k) => store.liftTombstone(k),
      loadSegment: (n) => store.loadSegment(n),
      loadSummaries: () => store.loadSummaries(),
      loadLexicon: (k) => store.loadLexicon(k),
      refreshLexicon: (o) => store.refreshLexicon(o),
      gc: () => store.gc(),
      verifyAll: () => store.verifyAll(),
      dropEntries: (k) => store.dropEntries(k),
    };
    const indexer = new Indexer({
      store: recording,
      extractors: [createIntendantExtractor({ logsDir })],
      windowDays: null,
    });
    const engine = createSearchEngine({
      store,
      windowDays: null,
      cursorKey: KEY,
      isReady: () => indexer.ready,
    });
    const writers = Array.from({ length: 8 }, (_, w) => {
      // nice 19: the writers take every cycle the indexer (and any test running beside this
      // one) leaves them; an agent writing its transcript never starves the daemon.
      const proc = new Deno.Command("nice", {
        args: [
          "-n",
          "19",
          Deno.execPath(),
          "run",
          "-A",
          "--quiet",
          join(HELPERS, "rel_writer_child.ts"),
          logsDir,
          String(seconds),
          `w${w}`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      return {
        proc,
        out: Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.status,
        ]),
      };
    });
    let running = true;
    const done = Promise.all(writers.map((w) => w.out)).finally(() => (running = false));
    let sweeps = 0;
    let sweepErrors = 0;
    let queries = 0;
    let queryErrors = 0;
    const sweeper = (async () => {
      while (running) {
        const t0 = Date.now();
        await indexer.sweep().then(() => sweeps++, () => sweepErrors++);
        await sleep(Math.max(0, 100 - (Date.now() - t0)));
      }
    })();
    const querier = (async () => {
      while (running) {
        try {
          await engine.search({ q: "m1", limit: 5 });
          queries++;
        } catch (err) {
          void err;
          queryErrors++;
        }
        await sleep(50);
      }
    })();
    const outs = await done;
    await Promise.all([sweeper, querier]);
    // Quiet sweeps: the writers are done; publish the tails.
    for (let i = 0; i < 3; i++) await indexer.sweep();
    let written = 0;
    let lost = 0;
    let dup = 0;
    for (const [stdout, stderr, status] of outs) {
      assert.ok(status.success, stderr);
      const id = /^session (\S+)$/m.exec(stdout)![1]!;
      const n = Number(/^wrote (\d+)$/m.exec(stdout)![1]);
      written += n;
      const ids = (await idsOf(store, `intendant:${id}`)).filter((x) => x.startsWith("m:"));
      const unique = new Set(ids);
      dup += ids.length - unique.size;
      for (let s = 1; s <= n; s++) if (!unique.has(`m:${s}`)) lost++;
    }
    lags.sort((a, b) => a - b);
    figure("B13", `lost: ${lost}, dup: ${dup}, p99 index lag: ${percentile(lags, 99)} ms`);
    console.log(
      `B13 detail: ${seconds} s, 8 writers, messages written: ${written} ` +
        `(${Math.round(written / seconds)}/s), sweeps: ${sweeps} (errors ${sweepErrors}), ` +
        `queries: ${queries} (errors ${queryErrors}), writers at nice 19, lag p50 ${
          percentile(lags, 50)
        } ms, ` +
        `p99 ${percentile(lags, 99)} ms, max ${lags.at(-1) ?? 0} ms`,
    );
    assert.equal(lost, 0);
    assert.equal(dup, 0);
    assert.equal(sweepErrors, 0);
    assert.equal(queryErrors, 0);
    assert.ok(written > 0 && lags.length >= written);
    assert.ok(percentile(lags, 99) < 30_000, "index lag must stay bounded");
  }));

type Fault =
  | "deleted after discovery"
  | "deleted while read"
  | "sidecars gone mid-read"
  | "spine swapped for a directory";

/** The native extractor, with `faults[key]` applied to that unit just before/while it is read. */
function faulty(logsDir: string, faults: Map<string, Fault>): Extractor {
  const inner = createIntendantExtractor({ logsDir });
  return {
    source: inner.source,
    discover: () => inner.discover(),
    async extract(unit, prior, ctx) {
      const fault = faults.get(unit.key);
      const dir = join(logsDir, unit.sessionId);
      if (fault === "deleted after discovery") await Deno.remove(dir, { recursive: true });
      if (fault === "sidecars gone mid-read") {
        await Deno.remove(join(dir, "turns"), { recursive: true });
      }
      if (fault === "spine swapped for a directory") {
        await Deno.remove(join(dir, "session.jsonl"));
        await Deno.mkdir(join(dir, "session.jsonl"));
      }
      if (fault !== "deleted while read") return await inner.extract(unit, prior, ctx);
      const p = inner.extract(unit, prior, ctx);
      // Handled at once: it may reject while the directory is being removed below, before
      // `await p` (an unhandled rejection fails the whole test module). `await p` still
      // sees the error.
      p.catch(() => {});
      // The extractor has stat'ed and is opening/reading: pull the directory from under it.
      await sleep(0);
      await Deno.remove(dir, { recursive: true });
      return await p;
    },
  };
}

async function runChild(
  cmd: string[],
  o: { cwd: string; env?: Record<string, string> },
): Promise<{ ok: boolean; errors?: string[]; records?: Record<string, number>; raw: string }> {
  const out = await new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    cwd: o.cwd,
    env: o.env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const line = text.split("\n").find((l) => l.startsWith("{"));
  const raw = `${text}${new TextDecoder().decode(out.stderr)}`;
  return line ? { ...JSON.parse(line), raw } : { ok: false, raw };
}

Deno.test("B14: a source failing mid-sweep stays isolated; every other source publishes", () =>
  withTempDir(async (dir) => {
    await Deno.chmod(dir, 0o755);
    const logsDir = join(dir, "logs");
    const sessions: { id: string; texts: string[] }[] = [];
    for (let i = 0; i < 10; i++) sessions.push(await writeNativeSession(logsDir, { turns: 3 }));
    const want = new Map(sessions.map((s) => [`intendant:${s.id}`, s.texts.length]));
    const kinds: Fault[] = [
      "deleted after discovery",
      "deleted while read",
      "sidecars gone mid-read",
      "spine swapped for a directory",
    ];
    // The child scenarios read a pristine copy of the sessions.
    const copy = join(dir, "copy");
    assert.ok((await new Deno.Command("cp", { args: ["-a", logsDir, copy] }).output()).success);
    const faults = new Map(kinds.map((k, i) => [`intendant:${sessions[i]!.id}`, k]));
    const store = await openStore({
      root: join(dir, "store"),
      parserVersion: PV,
      windowDays: null,
    });
    const indexer = new Indexer({ store, extractors: [faulty(logsDir, faults)], windowDays: null });
    let aborts = 0;
    let others = 0;
    let othersPublished = 0;
    const lines: string[] = [];
    const tallyOthers = (records: Record<string, number>, victims: Set<string>) => {
      for (const [key, n] of want) {
        if (victims.has(key)) continue;
        others++;
        if (records[key] === n) othersPublished++;
      }
    };
    for (let sweep = 0; sweep < 2; sweep++) {
      const r = await indexer.sweep().then((x) => x, (err: unknown) => {
        aborts++;
        lines.push(`in-process sweep ${sweep} aborted: ${String(err)}`);
        return null;
      });
      const m = await store.readManifest();
      tallyOthers(
        Object.fromEntries(Object.entries(m.sessions).map(([k, e]) => [k, e.records])),
        new Set(faults.keys()),
      );
      if (sweep === 0) {
        for (const [key, kind] of faults) {
          const err = r?.sources.intendant?.errors.find((e) => e.startsWith(key));
          const e = m.sessions[key];
          lines.push(
            `${kind}: ${
              err
                ? `isolated error "${err.slice(key.length + 2)}"`
                : `no error, ${e ? `${e.records} records` : "nothing"} published`
            }`,
          );
        }
      }
    }
    // EACCES: root reads through mode 000, so the sweep runs as uid nobody.
    const eaccesVictim = sessions[4]!;
    await Deno.chmod(join(copy, eaccesVictim.id, "session.jsonl"), 0o000);
    await new Deno.Command("chmod", { args: ["-R", "a+rX", copy] }).output();
    await Deno.chmod(join(copy, eaccesVictim.id, "session.jsonl"), 0o000);
    const nobodyHome = join(dir, "nobody");
    await Deno.mkdir(nobodyHome);
    const chown = await new Deno.Command("chown", { args: ["nobody", nobodyHome] }).output();
    // The deno binary may live where uid nobody cannot reach it (npx puts it under /root):
    // give nobody its own executable copy.
    const nobodyDeno = join(nobodyHome, "deno");
    await Deno.copyFile(Deno.execPath(), nobodyDeno);
    await Deno.chmod(nobodyDeno, 0o755);
    const child = [nobodyDeno, "run", "-A", "--quiet", join(HELPERS, "rel_sweep_child.ts")];
    const eacces = chown.success
      ? await runChild(
        [
          systemTool("runuser"),
          "-u",
          "nobody",
          "--",
          "env",
          `DENO_DIR=${nobodyHome}/deno_dir`,
          `HOME=${nobodyHome}`,
          ...child,
          copy,
          join(nobodyHome, "store"),
        ],
        { cwd: REPO },
      )
      : { ok: false, raw: "chown failed" };
    // EIO: a real EIO from read(2)/pread64(2), injected by strace on that one file only.
    await Deno.chmod(join(copy, eaccesVictim.id, "session.jsonl"), 0o644);
    const eioVictim = sessions[5]!;
    const eio = await runChild(
      [
        "strace",
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-P",
        join(copy, eioVictim.id, "session.jsonl"),
        "-e",
        "trace=read,pread64,readv,preadv",
        "-e",
        "inject=read,pread64,readv,preadv:error=EIO",
        ...child,
        copy,
        join(dir, "eio-store"),
      ],
      { cwd: REPO },
    );
    const childKinds: [string, typeof eacces, string][] = [
      ["EACCES (uid nobody, mode 000)", eacces, `intendant:${eaccesVictim.id}`],
      ["EIO on read (strace -e inject)", eio, `intendant:${eioVictim.id}`],
    ];
    let childRuns = 0;
    for (const [kind, res, key] of childKinds) {
      if (res.records === undefined) {
        console.warn(`\n!!! B14 ${kind} NOT RUN: ${res.raw.slice(0, 300)} !!!\n`);
        continue;
      }
      childRuns++;
      if (!res.ok) aborts++;
      tallyOthers(res.records, new Set([key]));
      const err = res.errors?.find((e) => e.startsWith(key));
      lines.push(`${kind}: ${err ? `isolated error "${err.slice(key.length + 2)}"` : "no error"}`);
    }
    figure(
      "B14",
      `other sources published: ${
        Math.round((100 * othersPublished) / others)
      }%, sweep aborts: ${aborts}`,
    );
    console.log(`B14 detail (${others} other-source checks):\n  ${lines.join("\n  ")}`);
    assert.equal(aborts, 0);
    assert.equal(othersPublished, others);
    assert.equal(childRuns, 2, "the EACCES and EIO scenarios must run here");
    assert.ok(eacces.errors?.some((e) => /permission denied/i.test(e)), eacces.raw);
    assert.ok(eio.errors?.some((e) => /EIO/.test(e)), eio.raw);
  }));
