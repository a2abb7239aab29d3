/**
 * The vault as a process wires it: a Keeper over `<state-root>/vault` that keeps the
 * sources whose row says their sessions are files (SOURCE_TABLE keep.kind "files") and,
 * as exports of their rows (db_export.ts), those whose sessions are rows of a database
 * (keep.kind "database"), or null when INTENDANT_VAULT=off. Exports read the store
 * through the index's SQLite snapshot directory (`<cache root>/sqlite-snapshots`). Only the processes that sweep under the index's writer
 * lock with write access to the state root wire one: the daemon and `intendant index`
 * (MCP and one-shot searches leave keeping to them).
 */
import { join } from "node:path";
import type { ResolvedConfig } from "../config.ts";
import {
  resolveSourceRoots,
  type SessionUnit,
  type Source,
  SOURCE_TABLE,
  SQLITE_SNAPSHOT_DIR,
} from "../message_search/mod.ts";
import { keptUnitOf } from "./db_export.ts";
import { type Catalog, latest } from "./catalog.ts";
import type { KeptCopy } from "../catalog/mod.ts";
import { type RestoredFile, restoreSession } from "./restore.ts";
import { Keeper } from "./keeper.ts";
import { type BudgetRecord, Vault } from "./vault.ts";
import { type VaultStatus, vaultStatus } from "./status.ts";
import { type CleanupRisk, readCleanupRisks } from "./cleanup_risk.ts";

/** True when the vault keeps `source`'s sessions (as files, or as exports of their rows). */
export function vaultKeeps(source: string): boolean {
  const kind = SOURCE_TABLE[source as Source]?.keep.kind;
  return kind === "files" || kind === "database";
}

/** The Keeper of `cfg`, or null when the vault is off. */
export function keeperOf(
  cfg: ResolvedConfig,
  o: { logger?: (line: string) => void; now?: () => number } = {},
): Keeper | null {
  if (!cfg.vault.enabled) return null;
  const snapshotDir = join(cfg.messageSearch.cacheRoot, SQLITE_SNAPSHOT_DIR);
  return new Keeper({
    vault: new Vault({ dir: cfg.vault.dir, now: o.now }),
    keeps: vaultKeeps,
    unitOf: (u) => keptUnitOf(u, { snapshotDir }),
    maxBytes: cfg.vault.maxBytes,
    logger: o.logger,
  });
}

/** The Indexer's onListed callback feeding `keeper`. */
export function listenerOf(
  keeper: Keeper | null,
): ((l: { units: readonly SessionUnit[]; gone: readonly string[] }) => void) | undefined {
  if (!keeper) return undefined;
  return (l) =>
    keeper.offer(
      l.units.map((u) => ({
        key: u.key,
        source: u.source,
        sessionId: u.sessionId,
        files: u.files,
      })),
      l.gone,
    );
}

/**
 * The agents' own cleanups as `cfg` finds them, against what its vault holds; with the
 * vault off the line says nothing is kept.
 */
export async function cleanupRisksOf(
  cfg: ResolvedConfig,
  o: { now?: number; catalogs?: readonly Catalog[] } = {},
): Promise<CleanupRisk[]> {
  const catalogs = o.catalogs ??
    (cfg.vault.enabled ? (await new Vault({ dir: cfg.vault.dir }).list()).catalogs : []);
  const risks = await readCleanupRisks({
    claudeHomes: cfg.sourceHomes["claude-code"].homes.map((h) => h.path),
    catalogs,
    now: o.now,
  });
  if (cfg.vault.enabled) return risks;
  return risks.map((r) => ({
    ...r,
    line: `${r.line.split(";")[0]}; the vault is off (INTENDANT_VAULT=off): nothing is kept`,
  }));
}

/**
 * Restores the session `query` names from `cfg`'s vault (see restore.ts): into the
 * source's current homes, or under `to`. One door for the CLI and the API.
 */
export async function restoreKept(
  cfg: ResolvedConfig,
  o: { query: string; to: string | null },
): Promise<{ catalog: Catalog; files: RestoredFile[] }> {
  const vault = new Vault({ dir: cfg.vault.dir });
  const catalog = await vault.find(o.query);
  const homes = (await resolveSourceRoots(cfg)).homes
    .filter((h) => h.source === catalog.source).map((h) => h.path);
  const files = await restoreSession({ vault, catalog, to: o.to, homes });
  return { catalog, files };
}

/** What `intendant vault status --json` and `GET /api/vault` answer. */
export interface VaultReport extends VaultStatus {
  enabled: boolean;
  dir: string;
  budget: { max_bytes: number; used_bytes: number; last: BudgetRecord | null };
  risks: CleanupRisk[];
}

/** The vault of `cfg`, its budget and the agents' cleanups, read now. */
export async function vaultReport(cfg: ResolvedConfig): Promise<VaultReport> {
  const vault = new Vault({ dir: cfg.vault.dir });
  const { catalogs, damaged } = await vault.list();
  const st = vaultStatus(catalogs, damaged);
  const budget = {
    max_bytes: cfg.vault.maxBytes,
    used_bytes: st.total.bytes_kept,
    last: await vault.budget(),
  };
  return {
    enabled: cfg.vault.enabled,
    dir: cfg.vault.dir,
    ...st,
    budget,
    risks: await cleanupRisksOf(cfg, { catalogs }),
  };
}

/**
 * The reader the session detail uses for a gone session's tool calls: the last kept
 * version of `path` in session `key`'s catalog, whole, or null (not kept, or larger than
 * `maxBytes`). Every chunk is verified against its name (objects.ts) on the way.
 */
export function keptCopyOf(cfg: ResolvedConfig): KeptCopy {
  const vault = new Vault({ dir: cfg.vault.dir });
  return async ({ key, path, maxBytes }) => {
    const c = await vault.read(key);
    const f = c?.files.find((x) => x.path === path);
    if (!f) return null;
    const v = latest(f);
    if (v.size > maxBytes) return null;
    const out = new Uint8Array(v.size);
    let at = 0;
    for await (const b of vault.bytesOf(v)) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  };
}
