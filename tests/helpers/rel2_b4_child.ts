/**
 * Child process for reliability-plan B4 (tests/reliability_extractors_test.ts): one
 * extractor, its fixture home, the real indexer and store. It appends 1,000 valid lines
 * and 1,000 malformed lines interleaved (rel2_lines.ts) to the fixture's live session,
 * sweeps once while sampling its own RSS, and prints one JSON result line. Run alone so
 * RSS is this sweep's and not a neighbour test's (`deno test --parallel` shares processes).
 * Usage: rel2_b4_child.ts <source> <dir> [malformed] [valid]
 */
import { dirname, join } from "node:path";
import {
  decodeRecords,
  Indexer,
  openStore,
  PARSER_VERSION,
  type Source,
} from "../../lib/message_search/mod.ts";
import { KIMI_WIRE_MAX_RECORD_BYTES } from "../../lib/message_search/mod.ts";
import { FIXTURES } from "../fixtures/all.ts";
import { interleave, malformedLines, markersIn, VALID_VARIANTS, validLine } from "./rel2_lines.ts";

/** What the child reports. */
export interface B4Result {
  source: Source;
  valid: number;
  validIndexed: number;
  malformed: number;
  malformedCounted: number;
  categories: Record<string, number>;
  skippedByReason: Record<string, number>;
  crashes: number;
  errors: string[];
  sweepS: number;
  rssPeakMiB: number;
  fileMiB: number;
  /** Kimi only: the 10 MiB lines in a session of their own (fail-closed by spec). */
  kimiHuge?: { published: boolean; oversizedCounted: number };
}

const MiB = 1 << 20;

async function main(source: Source, dir: string, nBad: number, nValid: number): Promise<B4Result> {
  const fx = FIXTURES.find((f) => f.source === source)!;
  const home = await fx.build(join(dir, "home"));
  const store = await openStore({
    root: join(dir, "store"),
    parserVersion: PARSER_VERSION,
    windowDays: 14,
  });
  const indexer = new Indexer({ store, extractors: [home.extractor()], windowDays: 14 });
  await indexer.sweep();
  const key = home.appendTarget.key;
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const before = (await store.readManifest()).sessions[key]!;
  const skippedBefore = { ...before.skipped };

  const userLine = home.appendTarget.userLine;
  // The sample for wrong-typed variants uses an index no valid line uses (its ids are unique).
  const sample = JSON.parse(userLine("sample [[B4S0]]", 999_999));
  // Kimi refuses a whole session over its 2 MiB record cap (spec: fail-closed), so its
  // huge lines stay just under the cap here; the 10 MiB ones get a session of their own.
  const hugeBytes = source === "kimi" ? KIMI_WIRE_MAX_RECORD_BYTES - 4096 : 10 * MiB;
  const bad = malformedLines(source, sample, { n: nBad, hugeBytes });
  const valid: Uint8Array[] = [];
  for (let i = 1; i <= nValid; i++) {
    // Every variant in turn; the 512 KiB big_text one only every 100th line.
    const light = VALID_VARIANTS.filter((x) => x !== "big_text");
    const v = i % 100 === 0 ? "big_text" : light[i % light.length]!;
    valid.push(validLine(userLine, "B4V", i, v));
  }
  const lines = interleave(valid, bad.lines);
  const f = await Deno.open(home.appendTarget.path, { append: true });
  let bytes = 0;
  try {
    for (const l of lines) {
      let off = 0;
      while (off < l.length) off += await f.write(l.subarray(off));
      bytes += l.length;
    }
  } finally {
    f.close();
  }

  const base = Deno.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, Deno.memoryUsage().rss)), 5);
  const t0 = performance.now();
  let crashes = 0;
  const errors: string[] = [];
  try {
    const report = await indexer.sweep();
    for (const s of Object.values(report.sources)) errors.push(...s.errors);
    for (const r of report.rejected) errors.push(`rejected ${r.key}: ${r.reason}`);
  } catch (err) {
    crashes++;
    errors.push(String(err));
  } finally {
    clearInterval(sampler);
  }
  const sweepS = (performance.now() - t0) / 1000;
  peak = Math.max(peak, Deno.memoryUsage().rss);
  crashes += errors.length;

  const entry = (await store.readManifest()).sessions[key];
  const texts: string[] = [];
  for (const g of entry?.generations ?? []) {
    for (const r of decodeRecords(await store.loadSegment(g))) texts.push(r.text);
  }
  const found = markersIn("B4V", texts);
  const skippedByReason: Record<string, number> = {};
  for (const [k, n] of Object.entries(entry?.skipped ?? {})) {
    const d = n - (skippedBefore[k] ?? 0);
    if (d !== 0) skippedByReason[k] = d;
  }
  const result: B4Result = {
    source,
    valid: nValid,
    validIndexed: [...found].filter((i) => i >= 1 && i <= nValid).length,
    malformed: bad.lines.length,
    malformedCounted: sum(entry?.skipped ?? {}) - sum(skippedBefore),
    categories: bad.categories,
    skippedByReason,
    crashes,
    errors: errors.slice(0, 5),
    sweepS,
    rssPeakMiB: peak / MiB,
    fileMiB: bytes / MiB,
  };
  if (source === "kimi") {
    result.kimiHuge = await kimiHugeSession(home.appendTarget.path, indexer, store);
  }
  return result;
}

/** A copy of the Kimi session with 10 MiB lines appended: it must publish nothing. */
async function kimiHugeSession(
  wirePath: string,
  indexer: Indexer,
  store: Awaited<ReturnType<typeof openStore>>,
): Promise<{ published: boolean; oversizedCounted: number }> {
  const sessionDir = dirname(dirname(dirname(wirePath)));
  const id = `session_${crypto.randomUUID()}`;
  const copy = join(dirname(sessionDir), id);
  await Deno.mkdir(join(copy, "agents", "main"), { recursive: true });
  await Deno.copyFile(join(sessionDir, "state.json"), join(copy, "state.json"));
  const first = (await Deno.readTextFile(wirePath)).split("\n")[0]!;
  const huge = `{"type":"context.append_message","message":"${"x".repeat(10 * MiB)}"}\n`;
  await Deno.writeTextFile(join(copy, "agents", "main", "wire.jsonl"), `${first}\n${huge}${huge}`);
  // unpublishedSkips() sums every unpublished Kimi session (the fixture has one too).
  const oversized = () => indexer.unpublishedSkips().kimi?.oversized_record ?? 0;
  const before = oversized();
  await indexer.sweep();
  const entry = (await store.readManifest()).sessions[`kimi:${id}`];
  return {
    published: (entry?.records ?? 0) > 0,
    oversizedCounted: oversized() - before + (entry?.skipped.oversized_record ?? 0),
  };
}

if (import.meta.main) {
  const [source, dir, nBad = "1000", nValid = "1000"] = Deno.args;
  const r = await main(source as Source, dir!, Number(nBad), Number(nValid));
  console.log(JSON.stringify(r));
}
