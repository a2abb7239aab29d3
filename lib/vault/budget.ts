/**
 * The vault's disk budget (INTENDANT_VAULT_MAX_BYTES): which kept versions go when the
 * vault's objects outgrow it. Pure over listed catalogs; the Vault applies the plan.
 *
 * The order, oldest first within each step:
 *  1. superseded versions — the older states of a file whose newer version is kept (a
 *     rewrite's predecessors), by when they last changed;
 *  2. gone files — copies whose original its agent deleted, so the vault holds the only
 *     one, by when their last version last changed.
 * Never the last version of a file that is still in its place: it would be kept again by
 * the next sweep (the original is there), so pruning it frees nothing for long. When
 * steps 1 and 2 are exhausted and the vault is still over, the plan says so (`over`) and
 * new sessions are still kept: losing a new transcript to protect an old one is never
 * the trade a user asked for.
 * Bytes are the objects' compressed sizes, each object counted once however many
 * versions share it (vaultStatus counts the same way), so a version whose chunks another
 * version also names frees nothing until that one goes too.
 */
import { type Catalog, latest, type Version } from "./catalog.ts";

/** One version the plan removes: catalog `key`, file `path`, the version itself. */
export interface PruneStep {
  key: string;
  path: string;
  version: Version;
  /** "superseded" (step 1) or "gone" (step 2). */
  why: "superseded" | "gone";
}

/** What pruning to `maxBytes` takes away. */
export interface PrunePlan {
  /** Object bytes before and after the plan. */
  before: number;
  after: number;
  steps: PruneStep[];
  /** Objects no version names once the plan is applied (the Vault removes them). */
  orphans: string[];
  /** Still over the budget with only current copies left. */
  over: boolean;
}

/** The plan that brings the vault's objects to at most `maxBytes` (see the header). */
export function planPrune(catalogs: readonly Catalog[], maxBytes: number): PrunePlan {
  const refs = new Map<string, { n: number; z: number }>();
  for (const c of catalogs) {
    for (const f of c.files) {
      for (const v of f.versions) {
        for (const k of v.chunks) {
          const r = refs.get(k.o);
          if (r) r.n++;
          else refs.set(k.o, { n: 1, z: k.z });
        }
      }
    }
  }
  let used = 0;
  for (const r of refs.values()) used += r.z;
  const plan: PrunePlan = { before: used, after: used, steps: [], orphans: [], over: false };
  if (used <= maxBytes) return plan;

  const superseded: PruneStep[] = [];
  const gone: { steps: PruneStep[]; at: number }[] = [];
  for (const c of catalogs) {
    for (const f of c.files) {
      const last = latest(f);
      for (const v of f.versions) {
        if (v !== last) {
          superseded.push({ key: c.key, path: f.path, version: v, why: "superseded" });
        }
      }
      if (f.gone_ms !== null) {
        gone.push({
          at: last.changed_ms,
          // The whole file goes: its older versions too (those step 1 left).
          steps: f.versions.map((v) => ({ key: c.key, path: f.path, version: v, why: "gone" })),
        });
      }
    }
  }
  superseded.sort((a, b) => a.version.changed_ms - b.version.changed_ms);
  gone.sort((a, b) => a.at - b.at);

  const taken = new Set<Version>();
  const take = (s: PruneStep) => {
    if (taken.has(s.version)) return;
    taken.add(s.version);
    plan.steps.push(s);
    for (const k of s.version.chunks) {
      const r = refs.get(k.o)!;
      if (--r.n === 0) {
        used -= r.z;
        plan.orphans.push(k.o);
      }
    }
  };
  for (const s of superseded) {
    if (used <= maxBytes) break;
    take(s);
  }
  for (const g of gone) {
    if (used <= maxBytes) break;
    g.steps.forEach(take);
  }
  plan.after = used;
  plan.over = used > maxBytes;
  return plan;
}

/** Catalogs with the plan's versions removed; files left with none, and catalogs left with no file, drop out. */
export function applyPlan(
  catalogs: readonly Catalog[],
  plan: PrunePlan,
): { changed: Catalog[]; emptied: Catalog[] } {
  const drop = new Set(plan.steps.map((s) => s.version));
  const keys = new Set(plan.steps.map((s) => s.key));
  const changed: Catalog[] = [];
  const emptied: Catalog[] = [];
  for (const c of catalogs) {
    if (!keys.has(c.key)) continue;
    const files = c.files
      .map((f) => ({ ...f, versions: f.versions.filter((v) => !drop.has(v)) }))
      .filter((f) => f.versions.length > 0);
    if (files.length === 0) emptied.push(c);
    else changed.push({ ...c, files });
  }
  return { changed, emptied };
}
