/**
 * Fuzzing with fast-check (issue 10): every extractor and the manifest parser.
 *
 * Extractors: 10,000 generated lines per extractor (100,000 with INTENDANT_STRESS=1), in
 * batches of 250: mutants of real lines of that tool's exact format (the fixture's live
 * session and the batch's own earlier valid lines; field drops, type swaps, Unicode
 * injections, truncations, duplicated and odd ids, huge values) mixed with valid lines,
 * plus whole-line random JSON and raw bytes. Each batch runs against the pristine fixture
 * with a fresh store through the real indexer: one sweep before, the batch appended in two
 * halves with a sweep after each (the incremental path), then the shard dropped and
 * re-derived (the full-parse path). Property: no sweep throws, no unit reports an error,
 * the store rejects nothing, and every valid line is indexed after both paths.
 *
 * Manifest parser: arbitrary JSON and structured mutations of a real manifest go through
 * parseManifestBytes, readManifestFile and Store.readManifest (+ verifyAll and every
 * named generation's load) on a spying Fs: only typed outcomes, never an open outside the
 * store root, never a generation opened outside generations/.
 * INTENDANT_SEED replays a run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  decodeRecords,
  Indexer,
  openStore,
  PARSER_VERSION,
  type SweepReport,
} from "../lib/message_search/mod.ts";
import {
  MANIFEST_FILE,
  parseManifestBytes,
  readManifestFile,
} from "../lib/message_search/store/manifest_io.ts";
import { CorruptGenerationError } from "../lib/message_search/store/segments.ts";
import { NotFoundError } from "../lib/errors.ts";
import { FIXTURES } from "./fixtures/all.ts";
import { FaultFs, withoutSync } from "./helpers/fault_fs.ts";
import { records, update } from "./helpers/store_fixtures.ts";
import { STRESS } from "./helpers/figures.ts";
import { markersIn } from "./helpers/rel2_lines.ts";
import { batchArb, buildBatch } from "./helpers/rel2_mutate.ts";
import { withTempDir } from "./helpers/temp.ts";

const LINES = STRESS ? 100_000 : 10_000;
const PER_RUN = 250;
const SEED = Number(Deno.env.get("INTENDANT_SEED") ?? Date.now() % 2 ** 31);
const SHRINK = Deno.env.get("INTENDANT_FUZZ_SHRINK") === "1";
const fmt = (n: number) => n.toLocaleString("en-US");
const enc = new TextEncoder();

/** Control lines that legitimately re-read EARLIER lines differently (native era markers). */
const CONTROL_EVENTS = new Set(["conversation_message_epoch", "session_identity"]);

function poolOf(bytes: Uint8Array): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    try {
      const v = JSON.parse(line);
      if (typeof v !== "object" || v === null || Array.isArray(v)) continue;
      if (CONTROL_EVENTS.has(v.event)) continue;
      out.push(v);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err; // fixture garbage lines are not sources
    }
  }
  return out;
}

function problems(report: SweepReport): string[] {
  const out: string[] = [];
  for (const [src, s] of Object.entries(report.sources)) {
    for (const e of s.errors) out.push(`${src}: ${e}`);
  }
  for (const r of report.rejected) out.push(`rejected ${r.key}: ${r.reason}`);
  return out;
}

for (const fx of FIXTURES) {
  Deno.test(`fuzz ${fx.source}: ${fmt(LINES)} generated lines, 0 crashes, every valid line indexed`, () =>
    withTempDir(async (dir) => {
      const home = await fx.build(join(dir, "home"));
      const path = home.appendTarget.path;
      const key = home.appendTarget.key;
      const pristine = await Deno.readFile(path);
      const pool = poolOf(pristine);
      const totals = { runs: 0, lines: 0, valid: 0, crashes: 0, indexedChecks: 0 };
      let storeN = 0;

      const property = async (batch: Parameters<typeof buildBatch>[1]) => {
        storeN++;
        await Deno.writeFile(path, pristine);
        const root = join(dir, `store-${storeN}`);
        const store = await openStore({
          root,
          fs: withoutSync(),
          parserVersion: PARSER_VERSION,
          windowDays: 14,
        });
        const indexer = new Indexer({ store, extractors: [home.extractor()], windowDays: 14 });
        const sweep = async (when: string) => {
          let report: SweepReport;
          try {
            report = await indexer.sweep();
          } catch (err) {
            totals.crashes++;
            throw new Error(`sweep ${when} threw: ${err instanceof Error ? err.stack : err}`);
          }
          const p = problems(report);
          if (p.length) {
            totals.crashes++;
            throw new Error(`sweep ${when}: ${p.join("; ").slice(0, 2000)}`);
          }
        };
        const indexed = async (when: string, want: number[]) => {
          const e = (await store.readManifest()).sessions[key];
          const texts: string[] = [];
          for (const g of e?.generations ?? []) {
            for (const r of decodeRecords(await store.loadSegment(g))) texts.push(r.text);
          }
          const found = markersIn("FZ", texts);
          const missing = want.filter((i) => !found.has(i));
          if (missing.length) {
            throw new Error(`${when}: valid lines not indexed: ${missing.slice(0, 20).join(", ")}`);
          }
          totals.indexedChecks += want.length;
        };
        try {
          await sweep("before the batch");
          const built = buildBatch(fx.source, batch, {
            pool,
            userLine: home.appendTarget.userLine,
            tag: "FZ",
          });
          const half = Math.floor(built.lines.length / 2);
          for (const [from, to] of [[0, half], [half, built.lines.length]] as const) {
            const f = await Deno.open(path, { append: true });
            try {
              for (const l of built.lines.slice(from, to)) {
                let off = 0;
                while (off < l.length) off += await f.write(l.subarray(off));
              }
            } finally {
              f.close();
            }
            await sweep(`after lines ${from}–${to}`);
          }
          await indexed("incremental", built.valid);
          await store.dropEntries([key]);
          await sweep("re-derivation");
          await indexed("full re-parse", built.valid);
          totals.runs++;
          totals.lines += built.lines.length;
          totals.valid += built.valid.length;
        } finally {
          await Deno.remove(root, { recursive: true });
        }
      };

      let failure: unknown = null;
      try {
        await fc.assert(fc.asyncProperty(batchArb(PER_RUN), property), {
          numRuns: LINES / PER_RUN,
          seed: SEED,
          // Shrinking a 250-line batch takes minutes; INTENDANT_FUZZ_SHRINK=1 turns it on
          // for a replay (same INTENDANT_SEED).
          endOnFailure: !SHRINK,
        });
      } catch (err) {
        failure = err;
      }
      // deno-lint-ignore no-console
      console.log(
        `FUZZ ${fx.source}: lines generated: ${fmt(totals.lines)} (valid ${fmt(totals.valid)}, ` +
          `mutants and junk ${fmt(totals.lines - totals.valid)}), batches: ${totals.runs}, ` +
          `crashes: ${totals.crashes}, valid lines indexed: ${
            failure ? "NO" : "100%"
          } after incremental sweeps and after a full re-parse, seed ${SEED}`,
      );
      if (failure) throw failure;
      assert.equal(totals.lines, LINES);
    }));
}

/** A real manifest with two sessions and a tombstone, as bytes and as an object. */
async function realManifest(root: string): Promise<Record<string, unknown>> {
  const store = await openStore({ root, fs: withoutSync(), parserVersion: 3, windowDays: null });
  await store.publish([
    update("replace", "a", { recs: records("a", 0, 2) }),
    update("replace", "b", { recs: records("b", 0, 1) }),
  ]);
  await store.deleteSession("codex:gone");
  return JSON.parse(await Deno.readTextFile(join(root, MANIFEST_FILE)));
}

type Edit = { pick: number; kind: "set" | "drop" | "dupKey"; value: unknown };

function pathsOf(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  if (typeof v !== "object" || v === null) return out;
  for (const [k, x] of Object.entries(v)) {
    const p = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    pathsOf(x, p, out);
  }
  return out;
}

function applyEdits(base: Record<string, unknown>, edits: Edit[]): unknown {
  const m = structuredClone(base);
  for (const e of edits) {
    const ps = pathsOf(m);
    if (!ps.length) break;
    const p = ps[e.pick % ps.length]!;
    let cur = m as Record<string | number, unknown>;
    for (const k of p.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
    const last = p[p.length - 1]!;
    if (e.kind === "drop") delete cur[last];
    else if (e.kind === "set") cur[last] = e.value;
    else cur[`${String(last)}${typeof e.value === "string" ? e.value : "x"}`] = cur[last];
  }
  return m;
}

const GENERATION_NAMES = fc.constantFrom(
  "../../x",
  "/etc/passwd",
  "0123456789abcdef0.seg",
  "0123456789ABCDEF.seg",
  "0123456789abcdef.seg",
  "0123456789abcdef.json",
  "..%2f..%2fetc",
  "generations/../../manifest.json",
  "0123456789abcdef.seg\u0000",
);

const manifestInput = (base: Record<string, unknown>) =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 5 }).map((v) => enc.encode(JSON.stringify(v))),
    fc.array(
      fc.record({
        pick: fc.nat(),
        kind: fc.constantFrom("set" as const, "drop" as const, "dupKey" as const),
        value: fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          GENERATION_NAMES,
          fc.constantFrom(-1, 1e300, 2 ** 53, 1.5, "x", null, [], {}),
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ).map((edits) => enc.encode(JSON.stringify(applyEdits(base, edits)))),
    fc.tuple(fc.nat(), fc.constantFrom(0, 1, 2)).map(([at, how]) => {
      const b = enc.encode(JSON.stringify(base));
      if (how === 0) return b.slice(0, at % (b.length + 1));
      const c = b.slice();
      c[at % c.length] = how === 1 ? c[at % c.length]! ^ (1 << (at % 8)) : 0xff;
      return c;
    }),
    fc.uint8Array({ maxLength: 300 }),
  );

Deno.test("fuzz the manifest parser: typed outcomes only, never an open outside the store root", () =>
  withTempDir(async (dir) => {
    const seedRoot = join(dir, "seed");
    const base = await realManifest(seedRoot);
    const genNames = [...Deno.readDirSync(join(seedRoot, "generations"))].map((e) => e.name);
    const root = join(dir, "store");
    const fs = new FaultFs(withoutSync());
    const store = await openStore({ root, fs, parserVersion: 3, windowDays: null });
    await Deno.mkdir(join(root, "generations"), { recursive: true });
    for (const g of genNames) {
      await Deno.copyFile(join(seedRoot, "generations", g), join(root, "generations", g));
    }
    const stats = { inputs: 0, ok: 0, corrupt: 0, outside: 0, genOutside: 0, untyped: 0 };
    const genDir = join(root, "generations");
    const runs = STRESS ? 20_000 : 2_000;
    await fc.assert(
      fc.asyncProperty(manifestInput(base), async (bytes) => {
        stats.inputs++;
        // 1. Pure parse: a value, never a throw.
        const pure = parseManifestBytes(bytes);
        assert.ok(pure.kind === "ok" || pure.kind === "corrupt");
        // 2. From disk, through the spying Fs; 3. through the store (quarantine + rebuild).
        await Deno.writeFile(join(root, MANIFEST_FILE), bytes);
        fs.arm(null);
        const read = await readManifestFile(fs, root);
        assert.equal(read.kind, pure.kind);
        if (read.kind === "ok") stats.ok++;
        else stats.corrupt++;
        const m = await store.readManifest();
        assert.equal(typeof m.revision, "number");
        await store.verifyAll();
        for (const e of Object.values(m.sessions)) {
          for (const g of e.generations) {
            try {
              await store.loadSegment(g);
            } catch (err) {
              if (
                !(err instanceof CorruptGenerationError || err instanceof NotFoundError ||
                  err instanceof TypeError)
              ) {
                stats.untyped++;
                throw err;
              }
            }
          }
        }
        for (const o of fs.ops) {
          for (const p of [o.path, o.to]) {
            if (p === undefined) continue;
            if (p !== root && !p.startsWith(root + "/")) stats.outside++;
            if (o.op === "readFile" && p.includes("/generations/") && !p.startsWith(genDir + "/")) {
              stats.genOutside++;
            }
            if (p.startsWith(genDir + "/") && p.slice(genDir.length + 1).includes("/")) {
              stats.genOutside++;
            }
          }
        }
        assert.equal(stats.outside, 0, "an op left the store root");
        assert.equal(stats.genOutside, 0, "a generation was opened outside generations/");
      }),
      { numRuns: runs, seed: SEED },
    );
    // deno-lint-ignore no-console
    console.log(
      `FUZZ manifest: inputs: ${fmt(stats.inputs)} (valid ${fmt(stats.ok)}, corrupt ${
        fmt(stats.corrupt)
      }), untyped throws: ${stats.untyped}, ops outside the store root: ${stats.outside}, ` +
        `generations opened outside generations/: ${stats.genOutside}, seed ${SEED}`,
    );
  }));
