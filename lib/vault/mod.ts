/**
 * The transcript vault (issue 29): compressed, content-addressed copies of the agents'
 * transcripts under `<state-root>/vault/`, kept on first sight and on every change, so
 * history outlives the agents' own cleanup and can be written back where the agent reads
 * it. The only public door of lib/vault/.
 */
export { Vault } from "./vault.ts";
export type {
  BudgetRecord,
  CatalogList,
  FileProducer,
  KeepFileInput,
  KeepReport,
  KeepUnit,
  PruneReport,
  VaultOptions,
} from "./vault.ts";
export { planPrune } from "./budget.ts";
export type { PrunePlan, PruneStep } from "./budget.ts";
export { Keeper } from "./keeper.ts";
export type { KeeperOptions } from "./keeper.ts";
export { goneAt, latest, sessionGone } from "./catalog.ts";
export type { Catalog, Chunk, KeptFile, Version } from "./catalog.ts";
export { restoreSession, restoreTargets } from "./restore.ts";
export type { RestoredFile, RestoreOptions, RestoreTarget } from "./restore.ts";
export {
  EXPORT_ROLE,
  exportFileName,
  exportPathOf,
  exportProducerOf,
  isExportFile,
  keptUnitOf,
} from "./db_export.ts";
export { vaultStatus } from "./status.ts";
export type { VaultFigures, VaultStatus } from "./status.ts";
export { DamagedObjectError } from "./objects.ts";
export {
  cleanupRisksOf,
  keeperOf,
  keptCopyOf,
  listenerOf,
  restoreKept,
  vaultKeeps,
  vaultReport,
} from "./keeper_of.ts";
export type { VaultReport } from "./keeper_of.ts";
export {
  CLAUDE_CLEANUP_DEFAULT_DAYS,
  cleanupPeriodOf,
  cleanupRiskOf,
  DUE_WITHIN_DAYS,
  readCleanupRisks,
} from "./cleanup_risk.ts";
export type { CleanupRisk } from "./cleanup_risk.ts";
