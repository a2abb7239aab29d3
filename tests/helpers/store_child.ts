/**
 * Child process for the store crash tests: it is SIGKILLed by its parent (or by its own
 * FaultFs) mid-publish. Usage: store_child.ts <mode> <root> [arg]
 *   loop       <root> <seed>  publish random shards forever; print "ack <revision> <key>"
 *                             after each publish returns (the parent's I4 evidence)
 *   naive      <root> <seed>  the negative control: the same loop, but manifest.json is
 *                             rewritten in place with Deno.writeTextFile
 *   publish-at <root> <k>     publish the A2 batch through a FaultFs that SIGKILLs this
 *                             process before fs op k (0: never); print "done <revision>"
 *   hold-lock  <root>         take the writer lock, print "locked", wait to be killed
 * Every mode prints "ready" once the store is open, so the kill timer starts after
 * Deno's startup, not during it.
 */
import { join } from "node:path";
import { FaultFs } from "./fault_fs.ts";
import { a2Batch, emptyLike, prng, PV, randomUpdate } from "./store_fixtures.ts";
import { holdLock, MANIFEST_FILE, openStore } from "../../lib/message_search/store/mod.ts";

const [mode, root, arg] = Deno.args;
if (!mode || !root) throw new Error("usage: store_child.ts <mode> <root> [arg]");
const enc = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));

if (mode === "loop") {
  const store = await openStore({ root, parserVersion: PV, windowDays: null });
  const rnd = prng(Number(arg));
  say("ready");
  for (;;) {
    const r = await store.publish([randomUpdate(rnd, await store.readManifest())]);
    for (const k of r.accepted) say(`ack ${r.revision} ${k}`);
  }
} else if (mode === "naive") {
  await Deno.mkdir(root, { recursive: true });
  const rnd = prng(Number(arg));
  const path = join(root, MANIFEST_FILE);
  say("ready");
  for (;;) {
    let m = emptyLike();
    try {
      m = JSON.parse(await Deno.readTextFile(path));
    } catch (err) {
      // Missing, or torn by the previous kill: start over, as a naive store would.
      void err;
    }
    const u = randomUpdate(rnd, m);
    m.sessions[u.key] = {
      source: u.source,
      session_id: u.session_id,
      generations: [],
      records: u.segment!.records.length,
      newest_ts_ms: 0,
      oldest_ts_ms: 0,
      source_watermark: u.source_watermark!,
      source_fingerprint: u.source_fingerprint!,
      cursors: u.cursors!,
      state: u.state,
      source_gone: false,
      meta: u.meta!,
      skipped: {},
      published_at_ms: Date.now(),
    };
    m.revision = Math.max(m.revision + 1, Date.now());
    await Deno.writeTextFile(path, JSON.stringify(m));
    say(`ack ${m.revision} ${u.key}`);
  }
} else if (mode === "publish-at") {
  const fs = new FaultFs();
  const store = await openStore({ root, fs, parserVersion: PV, windowDays: null });
  const batch = a2Batch(await store.readManifest());
  say("ready");
  const k = Number(arg);
  fs.arm(k > 0 ? { at: k, action: "kill" } : null);
  const r = await store.publish(batch);
  say(`done ${r.revision} ${fs.ops.length}`);
} else if (mode === "hold-lock") {
  const lock = await holdLock(root);
  say("locked");
  // Keep the event loop alive until the parent kills us while we hold the lock.
  setInterval(() => lock.path, 60_000);
} else {
  throw new Error(`Unknown mode "${mode}"`);
}
