/**
 * Versioned schema migrations of the team database. `intendant.schema_version` holds one
 * row per applied migration; this binary knows versions 1..TEAM_SCHEMA_VERSION.
 * Invariants:
 *  - each migration runs in its own transaction together with its version row, under a
 *    transaction-scoped advisory lock, so two `team init` at once apply it exactly once and
 *    a failed migration leaves the previous version intact;
 *  - a database whose schema is NEWER than this binary knows is refused (TeamDbError
 *    "schema") before anything is written: an old binary must not publish rows a newer
 *    schema would misread;
 *  - readers and publishers call requireCurrentSchema: an older schema says "run
 *    intendant team init", a newer one "upgrade intendant".
 * The publisher group role (schema_v1.ts) is created and granted after the migrations when
 * the connecting role may create roles; `publisherRole` says what happened.
 */
import type { TeamDb, TeamSql } from "./connect.ts";
import { TeamDbError } from "./connect.ts";
import {
  PUBLISHER_GRANTS_V1_SQL,
  PUBLISHER_GROUP_ROLE,
  SCHEMA_V1_SQL,
  TEAM_SCHEMA,
} from "./schema_v1.ts";
import { PUBLISHER_GRANTS_SQL, SCHEMA_V2_SQL } from "./schema_v2.ts";

/** The newest schema version this binary knows. */
export const TEAM_SCHEMA_VERSION = 2;

/** One versioned migration. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** The publisher group's privileges once this version is reached. */
  grants: string;
}

/** Every migration, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "machines, sessions, records, tombstones, settings",
    sql: SCHEMA_V1_SQL,
    grants: PUBLISHER_GRANTS_V1_SQL,
  },
  {
    version: 2,
    name: "shared state through commit_batch; machines registered by the owner",
    sql: SCHEMA_V2_SQL,
    grants: PUBLISHER_GRANTS_SQL,
  },
];

/** What migrateTeamDb did. */
export interface MigrateReport {
  /** Schema version found (0 = none). */
  from: number;
  /** Schema version now. */
  to: number;
  /** Versions applied by this call (empty when already current). */
  applied: number[];
  /** The publisher group role: created now, already there, or not creatable by this role. */
  publisherRole: "created" | "exists" | "no_privilege";
}

/** Advisory lock key of the migration step ("intendant" in ASCII, as a bigint). */
const MIGRATE_LOCK_KEY = 0x696e74656e64616en;

const VERSION_TABLE_SQL = `
CREATE SCHEMA IF NOT EXISTS ${TEAM_SCHEMA};
CREATE TABLE IF NOT EXISTS ${TEAM_SCHEMA}.schema_version (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  applied_by text NOT NULL DEFAULT current_user,
  binary_version text NOT NULL
);`;

/** The applied schema version, 0 when the database has none. */
export async function readSchemaVersion(sql: TeamSql): Promise<number> {
  const [t] = await sql<{ present: boolean }[]>`
    SELECT to_regclass(${TEAM_SCHEMA + ".schema_version"}) IS NOT NULL AS present`;
  if (!t!.present) return 0;
  const [row] = await sql.unsafe<{ v: number | null }[]>(
    `SELECT max(version) AS v FROM ${TEAM_SCHEMA}.schema_version`,
  );
  return row?.v ?? 0;
}

function newerError(found: number): TeamDbError {
  return new TeamDbError(
    "schema",
    `The team database has schema version ${found}, newer than this intendant knows ` +
      `(${TEAM_SCHEMA_VERSION}): upgrade intendant on this machine`,
  );
}

/** Throws TeamDbError "schema" unless the database is at exactly TEAM_SCHEMA_VERSION. */
export async function requireCurrentSchema(db: TeamDb): Promise<void> {
  const v = await readSchemaVersion(db.sql);
  if (v > TEAM_SCHEMA_VERSION) throw newerError(v);
  if (v < TEAM_SCHEMA_VERSION) {
    throw new TeamDbError(
      "schema",
      v === 0
        ? "The team database has no intendant schema yet: run `intendant team init --team URL`"
        : `The team database has schema version ${v}, older than this intendant's ` +
          `${TEAM_SCHEMA_VERSION}: run \`intendant team init --team URL\` to migrate it`,
    );
  }
}

/** Creates or migrates the schema to TEAM_SCHEMA_VERSION (idempotent). */
export async function migrateTeamDb(
  db: TeamDb,
  o: { binaryVersion: string; /** Stop at this version (tests of an upgrade). */ upTo?: number },
): Promise<MigrateReport> {
  const from = await readSchemaVersion(db.sql);
  if (from > TEAM_SCHEMA_VERSION) throw newerError(from);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= from || m.version > (o.upTo ?? TEAM_SCHEMA_VERSION)) continue;
    const did = await db.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK_KEY.toString()}::bigint)`;
      await tx.unsafe(VERSION_TABLE_SQL).simple();
      const [row] = await tx.unsafe<{ v: number | null }[]>(
        `SELECT max(version) AS v FROM ${TEAM_SCHEMA}.schema_version`,
      );
      const now = row?.v ?? 0;
      if (now > TEAM_SCHEMA_VERSION) throw newerError(now);
      // Another init applied it while we waited for the lock.
      if (now >= m.version) return false;
      await tx.unsafe(m.sql).simple();
      await tx.unsafe(
        `INSERT INTO ${TEAM_SCHEMA}.schema_version (version, name, binary_version)
         VALUES ($1, $2, $3)`,
        [m.version, m.name, o.binaryVersion],
      );
      return true;
    }).catch((e: unknown) => {
      throw migrationError(m, e);
    });
    if (did) applied.push(m.version);
  }
  const to = await readSchemaVersion(db.sql);
  const grants = MIGRATIONS.find((m) => m.version === to)?.grants ?? PUBLISHER_GRANTS_SQL;
  return { from, to, applied, publisherRole: await ensurePublisherRole(db.sql, grants) };
}

/** Creates the publisher group role and grants it the table privileges, when allowed. */
async function ensurePublisherRole(
  sql: TeamSql,
  grants: string,
): Promise<MigrateReport["publisherRole"]> {
  const [me] = await sql<{ can: boolean; exists: boolean }[]>`
    SELECT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) AS can,
           EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${PUBLISHER_GROUP_ROLE}) AS exists`;
  if (!me!.exists && !me!.can) return "no_privilege";
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK_KEY.toString()}::bigint)`;
    const [r] = await tx<{ exists: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${PUBLISHER_GROUP_ROLE}) AS exists`;
    if (!r!.exists) await tx.unsafe(`CREATE ROLE ${PUBLISHER_GROUP_ROLE} NOLOGIN`);
    await tx.unsafe(grants).simple();
  });
  return me!.exists ? "exists" : "created";
}

/** One clear TeamDbError for a failed migration (the server's reason, never a password). */
function migrationError(m: Migration, e: unknown): TeamDbError {
  if (e instanceof TeamDbError) return e;
  const code = (e as { code?: unknown })?.code;
  const msg = e instanceof Error ? e.message : String(e);
  const kind = code === "42501" ? "privilege" : "schema";
  const hint = code === "42501"
    ? " (the role needs CREATE on the database; run team init as the database owner)"
    : "";
  return new TeamDbError(
    kind,
    `Cannot apply team schema migration ${m.version} (${m.name}): ${msg}${hint}`,
  );
}
