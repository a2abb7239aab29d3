/**
 * Builds one fixture and runs its extractor with NO environment access, reading and
 * writing only the fixture dir (the parent passes --allow-read=<dir>,<repo>
 * --allow-write=<dir> and nothing else), then prints what it extracted as JSON. Proves
 * the extractors are hermetic: paths in, nothing read from the environment or home.
 */
import { closeSharedSnapshots, deriveActive } from "../../lib/message_search/mod.ts";
import { ALL_FIXTURES } from "../fixtures/all.ts";

const [source, dir, nowArg] = Deno.args;
const fx = ALL_FIXTURES.find((f) => f.source === source);
if (!fx || !dir) throw new Error(`usage: contract_child.ts <source> <fixture-dir> [now-ms]`);
// The parent's clock, so a fixture whose ids carry its creation time writes the same ids.
const home = await fx.build(dir, nowArg ? { now: Number(nowArg) } : {});
const ex = home.extractor();
const out: Record<string, { text: string; active: boolean }[]> = {};
for (const unit of (await ex.discover()).units) {
  const o = await ex.extract(unit, null, { now: Date.now() });
  if (o.kind !== "replace" && o.kind !== "append") continue;
  const flags = deriveActive(o.records, o.marks);
  out[unit.key] = o.records.map((r, i) => ({ text: r.text, active: flags[i]! }));
}
// A SQLite source keeps its snapshot open for the process: close it before exiting.
closeSharedSnapshots();
console.log(JSON.stringify(out));
