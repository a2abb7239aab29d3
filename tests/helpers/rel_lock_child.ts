/**
 * Child process for the multi-daemon lock tests (reliability-plan A9, A10). Usage:
 *   rel_lock_child.ts sweeper <root> <spec.json> <sweeps> <flock|none>
 *       Opens its own Store on <root>, prints "ready", waits for a line on stdin (the
 *       parent releases every daemon at once), then runs <sweeps> sweeps: read the
 *       manifest, publish what the spec's sources hold beyond it (replace or append).
 *       After each publish prints "hold <start> <end>": the span (ms, performance clock)
 *       from its first to its last fs operation inside publish(); holdLock is not an Fs
 *       operation, so every one of them runs while the writer lock is held.
 *   holder <root> <heartbeat-ms>
 *       Takes the writer lock, prints "locked" and keeps it until killed; with a heartbeat
 *       > 0 it also touches writer.lock's mtime that often (a live, active holder).
 * The spec (written by the parent) maps session ids to record counts; records are the
 * deterministic store_fixtures records, so any writer derives the same shards.
 */
import { join } from "node:path";
import { type Fs, realFs } from "../../lib/durable/mod.ts";
import {
  holdLock,
  LOCK_FILE,
  openStore,
  type ShardUpdate,
} from "../../lib/message_search/store/mod.ts";
import { PV, records, update } from "./store_fixtures.ts";

const [mode, root, a1, a2, a3] = Deno.args;
if (import.meta.main && (!mode || !root)) {
  throw new Error("usage: rel_lock_child.ts <mode> <root> …");
}
const enc = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));
const clock = () => performance.timeOrigin + performance.now();

/** The updates that bring `m` up to `spec` (what a sweep of those sources publishes). */
export function sweepUpdates(
  spec: Record<string, number>,
  m: { sessions: Record<string, { records: number; generations: string[] }> },
): ShardUpdate[] {
  const out: ShardUpdate[] = [];
  for (const [sid, n] of Object.entries(spec)) {
    const e = m.sessions[`codex:${sid}`];
    if (!e) {
      out.push(update("replace", sid, { recs: records(sid, 0, n, { ts: 1_000 }), watermark: n }));
    } else if (e.records < n) {
      const recs = records(sid, e.records, n - e.records, { ts: 1_000 });
      out.push(update("append", sid, { base: e.generations, recs, watermark: n }));
    }
  }
  return out;
}

if (import.meta.main && mode === "sweeper") {
  const span = { active: false, first: 0, last: 0 };
  const timed = <T>(p: () => Promise<T>): Promise<T> => {
    if (!span.active) return p();
    const t = clock();
    if (span.first === 0) span.first = t;
    return p().finally(() => (span.last = clock()));
  };
  const fs: Fs = {
    async createNew(path, m) {
      const h = await timed(() => realFs.createNew(path, m));
      return {
        writeAll: (b) => timed(() => h.writeAll(b)),
        sync: () => timed(() => h.sync()),
        close: () => h.close(),
      };
    },
    async openAppend(path) {
      const h = await timed(() => realFs.openAppend(path));
      return {
        writeAll: (b) => timed(() => h.writeAll(b)),
        sync: () => timed(() => h.sync()),
        close: () => h.close(),
      };
    },
    readFile: (p) => timed(() => realFs.readFile(p)),
    readFileCapped: (p, max) => timed(() => realFs.readFileCapped(p, max)),
    rename: (a, b) => timed(() => realFs.rename(a, b)),
    remove: (p) => timed(() => realFs.remove(p)),
    stat: (p) => timed(() => realFs.stat(p)),
    lstat: (p) => timed(() => realFs.lstat(p)),
    readDir: (p) => timed(() => realFs.readDir(p)),
    mkdir: (p, m) => timed(() => realFs.mkdir(p, m)),
    syncDir: (p) => timed(() => realFs.syncDir(p)),
  };
  const store = await openStore({
    root: root!,
    fs,
    parserVersion: PV,
    windowDays: null,
    lock: a3 === "none" ? "none" : "flock",
    lockWaitMs: 60_000,
  });
  say("ready");
  const reader = Deno.stdin.readable.getReader();
  await reader.read();
  reader.releaseLock();
  for (let i = 0; i < Number(a2); i++) {
    const spec = JSON.parse(await Deno.readTextFile(a1!)) as Record<string, number>;
    const updates = sweepUpdates(spec, await store.readManifest());
    if (updates.length === 0) continue;
    Object.assign(span, { active: true, first: 0, last: 0 });
    const r = await store.publish(updates);
    span.active = false;
    say(`hold ${span.first} ${span.last} ${r.accepted.length} ${r.rejected.length}`);
  }
  say("done");
} else if (import.meta.main && mode === "holder") {
  const lock = await holdLock(root!);
  say("locked");
  const beat = Number(a1 ?? 0);
  const path = join(root!, LOCK_FILE);
  setInterval(() => {
    if (beat > 0) Deno.utimeSync(path, new Date(), new Date());
  }, beat > 0 ? beat : 60_000);
  void lock;
} else if (import.meta.main) {
  throw new Error(`Unknown mode "${mode}"`);
}
