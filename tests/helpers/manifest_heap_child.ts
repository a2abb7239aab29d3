/**
 * Child for the resident-manifest heap test (store/resident_entry_test.ts):
 *   deno run -A --v8-flags=--expose-gc manifest_heap_child.ts <store root> <parser version>
 * prints one JSON line: the live heap the store's read manifest retains (`resident`), and
 * what the same manifest retains as plain objects (`plain`: JSON.parse of its JSON, which
 * is what the reader produced before issue 16), each measured as heapUsed after full GCs.
 */
import { openStore } from "../../lib/message_search/store/mod.ts";

const [root, pv] = Deno.args;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const heap = () => {
  for (let i = 0; i < 4; i++) gc();
  return Deno.memoryUsage().heapUsed;
};
const store = await openStore({ root: root!, parserVersion: Number(pv), windowDays: null });
// Warm every code path once (zod's compiled parsers, the reader's closures). In a function
// of its own, so no frame of ours still holds the warm-up's manifest when h0 is taken.
async function warmUp(): Promise<void> {
  await store.readManifest();
}
await warmUp();
await Promise.resolve(0);
const h0 = heap();
const held: { manifest: unknown; plain: unknown } = { manifest: null, plain: null };
held.manifest = await store.readManifest();
const resident = heap() - h0;
const json = JSON.stringify(held.manifest);
held.manifest = null;
const h1 = heap();
held.plain = JSON.parse(json);
const plain = heap() - h1;
console.log(JSON.stringify({ resident, plain, kept: held.plain !== null }));
