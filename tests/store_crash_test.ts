/**
 * Shard-store crash suite with real `kill -9` (reliability-plan A1, A2, A16). Each test
 * SIGKILLs a child process (tests/helpers/store_child.ts) mid-publish, then reopens the
 * store as the next daemon would and checks I1–I6 (tests/helpers/store_fixtures.ts).
 * INTENDANT_STRESS=1 runs the plan's full N; the default fits the CI budget.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FaultFs } from "./helpers/fault_fs.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import {
  a2Batch,
  checkInvariants,
  copyDir,
  type InvariantReport,
  listTemps,
  prepareA2Base,
  prng,
  PV,
  violated,
  withTempDir,
} from "./helpers/store_fixtures.ts";
import {
  JOURNAL_FILE,
  type Manifest,
  MANIFEST_FILE,
  openStore,
  parseManifestBytes,
} from "../lib/message_search/store/mod.ts";

const CHILD = new URL("./helpers/store_child.ts", import.meta.url).pathname;
const WORKERS = 4;

interface ChildRun {
  child: Deno.ChildProcess;
  /** Resolves once the child printed "ready". */
  ready: Promise<void>;
  /** Complete stdout lines and the exit status. */
  finished: Promise<{ lines: string[]; status: Deno.CommandStatus; stderr: string }>;
}

function spawnChild(args: string[]): ChildRun {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let markReady: () => void = () => {};
  let failReady: (e: Error) => void = () => {};
  const ready = new Promise<void>((res, rej) => [markReady, failReady] = [res, rej]);
  // Callers that never await `ready` learn the outcome from `finished`; callers that do
  // still see the rejection.
  ready.catch(() => undefined);
  const stdout = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stdout) {
      text += dec.decode(chunk, { stream: true });
      if (text.startsWith("ready\n")) markReady();
    }
  })();
  const stderr = new Response(child.stderr).text();
  const finished = (async () => {
    const [status] = await Promise.all([child.status, stdout]);
    const err = await stderr;
    failReady(new Error(`child exited before ready: ${status.code} ${err}`));
    // Only newline-terminated lines: a kill can tear the last one.
    const lines = text.split("\n").slice(0, -1);
    return { lines, status, stderr: err };
  })();
  return { child, ready, finished };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `jobs` with at most `width` in flight. */
async function pool<T>(width: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  }));
  return out;
}

interface Tally {
  kills: number;
  unparsable: number;
  quarantines: number;
  badGenerations: number;
  lostAcks: number;
  regressions: number;
  tempsAfter: number;
  lockStuck: number;
  acks: number;
  childErrors: string[];
}

function tally(): Tally {
  const t = { kills: 0, unparsable: 0, quarantines: 0, badGenerations: 0, lostAcks: 0 };
  return { ...t, regressions: 0, tempsAfter: 0, lockStuck: 0, acks: 0, childErrors: [] };
}

function add(t: Tally, r: InvariantReport): void {
  t.kills++;
  t.unparsable += Number(r.unparsable);
  t.quarantines += r.quarantines;
  t.badGenerations += r.badGenerations;
  t.lostAcks += r.lostAcks;
  t.regressions += Number(r.revisionRegressed);
  t.tempsAfter += r.tempsAfterOpen;
  t.lockStuck += Number(!r.lockAcquirable);
}

/** Children are killed after U(0, KILL_WINDOW_MS) ms. */
const KILL_WINDOW_MS = 300;

/** One A1 worker: its own store, `kills` children killed after U(0, KILL_WINDOW_MS) ms each. */
async function a1Worker(root: string, seed: number, kills: number): Promise<Tally> {
  const t = tally();
  const rnd = prng(seed);
  let lastAck = 0;
  const acked = new Set<string>();
  for (let i = 0; i < kills; i++) {
    const run = spawnChild(["loop", root, String(seed * 1000 + i)]);
    await run.ready;
    // U(0, 300) ms: a process's first publish pays its lazy module loads (≈ 30–60 ms,
    // more under the parallel suite), so a shorter window killed nearly every child before
    // its first acknowledgement and left I4 (acknowledged publishes survive) untested.
    await sleep(rnd() * KILL_WINDOW_MS);
    run.child.kill("SIGKILL");
    const { lines, status, stderr } = await run.finished;
    if (status.signal !== "SIGKILL") t.childErrors.push(`exit ${status.code}: ${stderr}`);
    for (const l of lines) {
      const m = /^ack (\d+) (\S+)$/.exec(l);
      if (!m) continue;
      t.acks++;
      lastAck = Math.max(lastAck, Number(m[1]));
      acked.add(m[2]!);
    }
    add(t, await checkInvariants(root, { lastAckRevision: lastAck, ackedKeys: acked }));
  }
  return t;
}

Deno.test("kill -9 at random points during publish never breaks I1–I6 (A1)", () =>
  withTempDir(async (dir) => {
    const kills = STRESS ? 500 : 200;
    const per = Math.ceil(kills / WORKERS);
    const parts = await pool(
      WORKERS,
      Array.from({ length: WORKERS }, (_, w) => () => a1Worker(join(dir, `w${w}`), w + 1, per)),
    );
    const t = parts.reduce((a, b) => {
      for (const k of Object.keys(a) as (keyof Tally)[]) {
        if (k === "childErrors") a.childErrors.push(...b.childErrors);
        else a[k] += b[k];
      }
      return a;
    }, tally());
    figure(
      "A1",
      `kill points tried: ${t.kills}, unparsable manifests: ${t.unparsable}, ` +
        `quarantines: ${t.quarantines}, missing/mismatched generations: ${t.badGenerations}, ` +
        `acknowledged publishes lost: ${t.lostAcks}, revision regressions: ${t.regressions}, ` +
        `orphan temps after restart: ${t.tempsAfter}`,
    );
    console.log(
      `A1 detail: lock not re-acquirable: ${t.lockStuck}, publishes acknowledged: ${t.acks}`,
    );
    assert.deepEqual(t.childErrors, []);
    assert.ok(t.kills >= kills);
    assert.ok(t.acks > 0, "the children must have published between kills");
    assert.deepEqual(
      [t.unparsable, t.quarantines, t.badGenerations, t.lostAcks, t.regressions, t.tempsAfter],
      [0, 0, 0, 0, 0, 0],
    );
    assert.equal(t.lockStuck, 0);
  }));

/** One control worker: the in-place writeTextFile loop; counts torn manifests. */
async function controlWorker(root: string, seed: number, kills: number) {
  const rnd = prng(seed);
  let written = 0;
  let unparsable = 0;
  for (let i = 0; i < kills; i++) {
    const run = spawnChild(["naive", root, String(seed * 1000 + i)]);
    await run.ready;
    // U(0, 300) ms: a process's first publish pays its lazy module loads (≈ 30–60 ms,
    // more under the parallel suite), so a shorter window killed nearly every child before
    // its first acknowledgement and left I4 (acknowledged publishes survive) untested.
    await sleep(rnd() * KILL_WINDOW_MS);
    run.child.kill("SIGKILL");
    await run.finished;
    let raw: Uint8Array;
    try {
      raw = await Deno.readFile(join(root, MANIFEST_FILE));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    written++;
    if (parseManifestBytes(raw).kind !== "ok") unparsable++;
  }
  return { kills, written, unparsable };
}

Deno.test("negative control: an in-place writeTextFile manifest is torn by kill -9 (A1)", () =>
  withTempDir(async (dir) => {
    // Keep killing until the control has been seen to fail (bounded).
    const batch = STRESS ? 150 : 60;
    let kills = 0;
    let written = 0;
    let unparsable = 0;
    for (let round = 0; round < 5 && (unparsable === 0 || round === 0); round++) {
      const per = Math.ceil(batch / WORKERS);
      const parts = await pool(
        WORKERS,
        Array.from(
          { length: WORKERS },
          (_, w) => () => controlWorker(join(dir, `r${round}w${w}`), 100 + round * 10 + w, per),
        ),
      );
      for (const p of parts) {
        kills += p.kills;
        written += p.written;
        unparsable += p.unparsable;
      }
    }
    figure(
      "A1",
      `negative control (in-place writeTextFile): kill points tried: ${kills}, ` +
        `unparsable manifests: ${unparsable}/${written}`,
    );
    assert.ok(unparsable > 0, "the naive writer must be seen to corrupt the manifest");
  }));

/** The A2 end state: every update of the batch applied. */
function isBatchApplied(m: Manifest): boolean {
  const big = m.sessions["codex:big"];
  const fresh = m.sessions["codex:fresh"];
  const small = m.sessions["codex:small"];
  return big?.generations.length === 1 && big.records === 35 && fresh?.records === 4 &&
    small?.source_watermark === 900;
}

Deno.test("kill -9 before every fs op of a publish never breaks I1–I6 (A2)", () =>
  withTempDir(async (dir) => {
    const base = join(dir, "base");
    const baseManifest = await prepareA2Base(
      await openStore({ root: base, parserVersion: PV, windowDays: null }),
    );
    const baseRaw = await Deno.readFile(join(base, MANIFEST_FILE));
    // Count the ops of one publish through the same FaultFs the child uses.
    await copyDir(base, join(dir, "count"));
    const fs = new FaultFs();
    const counted = await openStore({
      root: join(dir, "count"),
      fs,
      parserVersion: PV,
      windowDays: null,
    });
    const batch = a2Batch(await counted.readManifest());
    fs.arm(null);
    await counted.publish(batch);
    const n = fs.ops.length;
    assert.ok(isBatchApplied(await counted.readManifest()));

    const results = await pool(
      3,
      Array.from({ length: n + 1 }, (_, i) => async () => {
        const k = i + 1;
        const root = join(dir, `k${k}`);
        await copyDir(base, root);
        const run = spawnChild(["publish-at", root, String(k > n ? 0 : k)]);
        const { status, lines, stderr } = await run.finished;
        const killed = status.signal === "SIGKILL";
        const done = lines.find((l) => l.startsWith("done "));
        const r = await checkInvariants(root, {
          lastAckRevision: baseManifest.revision,
          ackedKeys: ["codex:big", "codex:small"],
        });
        // Atomicity: exactly the old manifest, or the whole batch.
        const old = r.rawBefore !== null && r.rawBefore.length === baseRaw.length &&
          r.rawBefore.every((b, j) => b === baseRaw[j]);
        const atomic = old || isBatchApplied(r.manifest);
        const expected = k <= n
          ? killed
          : !killed && done !== undefined && isBatchApplied(r.manifest);
        await Deno.remove(root, { recursive: true });
        return { k, bad: violated(r) || !atomic || !expected, killed, stderr };
      }),
    );
    const enumerated = results.filter((r) => r.k <= n && r.killed).length;
    const violations = results.filter((r) => r.bad);
    figure(
      "A2",
      `fs ops per publish: ${n}, kill points enumerated: ${enumerated}/${n}, ` +
        `violations: ${violations.length}`,
    );
    assert.deepEqual(violations, []);
    assert.equal(enumerated, n);
  }));

Deno.test("startup removes a killed writer's temps and spares a live writer's (A16)", () =>
  withTempDir(async (dir) => {
    const base = join(dir, "base");
    await prepareA2Base(await openStore({ root: base, parserVersion: PV, windowDays: null }));
    // Without a journal the next publish must create one through a temp (the snapshot's
    // rename protocol), which is the temp this test strands.
    await Deno.remove(join(base, JOURNAL_FILE));
    await copyDir(base, join(dir, "count"));
    const fs = new FaultFs();
    const counted = await openStore({
      root: join(dir, "count"),
      fs,
      parserVersion: PV,
      windowDays: null,
    });
    const batch = a2Batch(await counted.readManifest());
    fs.arm(null);
    await counted.publish(batch);
    // Kill points that strand a temp: right after a generation temp and the journal temp
    // are created (before their first write).
    const killAt = [
      fs.ops.find((o) => o.op === "writeAll" && o.path.includes("/generations/"))!.n,
      fs.ops.find((o) => o.op === "writeAll" && o.path.includes(`${JOURNAL_FILE}.tmp-`))!.n,
    ];
    let before = 0;
    let after = 0;
    let liveDeleted = 0;
    for (const k of killAt) {
      const root = join(dir, `k${k}`);
      await copyDir(base, root);
      const { status } = await spawnChild(["publish-at", root, String(k)]).finished;
      assert.equal(status.signal, "SIGKILL");
      before += listTemps(root).length;
      const live = [
        join(root, `.${MANIFEST_FILE}.tmp-${Deno.pid}-1`),
        join(root, "generations", `.0123456789abcdef.json.tmp-${Deno.pid}-2`),
      ];
      for (const p of live) await Deno.writeTextFile(p, "in flight");
      await openStore({ root, parserVersion: PV, windowDays: null });
      const left = listTemps(root);
      after += left.filter((p) => !live.includes(p)).length;
      liveDeleted += live.filter((p) => !left.includes(p)).length;
    }
    figure(
      "A16",
      `orphans before: ${before}, after startup: ${after}, live temps deleted: ${liveDeleted}`,
    );
    assert.equal(before, killAt.length);
    assert.equal(after, 0);
    assert.equal(liveDeleted, 0);
  }));
