/**
 * Child for the arena accounting test (query/arena_test.ts):
 *   deno run -A --v8-flags=--expose-gc arena_memory_child.ts <store root> <parser version>
 * loads every generation of the store into one arena and prints one JSON line: what the
 * arena accounts (`bytes` for its resident segments, `summaryBytes` for the summaries it
 * keeps beside them) and what the loads retain, measured after full GCs: `external`
 * (ArrayBuffer backing stores, outside V8's heap) and `heap` (V8's heap).
 */
import { openStore } from "../../lib/message_search/store/mod.ts";
import { Arena } from "../../lib/message_search/query/arena.ts";

const [root, pv] = Deno.args;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const settle = () => {
  for (let i = 0; i < 4; i++) gc();
  const m = Deno.memoryUsage();
  return { external: m.external, heap: m.heapUsed };
};
const store = await openStore({ root: root!, parserVersion: Number(pv), windowDays: null });
const names = Object.values((await store.readManifest()).sessions).flatMap((e) => e.generations);
// Warm every code path once (zod's compiled parsers, the loader's closures), in a function
// of its own so no frame of ours still holds the warm-up's arena when m0 is taken.
async function warmUp(): Promise<void> {
  await new Arena(1 << 30).load(store, names[0]!);
}
await warmUp();
await Promise.resolve(0);
const m0 = settle();
const arena = new Arena(1 << 30);
for (const n of names) await arena.load(store, n);
const m1 = settle();
const st = arena.stats();
console.log(JSON.stringify({
  shards: st.shards,
  bytes: st.bytes,
  summaryBytes: st.summaryBytes,
  external: m1.external - m0.external,
  heap: m1.heap - m0.heap,
  kept: arena.has(names[0]!),
}));
