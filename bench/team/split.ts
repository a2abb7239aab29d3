/**
 * Splits one backfilled store into N machine stores (issue 19's "10 simulated machines,
 * each a state root with its share of the bench corpus"):
 *   deno run -A bench/team/split.ts <full-store> <out-dir> <machines>
 * Session `key` goes to machine `fnv1a(key) % machines` (stable, so every run splits the
 * same way); each machine store receives its sessions as they are — records, marks,
 * cursors, meta — through the store's own publish path, so the machine stores are real
 * stores the production publisher reads. Writes `<out-dir>/split.json` (machines, sessions
 * and records per machine, the full store's revision) last: a split without it is redone.
 * Prints that JSON on stdout.
 */
import { join } from "node:path";
import {
  decodeRecords,
  type MessageRecord,
  openStore,
  PARSER_VERSION,
  type ShardUpdate,
  type SupersessionMark,
} from "../../lib/message_search/mod.ts";

const [fullRoot, outDir, n] = Deno.args;
const machines = Number(n);
if (!fullRoot || !outDir || !(machines >= 1)) {
  throw new RangeError("Usage: split.ts <full-store> <out-dir> <machines>");
}

/** FNV-1a over UTF-16 units: a stable, well-spread machine assignment. */
function machineOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % machines;
}

const full = await openStore({ root: fullRoot, parserVersion: PARSER_VERSION, windowDays: null });
const manifest = await full.readManifest();
await Deno.remove(outDir, { recursive: true }).catch(() => {});
const stores = await Promise.all(
  Array.from({ length: machines }, (_, i) =>
    openStore({
      root: join(outDir, `m${i}`),
      parserVersion: PARSER_VERSION,
      windowDays: null,
    })),
);
const per = Array.from({ length: machines }, () => ({ sessions: 0, records: 0 }));
const pending: ShardUpdate[][] = Array.from({ length: machines }, () => []);
const pendingRecords = new Array<number>(machines).fill(0);

async function flush(i: number) {
  if (pending[i]!.length === 0) return;
  const r = await stores[i]!.publish(pending[i]!);
  if (r.rejected.length > 0) {
    throw new Error(`Split publish rejected ${r.rejected.length}: ${r.rejected[0]!.reason}`);
  }
  pending[i] = [];
  pendingRecords[i] = 0;
}

for (const [key, e] of Object.entries(manifest.sessions)) {
  if (e.quarantined_at_ms !== undefined) continue;
  const records: MessageRecord[] = [];
  const marks: SupersessionMark[] = [];
  for (const g of e.generations) {
    const view = await full.loadSegment(g);
    for (const r of decodeRecords(view)) records.push(r);
    for (const m of view.marks) marks.push(m);
  }
  const i = machineOf(key);
  pending[i]!.push({
    kind: "replace",
    key,
    source: e.source,
    session_id: e.session_id,
    base: null,
    segment: { records, marks },
    cursors: e.cursors,
    state: e.state,
    source_watermark: e.source_watermark,
    source_fingerprint: e.source_fingerprint,
    meta: e.meta,
  });
  per[i]!.sessions++;
  per[i]!.records += records.length;
  pendingRecords[i]! += records.length;
  if (pendingRecords[i]! >= 20_000) await flush(i);
}
for (let i = 0; i < machines; i++) await flush(i);
const out = {
  machines,
  fullRevision: manifest.revision,
  sessions: per.reduce((a, p) => a + p.sessions, 0),
  records: per.reduce((a, p) => a + p.records, 0),
  per,
};
await Deno.writeTextFile(join(outDir, "split.json"), JSON.stringify(out));
console.log(JSON.stringify(out));
