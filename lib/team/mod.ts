/**
 * lib/team: team search across machines on a shared PostgreSQL (issue 19). This door is
 * the subsystem's only entry point; code outside lib/team imports from here.
 *
 * Design (decisions the issue leaves open are written in each module's header):
 *  - The local file store stays the source of truth for its own machine; PostgreSQL is a
 *    derived, rebuildable replica every machine publishes its own rows to.
 *  - Configuration: the team URL (`--team URL` / INTENDANT_TEAM_URL, team_url.ts), its
 *    password (URL, PGPASSWORD or the libpq password file, pgpass.ts) and the machine name
 *    (INTENDANT_MACHINE or the hostname, machine_name.ts). lib/config.ts reads the
 *    environment, the hostname and the password file; everything here is pure.
 *  - Secrets: the password never appears in a message, a log line or a printed URL; use
 *    `TeamUrl.redacted` wherever the URL is shown.
 * Map: connect.ts (open + checks), schema_v1.ts / migrate.ts (the schema and its versions),
 * machine_role.ts (a role per machine), record_row.ts (a record as a row), publish*.ts (the
 * publisher: diff, one transaction per batch), query_sql.ts / team_plan.ts /
 * team_render.ts / team_search.ts (the query engine), remote_session.ts (a remote
 * session's prose), team_status.ts (status, retention), team_handle.ts / team_sync.ts /
 * team_service.ts (what a running daemon does with all of it).
 */
export type { MachineNameSource } from "./machine_name.ts";
export { MACHINE_NAME_MAX, machineName, resolveMachineName } from "./machine_name.ts";
export type { PgpassFile, PgpassLookup, PgpassQuery } from "./pgpass.ts";
export { lookupPgpass } from "./pgpass.ts";
export type { PasswordSource, SslMode, TeamUrl, TeamUrlOptions } from "./team_url.ts";
export {
  DEFAULT_PG_PORT,
  DEFAULT_SSL_MODE,
  parseTeamUrl,
  SSL_MODES,
  SUPPORTED_PARAMS,
} from "./team_url.ts";
export type { OpenTeamDbOptions, TeamDb, TeamDbErrorKind, TeamSql } from "./connect.ts";
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  MIN_SERVER_VERSION_NUM,
  openTeamDb,
  PLAN_CACHE_MODE,
  TeamDbError,
} from "./connect.ts";
export type { MigrateReport, Migration } from "./migrate.ts";
export {
  migrateTeamDb,
  MIGRATIONS,
  readSchemaVersion,
  requireCurrentSchema,
  TEAM_SCHEMA_VERSION,
} from "./migrate.ts";
export { PUBLISHER_GROUP_ROLE, TEAM_SCHEMA } from "./schema_v1.ts";
export type { AddedMachine } from "./machine_role.ts";
export { addMachine, ensureMachine, machineRoleName } from "./machine_role.ts";
export type { MachineStatus, TeamStatus } from "./team_status.ts";
export {
  parseRetention,
  readTeamStatus,
  RETENTION_DAYS_MAX,
  setRetentionDays,
} from "./team_status.ts";
export type { RecordRow } from "./record_row.ts";
export { pgText, RECORD_COLUMNS, restoreText, toRecordRow } from "./record_row.ts";
export type {
  TeamSearch,
  TeamSearchGroup,
  TeamSearchOptions,
  TeamSearchRequest,
  TeamSearchResponse,
} from "./team_search.ts";
export { createTeamSearch } from "./team_search.ts";
export { COMMON_PROBE_CAP } from "./team_plan.ts";
export type { RemoteRecord, RemoteSession, RemoteSessionMeta } from "./remote_session.ts";
export { loadRemoteSession, REMOTE_PAGE_DEFAULT, REMOTE_PAGE_MAX } from "./remote_session.ts";
export type { TeamHandle, TeamHandleOptions } from "./team_handle.ts";
export { createTeamHandle, TEAM_REOPEN_MS } from "./team_handle.ts";
export type { TeamSync, TeamSyncOptions, TeamSyncStatus } from "./team_sync.ts";
export { startTeamSync, TEAM_MAX_BACKOFF_MS, TEAM_POLL_MS } from "./team_sync.ts";
export type { TeamService, TeamServiceOptions, TeamServiceStatus } from "./team_service.ts";
export { startTeamService } from "./team_service.ts";
export type { Publisher, PublisherOptions, PublishReport } from "./publish.ts";
export { createPublisher, DEFAULT_BATCH_BYTES, DEFAULT_BATCH_RECORDS } from "./publish.ts";
export { connectionLostReason, isClientFault } from "./connection_faults.ts";
