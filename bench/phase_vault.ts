/**
 * The `vault` phase (issue 29): what keeping every transcript costs.
 *  - alone: one cold Vault.keep of every unit the file sources' discovery lists (the
 *    vault is empty), in one thread: time, MB/s of originals, and the bytes kept against
 *    the originals and against the whole corpus (its SQLite databases are not kept);
 *  - during a backfill: a fresh store and a fresh vault, one cold sweep with the Keeper
 *    fed by the sweep's listing exactly as the daemon wires it, timed until both the
 *    sweep and the keeping are done. The report divides it by the `backfill` phase of the
 *    same run (the same sweep without a vault).
 */
import { buildExtractors } from "../lib/message_search/mod.ts";
import {
  Keeper,
  type KeepUnit,
  listenerOf,
  Vault,
  vaultKeeps,
  vaultStatus,
} from "../lib/vault/mod.ts";
import type { Corpus } from "./corpus/mod.ts";
import { memory, rootsOf, wire } from "./harness.ts";

/** The phase's figures (see the header). */
export async function vaultPhase(c: Corpus, storeRoot: string): Promise<Record<string, unknown>> {
  const roots = rootsOf(c);
  const units: KeepUnit[] = [];
  for (const ex of buildExtractors(roots)) {
    if (!vaultKeeps(ex.source)) continue;
    for (const u of (await ex.discover()).units) units.push(u);
  }
  const aloneDir = `${storeRoot}-vault-alone`;
  await Deno.remove(aloneDir, { recursive: true }).catch(() => {});
  const vault = new Vault({ dir: aloneDir });
  let t = performance.now();
  const r = await vault.keep(units);
  const keepMs = performance.now() - t;
  const st = vaultStatus((await vault.list()).catalogs).total;
  await Deno.remove(aloneDir, { recursive: true }).catch(() => {});

  // The same keeping during a cold backfill, as the daemon wires it.
  await Deno.remove(storeRoot, { recursive: true }).catch(() => {});
  const fillDir = `${storeRoot}-vault-fill`;
  await Deno.remove(fillDir, { recursive: true }).catch(() => {});
  const keeper = new Keeper({ vault: new Vault({ dir: fillDir }), keeps: vaultKeeps });
  const w = await wire(c, storeRoot, Date.now, roots, { onListed: listenerOf(keeper) });
  t = performance.now();
  await w.indexer.sweep();
  const sweepMs = performance.now() - t;
  await keeper.settled();
  const totalMs = performance.now() - t;
  const fill = vaultStatus((await new Vault({ dir: fillDir }).list()).catalogs).total;
  await Deno.remove(fillDir, { recursive: true }).catch(() => {});
  return {
    units: units.length,
    errors: r.errors.slice(0, 5),
    keepMs,
    sessions: st.sessions,
    files: st.files,
    bytesKept: st.bytes_kept,
    bytesOriginal: st.bytes_original,
    corpusBytes: c.bytes,
    withBackfill: { sweepMs, totalMs, sessions: fill.sessions, bytesKept: fill.bytes_kept },
    peakRss: memory().peak,
  };
}
