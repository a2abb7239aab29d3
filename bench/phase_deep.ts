/**
 * The `deep` phase (issue 29): Deep Search over the corpus (the store the backfill built;
 * every source's transcript files and native logs), paged to the end exactly as the CLI
 * pages it (1 s pages), for a needle that is nowhere (a full scan: the worst case) and a
 * rare one; the first page of a common word (what the dashboard shows first). Baseline,
 * in the same run: `rg -c -F -i` over the same homes (the fastest honest way to look for a
 * fixed string in files; skipped with a note when rg is not installed), after a warm-up
 * so both read from the page cache.
 */
import { deepSearch } from "../lib/catalog/mod.ts";
import { NEEDLES, scanRoots } from "./corpus/mod.ts";
import type { Corpus } from "./corpus/mod.ts";
import { memory, rootsOf, wire } from "./harness.ts";

/** Milliseconds of `rg -c -F -i` for `needle` over `homes`; null when rg is not installed. */
export async function timeRg(homes: string[], needle: string): Promise<number | null> {
  const t = performance.now();
  try {
    const p = await new Deno.Command("rg", {
      args: ["-c", "-F", "-i", "--no-messages", "-e", needle, ...homes],
      stdout: "null",
      stderr: "null",
    }).output();
    if (p.code > 1) throw new Error(`rg failed with exit code ${p.code}`);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  return performance.now() - t;
}

/** The phase's figures (see the header). */
export async function deepPhase(c: Corpus, storeRoot: string): Promise<Record<string, unknown>> {
  const w = await wire(c, storeRoot, Date.now, rootsOf(c));
  if (Object.keys((await w.store.readManifest()).sessions).length === 0) await w.indexer.sweep();
  const deps = { logsDir: c.homes.logsDir, store: w.store, namesPath: `${storeRoot}-names.json` };
  const full = async (q: string) => {
    const t = performance.now();
    let cursor: string | null = null;
    let bytes = 0;
    let hits = 0;
    let pages = 0;
    do {
      const p: Awaited<ReturnType<typeof deepSearch>> = await deepSearch(deps, {
        q,
        cursor,
        limit: 1000,
        maxMs: 1000,
      });
      bytes += p.scanned.bytes;
      hits += p.hits.length;
      cursor = p.cursor;
      pages++;
    } while (cursor);
    return { ms: performance.now() - t, bytes, hits, pages };
  };
  const homes: string[] = [];
  for (const h of scanRoots(c.homes)) {
    if (await Deno.stat(h).then(() => true, () => false)) homes.push(h);
  }
  await timeRg(homes, NEEDLES.none); // page cache warm-up for both
  await full(NEEDLES.none);
  const nohit = await full(NEEDLES.none);
  const rare = await full(NEEDLES.rare);
  const t = performance.now();
  const first = await deepSearch(deps, { q: NEEDLES.mid, limit: 100, maxMs: 1000 });
  const firstPageMs = performance.now() - t;
  const rgNohit = await timeRg(homes, NEEDLES.none);
  const rgRare = await timeRg(homes, NEEDLES.rare);
  return {
    nohit,
    rare,
    firstPage: { ms: firstPageMs, hits: first.hits.length },
    rg: rgNohit === null ? null : { nohitMs: rgNohit, rareMs: rgRare },
    rss: memory(),
  };
}
