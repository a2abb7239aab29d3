/**
 * Reliability-plan A3: simulated power loss. A store runs a random workload (publishes,
 * deletions, GC, publishes that fail on a directory fsync and are re-derived) on a SimFs
 * (tests/helpers/sim_fs.ts). After every mutating fs operation the test builds the disks
 * a reboot could find (LevelDB model, ordered prefixes, reorderings, unsynced data torn
 * or zero-filled), reopens a store on each distinct one and checks:
 *  - I1 manifest.json is missing (only before the first acknowledged publish) or parses;
 *  - I2 every generation it references exists, hashes to its name and parses;
 *  - I3 its revision is at least the last acknowledged one;
 *  - I4 it is the acknowledged manifest or a later one (no acknowledged publish lost).
 * Negative control: the same workload whose Fs drops every directory fsync must lose an
 * acknowledged publish or reference a missing generation.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Fs } from "../lib/durable/mod.ts";
import {
  GC_GRACE_MS,
  MANIFEST_FILE,
  openStore,
  parseManifestBytes,
  type ShardUpdate,
  type Store,
} from "../lib/message_search/store/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { type CrashModel, SimFs, SimFsError, type SimOp } from "./helpers/sim_fs.ts";
import { prng, PV, records, update } from "./helpers/store_fixtures.ts";

const STATE = "/data/state";
const ROOT = `${STATE}/cache/message_search/v1`;
const T0 = Date.UTC(2026, 0, 1);
const MODELS: CrashModel[] = ["leveldb", "keep-all", "prefix", "prefix", "subset", "subset"];

interface Tally {
  states: number;
  crashPoints: number;
  unparsable: number;
  badGenerations: number;
  lostAcks: number;
  regressions: number;
  unknownManifests: number;
  acks: number;
  failedPublishes: number;
  examples: string[];
}

/** A store on `sim` (through `wrap`), crash-checked after every mutating op. */
async function runWorkload(
  o: { seed: number; targetStates: number; maxSteps: number; wrap?: (fs: SimFs) => Fs },
): Promise<Tally> {
  const t: Tally = {
    states: 0,
    crashPoints: 0,
    unparsable: 0,
    badGenerations: 0,
    lostAcks: 0,
    regressions: 0,
    unknownManifests: 0,
    acks: 0,
    failedPublishes: 0,
    examples: [],
  };
  const rnd = prng(o.seed);
  let clock = T0;
  const now = () => clock;
  const sim = new SimFs({ now });
  await sim.mkdirDurable(STATE);
  /** Every manifest ever renamed into place, in order (I4 evidence). */
  const versions: string[] = [];
  let ackIndex = -1;
  let ackRevision = 0;
  let failSyncDir = false;
  const seen = new Set<string>();
  const dec = new TextDecoder();

  async function checkImage(img: SimFs, model: CrashModel): Promise<void> {
    let raw: Uint8Array | null = null;
    try {
      raw = await img.readFile(join(ROOT, MANIFEST_FILE));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const bad = (what: string) => {
      if (t.examples.length < 5) t.examples.push(`${model} after op ${t.crashPoints}: ${what}`);
    };
    if (raw === null) {
      if (ackIndex >= 0) {
        t.lostAcks++;
        bad("manifest missing after an acknowledged publish");
      }
      return;
    }
    const parsed = parseManifestBytes(raw);
    if (parsed.kind !== "ok") {
      t.unparsable++;
      bad("unparsable manifest");
      return;
    }
    const idx = versions.lastIndexOf(dec.decode(raw));
    if (idx < 0) {
      t.unknownManifests++;
      bad("a manifest that was never written");
    } else if (idx < ackIndex) {
      t.lostAcks++;
      bad(`manifest version ${idx} survived, ${ackIndex} was acknowledged`);
    }
    if (parsed.manifest.revision < ackRevision) t.regressions++;
    // Reopen as the next daemon would (temp cleanup, directory creation) and load it all.
    const store = await openStore({
      root: ROOT,
      fs: img,
      parserVersion: PV,
      windowDays: null,
      lock: "none",
      now,
    });
    const m = await store.readManifest();
    let missing = 0;
    for (const e of Object.values(m.sessions)) {
      for (const g of e.generations) await store.loadSegment(g).catch(() => missing++);
    }
    if (missing > 0) {
      t.badGenerations++;
      bad(`${missing} referenced generation(s) missing or short`);
    }
  }

  async function crashPoint(op: SimOp): Promise<void> {
    if (op.op === "rename" && op.to === join(ROOT, MANIFEST_FILE)) {
      versions.push(dec.decode(await sim.readFile(op.to)));
    }
    if (t.states >= o.targetStates) return;
    t.crashPoints++;
    for (const model of MODELS) {
      const img = sim.crashImage(model, rnd);
      const key = `${ackIndex}|${img.digest()}`;
      if (seen.has(key)) continue;
      seen.add(key);
      t.states++;
      await checkImage(img, model);
    }
  }

  sim.setHooks({
    onMutation: crashPoint,
    fault: (op) => {
      if (!failSyncDir || op.op !== "syncDir" || !op.path.endsWith("/generations")) return null;
      failSyncDir = false;
      return new SimFsError("EIO", `injected on syncDir "${op.path}"`);
    },
  });
  const fs = o.wrap ? o.wrap(sim) : sim;
  const store = await openStore({
    root: ROOT,
    fs,
    parserVersion: PV,
    windowDays: null,
    lock: "none",
    now,
  });
  const acked = () => {
    ackIndex = versions.length - 1;
    ackRevision = ackIndex >= 0 ? JSON.parse(versions[ackIndex]!).revision : 0;
    t.acks++;
  };
  for (let step = 0; step < o.maxSteps && t.states < o.targetStates; step++) {
    clock += Math.floor(rnd() * 5000);
    const pick = rnd();
    if (pick < 0.1) {
      await store.deleteSession(`codex:s${Math.floor(rnd() * 6)}`);
      acked();
    } else if (pick < 0.2) {
      // Past the grace, so GC really deletes what the manifest no longer names.
      clock += GC_GRACE_MS + 60_000;
      await store.gc();
      acked();
    } else {
      const batch = await randomBatch(store, rnd);
      if (pick < 0.3) {
        // The directory fsync of a new generation fails: the publish is abandoned and the
        // next sweep re-derives the same content (same generation name).
        failSyncDir = true;
        const err = await store.publish(batch).then(() => null, (e: unknown) => e);
        failSyncDir = false;
        if (err !== null) t.failedPublishes++;
      }
      const r = await store.publish(await reBase(store, batch));
      if (r.accepted.length > 0) acked();
    }
  }
  return t;
}

/** 1–3 updates: replaces, appends and touches on six keys, small segments. */
async function randomBatch(store: Store, rnd: () => number): Promise<ShardUpdate[]> {
  const m = await store.readManifest();
  const out: ShardUpdate[] = [];
  const used = new Set<string>();
  for (let i = 0, n = 1 + Math.floor(rnd() * 3); i < n; i++) {
    const sid = `s${Math.floor(rnd() * 6)}`;
    if (used.has(sid)) continue;
    used.add(sid);
    const e = m.sessions[`codex:${sid}`];
    const k = rnd();
    const count = 1 + Math.floor(rnd() * 4);
    const watermark = (e?.source_watermark ?? 0) + 1 + count;
    if (!e || k < 0.4) {
      const recs = records(sid, 0, count, { ts: T0, textLen: 1 + Math.floor(rnd() * 300) });
      out.push(update("replace", sid, { recs, watermark }));
    } else if (k < 0.85) {
      const recs = records(sid, e.records, count, { ts: T0, textLen: 1 + Math.floor(rnd() * 300) });
      out.push(update("append", sid, { base: e.generations, recs, watermark }));
    } else {
      out.push(update("touch", sid, { base: e.generations, watermark }));
    }
  }
  return out;
}

/** The batch with bases refreshed from the manifest now (a retry re-derives). */
async function reBase(store: Store, batch: ShardUpdate[]): Promise<ShardUpdate[]> {
  const m = await store.readManifest();
  return batch.flatMap((u) => {
    const e = m.sessions[u.key];
    if (u.kind === "replace") return [u];
    return e ? [{ ...u, base: e.generations }] : [];
  });
}

/** `sim` with directory fsync turned into a no-op: the protocol minus its dir fsync. */
function withoutDirSync(sim: SimFs): Fs {
  return {
    createNew: (p, m) => sim.createNew(p, m),
    openAppend: (p) => sim.openAppend(p),
    readFile: (p) => sim.readFile(p),
    readFileCapped: (p, max) => sim.readFileCapped(p, max),
    rename: (a, b) => sim.rename(a, b),
    remove: (p) => sim.remove(p),
    stat: (p) => sim.stat(p),
    lstat: (p) => sim.lstat(p),
    readDir: (p) => sim.readDir(p),
    mkdir: (p, m) => sim.mkdir(p, m),
    syncDir: () => Promise.resolve(),
  };
}

Deno.test("A3: every simulated power-loss state keeps I1–I4; without dir fsync acks are lost", async () => {
  const target = STRESS ? 5000 : 1000;
  const parts: Tally[] = [];
  for (let seed = 1; parts.reduce((n, p) => n + p.states, 0) < target; seed++) {
    parts.push(await runWorkload({ seed, targetStates: Math.min(target, 1500), maxSteps: 400 }));
    if (seed > 20) break;
  }
  const sum = (k: keyof Omit<Tally, "examples">) => parts.reduce((n, p) => n + p[k], 0);
  let control: Tally | null = null;
  for (let seed = 100; seed < 110; seed++) {
    control = await runWorkload({
      seed,
      targetStates: 300,
      maxSteps: 200,
      wrap: withoutDirSync,
    });
    if (control.lostAcks + control.badGenerations > 0) break;
  }
  const detected = control !== null && control.lostAcks + control.badGenerations > 0;
  figure(
    "A3",
    `crash states explored: ${sum("states")}, states with unparsable manifest: ${
      sum("unparsable")
    }, states referencing missing/short generation: ${sum("badGenerations")}, ` +
      `durable-acked publishes lost: ${sum("lostAcks")}, control detected: ${
        detected ? "yes" : "no"
      }`,
  );
  console.log(
    `A3 detail: crash points: ${sum("crashPoints")}, acknowledged operations: ${sum("acks")}, ` +
      `publishes failed by an injected dir-fsync EIO: ${sum("failedPublishes")}, ` +
      `revision regressions: ${sum("regressions")}, unknown manifests: ${
        sum("unknownManifests")
      }; control (no dir fsync): states ${control?.states}, acks lost ${control?.lostAcks}, ` +
      `missing generations ${control?.badGenerations}`,
  );
  for (const p of parts) for (const e of p.examples) console.log(`A3 violation: ${e}`);
  assert.ok(sum("states") >= target, `explored only ${sum("states")} crash states`);
  assert.deepEqual(
    [sum("unparsable"), sum("badGenerations"), sum("lostAcks"), sum("regressions")],
    [0, 0, 0, 0],
  );
  assert.equal(sum("unknownManifests"), 0);
  assert.ok(detected, "dropping the directory fsync must be seen to lose data");
});
