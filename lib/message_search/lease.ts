/**
 * Custody of leased agent homes. A lease materializes a private CODEX_HOME /
 * CLAUDE_CONFIG_DIR / KIMI_CODE_HOME / PI_CODING_AGENT_DIR holding a borrowed secret and the
 * agent's transcripts. While live it is registered under `leased-active/` and swept like
 * any home. On cleanup the transcript subdirectories are RENAMED into `staging/` (same
 * volume, O(1)) and the auth root is deleted immediately: secret deletion never waits on
 * indexing, and there is deliberately no copy fallback. A failed rename leaves a marker
 * and deletion proceeds anyway. The indexer drains a staging entry once every transcript
 * inside it has been published.
 */
import { join } from "node:path";
import { ensurePrivateDirSync, removeIfExists, writeFileAtomic } from "../durable/mod.ts";
import { type ExternalSource, LEASED_ACTIVE_DIR, STAGING_DIR } from "./roots.ts";
import { SOURCE_TABLE } from "./source_table.ts";

/** Transcript subdirectories of a home, per source: the source table's rows. */
export const TRANSCRIPT_SUBDIRS: Readonly<Record<ExternalSource, string[]>> = Object.fromEntries(
  Object.values(SOURCE_TABLE).filter((r) => r.id !== "intendant").map((r) => [
    r.id,
    r.transcriptSubdirs,
  ]),
) as Record<ExternalSource, string[]>;

const LEASE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function checkLeaseId(id: string): void {
  if (!LEASE_ID.test(id)) throw new RangeError(`Invalid lease id "${id.slice(0, 80)}"`);
}

/** Registers a live leased home so sweeps index it during the lease. */
export async function registerLeasedHome(
  cacheRoot: string,
  d: { leaseId: string; source: ExternalSource; home: string },
): Promise<void> {
  checkLeaseId(d.leaseId);
  const dir = ensurePrivateDirSync(join(cacheRoot, LEASED_ACTIVE_DIR));
  await writeFileAtomic(
    join(dir, `${d.leaseId}.json`),
    JSON.stringify({
      source: d.source,
      home: d.home,
      lease_id: d.leaseId,
      created_at_ms: Date.now(),
    }) + "\n",
  );
}

/** What a release did. */
export interface ReleaseReport {
  staged: string[];
  stagingFailures: string[];
  stagingEntry: string;
  secretDeleted: boolean;
}

/**
 * Ends a lease: transcripts renamed into `staging/<leaseId>-<ms>/`, the home (with its
 * secret) deleted, the registry entry removed. Never throws for a staging failure.
 */
export async function releaseLeasedHome(
  cacheRoot: string,
  d: { leaseId: string; source: ExternalSource; home: string },
): Promise<ReleaseReport> {
  checkLeaseId(d.leaseId);
  const entry = join(cacheRoot, STAGING_DIR, `${d.leaseId}-${Date.now()}`);
  const staged: string[] = [];
  const failures: string[] = [];
  try {
    ensurePrivateDirSync(entry);
    await writeFileAtomic(
      join(entry, "lease.json"),
      JSON.stringify({ source: d.source, lease_id: d.leaseId }) + "\n",
    );
    for (const sub of TRANSCRIPT_SUBDIRS[d.source]) {
      try {
        await Deno.rename(join(d.home, sub), join(entry, sub));
        staged.push(sub);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) continue;
        failures.push(`${sub}: ${(err as Error).message}`);
      }
    }
  } catch (err) {
    failures.push(`staging entry: ${(err as Error).message}`);
  }
  if (failures.length > 0) {
    // A marker, not a blocker: the secret still goes now.
    await writeFileAtomic(
      join(cacheRoot, STAGING_DIR, `${d.leaseId}.staging-failed`),
      failures.join("\n") + "\n",
    ).catch((err) => {
      failures.push(`marker: ${(err as Error).message}`);
    });
  }
  let secretDeleted = false;
  try {
    await Deno.remove(d.home, { recursive: true });
    secretDeleted = true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) secretDeleted = true;
    else failures.push(`delete home: ${(err as Error).message}`);
  }
  await removeIfExists(join(cacheRoot, LEASED_ACTIVE_DIR, `${d.leaseId}.json`));
  return { staged, stagingFailures: failures, stagingEntry: entry, secretDeleted };
}
