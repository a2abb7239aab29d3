/**
 * Reliability-plan A14: model-based store test. fast-check generates sequences of
 * {mutate a source (append / rewrite in place or by a new inode / delete; synthetic
 * JSONL sessions and native Intendant sessions), sweep (the real Indexer), stale publish
 * (a batch an earlier sweep computed from an older manifest, replayed late), older-parser
 * publish, deleteSession, advance the clock 0–20 days, GC}; a small reference model of the
 * sources, tombstones and clock says what the store must hold. The store runs on an
 * in-memory SimFs under the real flock; the sources are real files (tmpfs when present).
 * Invariants, checked after every step:
 *  - parser version monotone: parser_version stays ours; an older parser's publish is
 *    rejected and changes nothing; revision never decreases;
 *  - tombstones sticky: a deleted key stays deleted (tombstone kept, no entry) through
 *    sweeps and stale publishes until GC expires it with the window;
 * after every GC:
 *  - retention exact: exactly the sessions whose newest record and the tombstones whose
 *    deletion left the window are dropped;
 *  - GC never drops a referenced generation: those of the current manifest, and those of
 *    every manifest that was current within the 10-minute grace (pinned readers);
 * after every stale publish:
 *  - a late publish never replaces newer acknowledged state of the same source (base
 *    moved, or a lower watermark over the same fingerprint and cursor paths);
 * after every sweep (one sweep heals whatever an accepted stale publish did):
 *  - no acknowledged publish lost: every existing, untombstoned source with a record in
 *    the window is served, with exactly the source's records in order and not marked
 *    source_gone; a vanished source's entry is marked source_gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  createIntendantExtractor,
  DAY_MS,
  decodeRecords,
  GC_GRACE_MS,
  Indexer,
  type Manifest,
  openStore,
  type ShardUpdate,
  type Store,
} from "../lib/message_search/mod.ts";
import { SessionLog } from "../lib/session_log/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import {
  appendLines,
  rewriteLines,
  type SynLine,
  syntheticExtractor,
} from "./helpers/rel_synthetic_source.ts";
import { SimFs } from "./helpers/sim_fs.ts";
import { PV } from "./helpers/store_fixtures.ts";

const WINDOW_DAYS = 14;
const SYN = 3;
const NAT = 2;
const STEPS = 40;

type Step =
  | { t: "append"; src: number; n: number }
  | { t: "rewrite"; src: number; n: number; inPlace: boolean }
  | { t: "delete"; src: number }
  | { t: "sweep" }
  | { t: "stale"; pick: number }
  | { t: "oldParser"; pick: number }
  | { t: "deleteSession"; src: number }
  | { t: "clock"; ms: number }
  | { t: "gc" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant("append" as const),
      src: fc.nat(SYN + NAT - 1),
      n: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant("rewrite" as const),
      src: fc.nat(SYN - 1),
      n: fc.nat(5),
      inPlace: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("delete" as const), src: fc.nat(SYN + NAT - 1) }),
  },
  { weight: 6, arbitrary: fc.constant({ t: "sweep" as const }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("stale" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("oldParser" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("deleteSession" as const), src: fc.nat(SYN + NAT - 1) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("clock" as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 3_600_000 }),
        fc.integer({ min: 0, max: 20 * DAY_MS }),
      ),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ t: "gc" as const }) },
);

interface SynSource {
  exists: boolean;
  lines: SynLine[];
}

interface NatSession {
  key: string;
  dir: string;
  exists: boolean;
  texts: string[];
  ts: number[];
}

/** One sequence's world: sources on disk, the store on a SimFs, the model. */
class World {
  clock = Date.now();
  counter = 0;
  syn: SynSource[] = Array.from({ length: SYN }, () => ({ exists: false, lines: [] }));
  /** Per native slot, every session it ever held (only the last may exist). */
  nat: NatSession[][] = Array.from({ length: NAT }, () => []);
  tombstones = new Map<string, number>();
  batches: ShardUpdate[][] = [];
  /** Manifests that were current, with the clock when they were superseded. */
  history: { revision: number; gens: Set<string>; supersededAt: number | null }[] = [];
  violations: string[] = [];
  lastRevision = 0;
  readonly sim: SimFs;
  readonly synDir: string;
  readonly logsDir: string;
  readonly root: string;
  store!: Store;
  older!: Store;
  indexer!: Indexer;

  constructor(readonly dir: string) {
    this.sim = new SimFs({ now: () => this.clock });
    this.synDir = join(dir, "syn");
    this.logsDir = join(dir, "logs");
    this.root = join(dir, "store");
  }

  async open(): Promise<void> {
    await Deno.mkdir(this.synDir);
    await Deno.mkdir(this.logsDir);
    await Deno.mkdir(this.root);
    const now = () => this.clock;
    const o = { root: this.root, fs: this.sim, windowDays: WINDOW_DAYS, now };
    this.store = await openStore({ ...o, parserVersion: PV });
    this.older = await openStore({ ...o, parserVersion: PV - 1 });
    const store = this.store;
    const recording: Store = {
      root: store.root,
      readManifest: () => store.readManifest(),
      publish: (u) => {
        this.batches.push(u);
        return store.publish(u);
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
    this.indexer = new Indexer({
      store: recording,
      extractors: [
        syntheticExtractor(this.synDir),
        createIntendantExtractor({ logsDir: this.logsDir }),
      ],
      windowDays: WINDOW_DAYS,
      now,
      gcEvery: Number.MAX_SAFE_INTEGER,
    });
  }

  fail(step: number, what: string): void {
    this.violations.push(`step ${step}: ${what}`);
  }

  synPath(i: number): string {
    return join(this.synDir, `syn${i}.jsonl`);
  }

  newLines(i: number, n: number): SynLine[] {
    return Array.from(
      { length: n },
      () => ({ ts: this.clock, text: `syn${i} line ${++this.counter} ✓` }),
    );
  }

  async run(step: Step, at: number): Promise<void> {
    switch (step.t) {
      case "append":
        return step.src < SYN
          ? await this.appendSyn(step.src, step.n)
          : await this.appendNat(step.src - SYN, step.n);
      case "rewrite": {
        const s = this.syn[step.src]!;
        if (!s.exists) return;
        s.lines = this.newLines(step.src, step.n);
        return await rewriteLines(this.synPath(step.src), s.lines, {
          inPlace: step.inPlace,
          clockMs: this.clock,
        });
      }
      case "delete":
        return await this.deleteSource(step.src);
      case "sweep":
        await this.indexer.sweep();
        return await this.checkAfterSweep(at);
      case "stale": {
        if (this.batches.length === 0) return;
        const batch = this.batches[step.pick % this.batches.length]!;
        const before = await this.store.readManifest();
        await this.store.publish(batch);
        return this.checkStale(at, batch, before, await this.store.readManifest());
      }
      case "oldParser": {
        if (this.batches.length === 0) return;
        const before = await this.store.readManifest();
        const r = await this.older.publish(this.batches[step.pick % this.batches.length]!);
        if (r.accepted.length > 0) this.fail(at, `older parser accepted ${r.accepted.join(",")}`);
        if ((await this.store.readManifest()).revision !== before.revision) {
          this.fail(at, "older parser's publish changed the manifest");
        }
        return;
      }
      case "deleteSession": {
        const key = this.keyOf(step.src);
        if (key === null) return;
        await this.store.deleteSession(key);
        this.tombstones.set(key, Math.floor(this.clock));
        return;
      }
      case "clock":
        this.clock += step.ms;
        return;
      case "gc":
        return await this.gc(at);
    }
  }

  keyOf(src: number): string | null {
    if (src < SYN) return `codex:syn${src}`;
    return this.nat[src - SYN]!.at(-1)?.key ?? null;
  }

  async appendSyn(i: number, n: number): Promise<void> {
    const s = this.syn[i]!;
    const lines = this.newLines(i, n);
    if (!s.exists) {
      // A fresh file (a new inode) where a deleted one was.
      s.exists = true;
      s.lines = lines;
      await rewriteLines(this.synPath(i), lines, { inPlace: false, clockMs: this.clock });
      return;
    }
    s.lines.push(...lines);
    await appendLines(this.synPath(i), lines, this.clock);
  }

  async appendNat(j: number, n: number): Promise<void> {
    const slot = this.nat[j]!;
    const now = () => this.clock;
    let s = slot.at(-1);
    if (!s || !s.exists) {
      const w = await writeNativeSession(this.logsDir, {
        turns: 1,
        now,
        task: `native ${++this.counter}`,
      });
      s = {
        key: `intendant:${w.id}`,
        dir: w.dir,
        exists: true,
        texts: w.texts,
        ts: w.texts.map(() => this.clock),
      };
      slot.push(s);
      n--;
    }
    if (n > 0) {
      const log = await SessionLog.reopen(s.dir, {
        logsDir: this.logsDir,
        tmpDir: this.logsDir,
        now,
      });
      for (let k = 0; k < n; k++) {
        const text = `native follow-up ${++this.counter}`;
        log.conversationMessageUser(undefined, {
          seq: 1000 + s.texts.length,
          provenance: "follow_up",
          text,
        });
        s.texts.push(text);
        s.ts.push(this.clock);
      }
      await log.close();
    }
    const spine = join(s.dir, "session.jsonl");
    await Deno.utime(spine, new Date(this.clock), new Date(this.clock));
  }

  async deleteSource(src: number): Promise<void> {
    if (src < SYN) {
      const s = this.syn[src]!;
      if (!s.exists) return;
      await Deno.remove(this.synPath(src));
      s.exists = false;
      s.lines = [];
      return;
    }
    const s = this.nat[src - SYN]!.at(-1);
    if (!s || !s.exists) return;
    await Deno.remove(s.dir, { recursive: true });
    s.exists = false;
  }

  async texts(m: Manifest, key: string): Promise<string[]> {
    const out: string[] = [];
    for (const g of m.sessions[key]!.generations) {
      for (const r of decodeRecords(await this.store.loadSegment(g))) out.push(r.text);
    }
    return out;
  }

  /** What every source must look like in the store after a sweep. */
  async checkAfterSweep(at: number): Promise<void> {
    const m = await this.store.readManifest();
    const cutoff = this.clock - WINDOW_DAYS * DAY_MS;
    const expect: { key: string; exists: boolean; texts: string[]; newest: number }[] = [];
    for (const [i, s] of this.syn.entries()) {
      expect.push({
        key: `codex:syn${i}`,
        exists: s.exists,
        texts: s.lines.map((l) => l.text),
        newest: Math.max(0, ...s.lines.map((l) => l.ts)),
      });
    }
    for (const slot of this.nat) {
      for (const s of slot) {
        expect.push({ key: s.key, exists: s.exists, texts: s.texts, newest: Math.max(0, ...s.ts) });
      }
    }
    for (const x of expect) {
      if (this.tombstones.has(x.key)) continue;
      const e = m.sessions[x.key];
      if (!x.exists) {
        if (e && !e.source_gone) {
          this.fail(at, `${x.key}: source deleted but not marked source_gone`);
        }
        continue;
      }
      if (!e) {
        if (x.texts.length > 0 && x.newest >= cutoff) this.fail(at, `${x.key}: not served`);
        continue;
      }
      const got = await this.texts(m, x.key);
      if (got.join("\n") !== x.texts.join("\n")) {
        this.fail(
          at,
          `${x.key}: serves ${JSON.stringify(got)}, source holds ${JSON.stringify(x.texts)}`,
        );
      }
      if (e.source_gone) this.fail(at, `${x.key}: source exists but the entry says source_gone`);
    }
  }

  /**
   * A late publish never replaces what a newer publish acknowledged over the same source
   * state: an append/touch/gone whose base moved, and a replace with a lower watermark over
   * the same fingerprint and cursor paths, leave the entry as it was.
   */
  checkStale(at: number, batch: ShardUpdate[], before: Manifest, after: Manifest): void {
    for (const u of batch) {
      const e0 = before.sessions[u.key];
      if (!e0) continue;
      const paths = (c: Record<string, unknown>) => Object.keys(c).sort().join();
      const older = u.kind === "replace"
        ? (u.source_watermark ?? 0) < e0.source_watermark &&
          u.source_fingerprint === e0.source_fingerprint &&
          paths(u.cursors ?? {}) === paths(e0.cursors)
        : (u.base ?? []).join() !== e0.generations.join();
      const e1 = after.sessions[u.key];
      if (
        older && (!e1 || e1.generations.join() !== e0.generations.join() ||
          e1.source_watermark !== e0.source_watermark || e1.source_gone !== e0.source_gone)
      ) {
        this.fail(at, `${u.key}: a stale ${u.kind} replaced newer acknowledged state`);
      }
    }
  }

  async gc(at: number): Promise<void> {
    const before = await this.store.readManifest();
    const cutoff = this.clock - WINDOW_DAYS * DAY_MS;
    await this.store.gc();
    const after = await this.store.readManifest();
    const keep = (r: Record<string, number>) =>
      Object.entries(r).filter(([, t]) => t >= cutoff).map(([k]) => k).sort().join();
    const newest = Object.fromEntries(
      Object.entries(before.sessions).map(([k, e]) => [k, e.newest_ts_ms]),
    );
    if (Object.keys(after.sessions).sort().join() !== keep(newest)) {
      this.fail(
        at,
        `retention: kept ${Object.keys(after.sessions).sort()} of ${JSON.stringify(newest)}`,
      );
    }
    if (Object.keys(after.tombstones).sort().join() !== keep(before.tombstones)) {
      this.fail(
        at,
        `retention: tombstones ${Object.keys(after.tombstones)} of ${
          JSON.stringify(before.tombstones)
        }`,
      );
    }
    for (const [k, t] of [...this.tombstones]) if (t < cutoff) this.tombstones.delete(k);
    if ((await this.store.verifyAll()).length > 0) {
      this.fail(at, "GC dropped a referenced generation");
    }
    const present = new Set(this.sim.list(join(this.root, "generations")));
    for (const h of this.history) {
      if (h.supersededAt === null || this.clock - h.supersededAt >= GC_GRACE_MS) continue;
      for (const g of h.gens) {
        if (!present.has(g)) {
          this.fail(at, `GC deleted ${g} of revision ${h.revision}, superseded within the grace`);
        }
      }
    }
  }

  /** Invariants after every step. */
  async checkAlways(at: number): Promise<void> {
    const m = await this.store.readManifest();
    if (m.parser_version !== PV) this.fail(at, `parser_version ${m.parser_version}`);
    if (m.revision < this.lastRevision) {
      this.fail(at, `revision ${m.revision} < ${this.lastRevision}`);
    }
    if (m.revision !== this.lastRevision) {
      const last = this.history.at(-1);
      if (last) last.supersededAt = this.clock;
      const gens = new Set(Object.values(m.sessions).flatMap((e) => e.generations));
      this.history.push({ revision: m.revision, gens, supersededAt: null });
      this.lastRevision = m.revision;
    }
    for (const [key, t] of this.tombstones) {
      if (m.tombstones[key] !== t) this.fail(at, `${key}: tombstone ${m.tombstones[key]} != ${t}`);
      if (m.sessions[key]) this.fail(at, `${key}: tombstoned key resurrected`);
    }
  }
}

async function tempRoot(): Promise<string> {
  const shm = await Deno.stat("/dev/shm").then((s) => s.isDirectory, () => false);
  return await Deno.makeTempDir({ prefix: "intendant-a14-", ...(shm ? { dir: "/dev/shm" } : {}) });
}

Deno.test("A14: model-based store test: tombstones, parser, retention, GC, no lost publish", async () => {
  const runs = STRESS ? 10_000 : 300;
  let sequences = 0;
  let steps = 0;
  const kinds: Record<string, number> = {};
  const seed = Number(Deno.env.get("INTENDANT_A14_SEED") ?? Date.now() % 2 ** 31);
  let violation: string | null = null;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }), async (seq) => {
        sequences++;
        const dir = await tempRoot();
        try {
          const w = new World(dir);
          await w.open();
          for (const [i, s] of seq.entries()) {
            steps++;
            kinds[s.t] = (kinds[s.t] ?? 0) + 1;
            await w.run(s, i);
            await w.checkAlways(i);
            if (w.violations.length > 0) break;
          }
          if (w.violations.length > 0) throw new Error(w.violations.join("\n"));
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      }),
      { numRuns: runs, seed, endOnFailure: !STRESS },
    );
  } catch (err) {
    violation = err instanceof Error ? err.message : String(err);
  }
  figure(
    "A14",
    `sequences × steps: ${runs.toLocaleString("en-US")} × ${STEPS}, invariant violations: ${
      violation === null ? 0 : "≥1"
    }`,
  );
  console.log(
    `A14 detail: seed ${seed}; executed ${sequences} sequences, ${steps} steps (including ` +
      `shrinking); step kinds: ${JSON.stringify(kinds)}`,
  );
  if (violation !== null) console.log(`A14 counterexample:\n${violation}`);
  assert.equal(violation, null);
});
