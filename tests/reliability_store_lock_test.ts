/**
 * Writer-lock reliability with real processes (reliability-plan A9, A10).
 *  - A9: 2–8 daemons (each a `deno run` child with its own Store on one store root) are
 *    released together every round and sweep the same growing sources; every publish
 *    reports the span of its fs activity under the lock. No two spans may overlap and the
 *    final manifest must equal a single writer's rebuild. Negative control: the same
 *    daemons with lock "none" must be seen to overlap (the measurement can fail).
 *  - A10: the stale-takeover matrix. Our lock is flock(2): the kernel drops it when the
 *    holder dies, so neither the lock file's age nor the pid/host inside it matter. For
 *    every holder kind × age a contender tries to take the lock; it must win exactly when
 *    the holder is dead. Negative control: the "age > 5 min ⇒ stale" policy of §0.4 judged
 *    on the same cells must be seen to take over a live holder.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LockHeldError } from "../lib/errors.ts";
import {
  decodeRecords,
  LOCK_FILE,
  type Manifest,
  openStore,
  type Store,
} from "../lib/message_search/store/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { sweepUpdates } from "./helpers/rel_lock_child.ts";
import { prng, PV, withTempDir } from "./helpers/store_fixtures.ts";

const CHILD = new URL("./helpers/rel_lock_child.ts", import.meta.url).pathname;

interface Child {
  proc: Deno.ChildProcess;
  /** Resolves with the first line once it is `want`. */
  line(want: string): Promise<void>;
  lines(): Promise<string[]>;
}

function spawn(args: string[]): Child {
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CHILD, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const waiters: { want: string; done: () => void }[] = [];
  const pump = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stdout) {
      text += dec.decode(chunk, { stream: true });
      for (const w of [...waiters]) {
        if (text.split("\n").includes(w.want)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.done();
        }
      }
    }
  })();
  const stderr = new Response(proc.stderr).text();
  return {
    proc,
    line: (want) =>
      new Promise<void>((done, fail) => {
        if (text.split("\n").includes(want)) return done();
        waiters.push({ want, done });
        proc.status.then(async (s) => {
          await pump;
          if (!text.split("\n").includes(want)) {
            fail(new Error(`child exited (${s.code}) before "${want}": ${await stderr}`));
          }
        });
      }),
    lines: async () => {
      const s = await proc.status;
      await pump;
      if (!s.success) throw new Error(`child failed (${s.code}): ${await stderr}`);
      return text.split("\n").filter((l) => l !== "");
    },
  };
}

async function recordIds(store: Store, m: Manifest, key: string): Promise<string[]> {
  const ids: string[] = [];
  for (const g of m.sessions[key]?.generations ?? []) {
    for (const r of decodeRecords(await store.loadSegment(g))) ids.push(r.id);
  }
  return ids;
}

/** One A9 round: `n` daemons released together, `sweeps` sweeps each. */
async function contentionRound(
  root: string,
  spec: string,
  o: { n: number; sweeps: number; lock: "flock" | "none" },
): Promise<{ spans: { pid: number; start: number; end: number }[] }> {
  const kids = Array.from(
    { length: o.n },
    () => spawn(["sweeper", root, spec, String(o.sweeps), o.lock]),
  );
  await Promise.all(kids.map((k) => k.line("ready")));
  const go = new TextEncoder().encode("go\n");
  await Promise.all(kids.map(async (k) => {
    const w = k.proc.stdin.getWriter();
    await w.write(go);
    await w.close();
  }));
  const spans: { pid: number; start: number; end: number }[] = [];
  for (const k of kids) {
    for (const l of await k.lines()) {
      const m = /^hold (\S+) (\S+)/.exec(l);
      if (m) spans.push({ pid: k.proc.pid, start: Number(m[1]), end: Number(m[2]) });
    }
  }
  return { spans };
}

/** Pairs of spans from different daemons that overlap in time. */
function overlaps(spans: { pid: number; start: number; end: number }[]): number {
  const s = [...spans].sort((a, b) => a.start - b.start);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    for (let j = i + 1; j < s.length && s[j]!.start < s[i]!.end; j++) {
      if (s[j]!.pid !== s[i]!.pid) n++;
    }
  }
  return n;
}

Deno.test("A9: 2–8 daemons on one store never hold the lock together; the result is a rebuild", () =>
  withTempDir(async (dir) => {
    const rounds = STRESS ? 200 : 8;
    const rnd = prng(9);
    let overlapping = 0;
    let equal = 0;
    let publishes = 0;
    for (let r = 0; r < rounds; r++) {
      const root = join(dir, `r${r}`, "v1");
      const spec = join(dir, `r${r}`, "spec.json");
      await Deno.mkdir(join(dir, `r${r}`));
      const sources: Record<string, number> = {};
      for (let k = 0; k < 6; k++) sources[`k${k}`] = 1 + Math.floor(rnd() * 5);
      await Deno.writeTextFile(spec, JSON.stringify(sources));
      const n = 2 + (r % 7);
      const first = await contentionRound(root, spec, { n, sweeps: 2, lock: "flock" });
      // The sources grow and a second wave of daemons starts on the existing store.
      for (const k of Object.keys(sources)) sources[k]! += Math.floor(rnd() * 4);
      sources[`k${6 + r}`] = 3;
      await Deno.writeTextFile(spec, JSON.stringify(sources));
      const second = await contentionRound(root, spec, { n, sweeps: 2, lock: "flock" });
      const spans = [...first.spans, ...second.spans];
      publishes += spans.length;
      overlapping += overlaps(spans);
      // Reference: one writer, one sweep, into a fresh store.
      const ref = await openStore({
        root: join(dir, `r${r}`, "ref"),
        parserVersion: PV,
        windowDays: null,
      });
      await ref.publish(sweepUpdates(sources, await ref.readManifest()));
      const want = await ref.readManifest();
      const got = await (await openStore({ root, parserVersion: PV, windowDays: null }))
        .readManifest();
      const gotStore = await openStore({ root, parserVersion: PV, windowDays: null });
      let same =
        Object.keys(got.sessions).sort().join() === Object.keys(want.sessions).sort().join();
      for (const key of Object.keys(want.sessions)) {
        const a = await recordIds(gotStore, got, key);
        const b = await recordIds(ref, want, key);
        if (
          a.join() !== b.join() ||
          got.sessions[key]!.source_watermark !== want.sessions[key]!.source_watermark
        ) {
          same = false;
        }
      }
      if (same) equal++;
      await Deno.remove(join(dir, `r${r}`), { recursive: true });
    }
    // Negative control: the same daemons without the lock must be seen to overlap.
    let controlOverlaps = 0;
    for (let c = 0; c < 4 && controlOverlaps === 0; c++) {
      const root = join(dir, `c${c}`, "v1");
      const spec = join(dir, `c${c}`, "spec.json");
      await Deno.mkdir(join(dir, `c${c}`));
      await Deno.writeTextFile(
        spec,
        JSON.stringify(Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`k${k}`, 40]))),
      );
      const { spans } = await contentionRound(root, spec, { n: 6, sweeps: 4, lock: "none" });
      controlOverlaps += overlaps(spans);
    }
    figure(
      "A9",
      `rounds: ${rounds}, overlapping holder intervals: ${overlapping}, final == reference: ${equal}/${rounds}`,
    );
    console.log(
      `A9 detail: daemons per round: 2–8 (two waves), publishes timed: ${publishes}; ` +
        `control (lock "none"): overlapping intervals: ${controlOverlaps}`,
    );
    assert.equal(overlapping, 0);
    assert.equal(equal, rounds);
    assert.ok(publishes >= rounds * 2);
    assert.ok(controlOverlaps > 0, "without the lock the daemons must be seen to overlap");
  }));

type HolderKind =
  | "dead holder"
  | "live holder, active"
  | "live holder, idle"
  | "reused pid"
  | "other host, held"
  | "other host, not held";

const AGES: [string, number][] = [["4:59", 299_000], ["5:01", 301_000], ["60 min", 3_600_000]];
const STALE_AFTER_MS = 5 * 60_000;

/** Sets writer.lock's informational JSON and its mtime to `age` ago. */
async function stamp(path: string, info: Record<string, unknown>, ageMs: number): Promise<void> {
  const at = Date.now() - ageMs;
  await Deno.writeTextFile(path, JSON.stringify({ ...info, acquired_at_ms: at }) + "\n");
  await Deno.utime(path, new Date(at), new Date(at));
}

Deno.test("A10: the stale-takeover matrix: the lock is taken over exactly when its holder is dead", () =>
  withTempDir(async (dir) => {
    const kinds: HolderKind[] = [
      "dead holder",
      "live holder, active",
      "live holder, idle",
      "reused pid",
      "other host, held",
      "other host, not held",
    ];
    let wrong = 0;
    let missed = 0;
    let missedYoung = 0;
    let cells = 0;
    const control = { wrong: 0, missed: 0 };
    const table: string[] = [];
    for (const kind of kinds) {
      for (const [label, ageMs] of AGES) {
        cells++;
        const root = join(dir, `${cells}`);
        await Deno.mkdir(root);
        const path = join(root, LOCK_FILE);
        const cleanup: (() => Promise<void>)[] = [];
        let holderDead = false;
        try {
          if (kind !== "other host, not held") {
            const beat = kind === "live holder, active" ? 50 : 0;
            const h = spawn(["holder", root, String(beat)]);
            cleanup.push(async () => {
              try {
                h.proc.kill("SIGKILL");
              } catch { /* already dead */ }
              await h.proc.status;
              await h.proc.stdout.cancel().catch(() => {});
            });
            await h.line("locked");
            if (kind === "dead holder" || kind === "reused pid") {
              h.proc.kill("SIGKILL");
              await h.proc.status;
              holderDead = true;
            }
            let info: Record<string, unknown> = { pid: h.proc.pid };
            if (kind === "reused pid") {
              // The recorded pid now belongs to a live, unrelated process.
              const other = new Deno.Command("sleep", { args: ["30"] }).spawn();
              cleanup.push(async () => {
                other.kill("SIGKILL");
                await other.status;
              });
              info = { pid: other.pid };
            }
            if (kind === "other host, held") info = { pid: 4242, host: "build-box-2" };
            await stamp(path, info, ageMs);
          } else {
            holderDead = true;
            await stamp(path, { pid: 4242, host: "build-box-2" }, ageMs);
          }
          // Give an active holder's heartbeat time to refresh the mtime.
          if (kind === "live holder, active") await new Promise((r) => setTimeout(r, 120));
          // The §0.4 policy, judged before we touch the file: age from mtime.
          const st = await Deno.stat(path);
          const naiveStale = Date.now() - st.mtime!.getTime() > STALE_AFTER_MS;
          // The contender: a daemon's publish that waits for nothing.
          const store = await openStore({
            root,
            parserVersion: PV,
            windowDays: null,
            lockWaitMs: 0,
          });
          const tookOver = await store.publish(sweepUpdates({ a: 1 }, await store.readManifest()))
            .then((r) => r.accepted.length === 1, (err: unknown) => {
              if (!(err instanceof LockHeldError)) throw err;
              return false;
            });
          if (tookOver && !holderDead) wrong++;
          if (!tookOver && holderDead && ageMs > STALE_AFTER_MS) missed++;
          if (!tookOver && holderDead && ageMs <= STALE_AFTER_MS) missedYoung++;
          if (naiveStale && !holderDead) control.wrong++;
          if (!naiveStale && holderDead) control.missed++;
          table.push(`${kind} @ ${label}: ${tookOver ? "taken over" : "refused"}`);
        } finally {
          for (const c of cleanup.reverse()) await c();
        }
      }
    }
    figure(
      "A10",
      `wrong takeovers: ${wrong}, missed takeovers (>5 min & dead): ${missed}`,
    );
    console.log(
      `A10 detail: cells: ${cells} (${kinds.length} holder kinds × ages 4:59, 5:01, 60 min); ` +
        `missed takeovers of dead holders ≤5 min: ${missedYoung}; control (age > 5 min ⇒ ` +
        `stale): wrong takeovers: ${control.wrong}, missed: ${control.missed}\n  ` +
        table.join("\n  "),
    );
    assert.equal(wrong, 0);
    assert.equal(missed, 0);
    assert.equal(missedYoung, 0);
    assert.ok(control.wrong > 0, "the age-based policy must be seen to take over a live holder");
  }));
