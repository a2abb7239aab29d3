/**
 * Quarantine of damaged shards (reliability-plan F8): turning readers' damage reports (and
 * the startup check's findings) into "quarantine" updates published through the store's
 * ordinary publish path (store/types.ts has the entry's quarantined shape). A report can
 * be stale — the shard re-derived meanwhile, often under the very same content-derived
 * name, or compacted or deleted — and quarantining a healthy shard would serve less, not
 * more: a shard is quarantined only while its entry still names the reported generation
 * AND that file still fails to load. The update's base is the generations list read here,
 * so the publish rejects it if the entry moves before the lock is held.
 * Errors: I/O errors other than a missing or corrupt generation propagate.
 */
import { NotFoundError } from "../errors.ts";
import { CorruptGenerationError, type Store } from "./store/mod.ts";
import type { ShardDamage, ShardUpdate } from "./store/types.ts";

/** True when generation `g` fails to load as damaged (corrupt or missing) right now. */
export async function isDamaged(store: Store, g: string): Promise<boolean> {
  try {
    await store.loadSegment(g);
    return false;
  } catch (err) {
    if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return true;
    throw err;
  }
}

/** The damaged generation of each of `keys` (verifyAll names keys only). */
export async function findDamage(store: Store, keys: readonly string[]): Promise<ShardDamage[]> {
  const m = await store.readManifest();
  const found: ShardDamage[] = [];
  for (const key of keys) {
    for (const g of m.sessions[key]?.generations ?? []) {
      if (!(await isDamaged(store, g))) continue;
      found.push({ key, generation: g });
      break;
    }
  }
  return found;
}

/** Publishes the quarantine of every still-damaged shard in `found`; the keys quarantined. */
export async function quarantineDamaged(
  store: Store,
  found: readonly ShardDamage[],
): Promise<string[]> {
  if (found.length === 0) return [];
  const m = await store.readManifest();
  const updates: ShardUpdate[] = [];
  for (const f of found) {
    const e = Object.hasOwn(m.sessions, f.key) ? m.sessions[f.key] : undefined;
    if (!e || e.quarantined_at_ms !== undefined || !e.generations.includes(f.generation)) {
      continue;
    }
    if (!(await isDamaged(store, f.generation))) continue;
    updates.push({
      kind: "quarantine",
      key: f.key,
      source: e.source,
      session_id: e.session_id,
      base: e.generations,
    });
  }
  if (updates.length === 0) return [];
  return (await store.publish(updates)).accepted;
}
