/**
 * Quarantine of damaged shards (reliability-plan F8): turning readers' damage reports (and
 * the startup check's findings) into "quarantine" updates published through the store's
 * ordinary publish path (store/types.ts has the entry's quarantined shape). A report can
 * be stale — the shard re-derived meanwhile, often under the very same content-derived
 * name, or compacted or deleted — and quarantining a healthy shard would serve less, not
 * more: a shard is quarantined only while its entry still names the reported generation
 * AND that file still fails to load. The update's base is the generations list read here,
 * so the publish rejects it if the entry moves before the lock is held.
 * Damage is rarely alone, and readers no longer meet all of it: a query rules sessions out
 * by their summaries (the store's summaries pack) without opening their files. So the
 * first confirmed damage starts a check of every generation (store.verifyAll, what the
 * startup check runs) and every damaged shard it finds is quarantined in the same publish:
 * one repair sweep re-derives all of it.
 * Loading a generation checks every checksum of its bytes (store/segment_view.ts): a
 * generation is damaged when its load fails or it holds another session's key (a file
 * swapped in under its name: what the scan reports too).
 * Errors: I/O errors other than a missing or corrupt generation propagate.
 */
import { NotFoundError } from "../errors.ts";
import { CorruptGenerationError, type Store } from "./store/mod.ts";
import type { ShardDamage, ShardUpdate } from "./store/types.ts";

/** True when generation `g` of session `key` is damaged (see the header) right now. */
export async function isDamaged(store: Store, g: string, key: string): Promise<boolean> {
  try {
    return (await store.loadSegment(g)).key !== key;
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
      if (!(await isDamaged(store, g, key))) continue;
      found.push({ key, generation: g });
      break;
    }
  }
  return found;
}

/**
 * Publishes the quarantine of every still-damaged shard in `found` and, once one is
 * confirmed, of every other damaged shard of the store (see the header); the keys
 * quarantined.
 */
export async function quarantineDamaged(
  store: Store,
  found: readonly ShardDamage[],
): Promise<string[]> {
  if (found.length === 0) return [];
  const m = await store.readManifest();
  const updates = new Map<string, ShardUpdate>();
  const confirm = async (list: readonly ShardDamage[]) => {
    for (const f of list) {
      const e = Object.hasOwn(m.sessions, f.key) ? m.sessions[f.key] : undefined;
      if (!e || e.quarantined_at_ms !== undefined || !e.generations.includes(f.generation)) {
        continue;
      }
      if (updates.has(f.key) || !(await isDamaged(store, f.generation, f.key))) continue;
      updates.set(f.key, {
        kind: "quarantine",
        key: f.key,
        source: e.source,
        session_id: e.session_id,
        base: e.generations,
      });
    }
  };
  await confirm(found);
  if (updates.size === 0) return [];
  const others = (await store.verifyAll()).filter((k) => !updates.has(k));
  await confirm(await findDamage(store, others));
  return (await store.publish([...updates.values()])).accepted;
}
