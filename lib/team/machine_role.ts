/**
 * Machines and their database roles. Each machine writes only its own rows: `team
 * add-machine NAME` (run by the schema owner or a role with CREATEROLE) creates a LOGIN
 * role named by machineRoleName (identifier-safe, injective, ≤ 63 bytes),
 * makes it a member of the publisher group and names it as the machine's writer in
 * `intendant.machines`. Row-level security then lets that role write rows of that machine
 * only (schema_v1.ts).
 * A publisher registers its machine on first publish when no row exists yet (ensureMachine):
 * the row's role is the connecting role, so a machine role can claim a name nobody has,
 * never take over a name bound to another role (the insert is refused by RLS, or the row
 * exists with another role: a clear TeamDbError "privilege").
 * Passwords: generated here (20 random bytes, hex: safe in a URL and a pgpass line) when the caller gives none; the
 * caller shows it once. Never logged.
 */
import type { TeamSql } from "./connect.ts";
import { TeamDbError } from "./connect.ts";
import { PUBLISHER_GROUP_ROLE, TEAM_SCHEMA } from "./schema_v1.ts";

/** Longest machine-name part kept verbatim in a role name (the rest is a hash). */
const ROLE_NAME_PART_MAX = 40;

/**
 * The database role of machine `name`: `intendant_m_<name>` when the name is lowercase and
 * at most ROLE_NAME_PART_MAX characters, else `intendant_m_<first 40, lowercased>_<fnv32 of
 * the exact name>`. Injective over valid machine names (case is kept in machine names, and
 * "Box" and "box" must not share a role) and always within PostgreSQL's 63-byte identifier
 * limit (12 + 40 + 1 + 8 = 61 bytes of ASCII), which the server would otherwise truncate
 * silently — leaving a machines row naming a role that does not exist.
 */
export function machineRoleName(name: string): string {
  const lower = name.toLowerCase();
  if (lower === name && name.length <= ROLE_NAME_PART_MAX) return `intendant_m_${name}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `intendant_m_${lower.slice(0, ROLE_NAME_PART_MAX)}_${h.toString(16).padStart(8, "0")}`;
}

/** What addMachine did. */
export interface AddedMachine {
  machine: string;
  role: string;
  /** The role's password (generated unless given). */
  password: string;
  /** False when the role existed already (its password was reset). */
  createdRole: boolean;
}

/** Creates (or resets) machine `name`'s role and binds the machine to it. */
export async function addMachine(
  sql: TeamSql,
  name: string,
  o: { password?: string } = {},
): Promise<AddedMachine> {
  const role = machineRoleName(name);
  const password = o.password ??
    Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
  const ident = `"${role}"`;
  // The password is sent as a literal of a utility statement (CREATE ROLE takes no bind
  // parameters); quote it as an SQL string. It never appears in an error we raise.
  const literal = `'${password.replaceAll("'", "''")}'`;
  await refuseCaseVariant(sql, name);
  try {
    return await sql.begin(async (tx) => {
      const [r] = await tx<{ exists: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${role}) AS exists`;
      if (r!.exists) await tx.unsafe(`ALTER ROLE ${ident} LOGIN PASSWORD ${literal}`);
      else await tx.unsafe(`CREATE ROLE ${ident} LOGIN PASSWORD ${literal}`);
      await tx.unsafe(`GRANT ${PUBLISHER_GROUP_ROLE} TO ${ident}`);
      await tx.unsafe(
        `INSERT INTO ${TEAM_SCHEMA}.machines (name, role_name) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET role_name = EXCLUDED.role_name`,
        [name, role],
      );
      return { machine: name, role, password, createdRole: !r!.exists };
    });
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    const msg = e instanceof Error ? e.message.replaceAll(password, "***") : String(e);
    throw new TeamDbError(
      code === "42501" ? "privilege" : "schema",
      `Cannot add machine "${name}": ${msg}` +
        (code === "42501" ? " (run it as the role that ran team init, with CREATEROLE)" : ""),
    );
  }
}

/**
 * Makes sure machine `name` has a row this connection may publish under; inserts one bound
 * to the connecting role when none exists. TeamDbError "privilege" when the row is bound to
 * another role and this role is not the schema owner.
 */
export async function ensureMachine(sql: TeamSql, name: string): Promise<void> {
  const [row] = await sql<{ role_name: string; me: string; owner: boolean }[]>`
    SELECT m.role_name, current_user AS me,
           (SELECT nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
              OR (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
            FROM pg_namespace WHERE nspname = ${TEAM_SCHEMA}) AS owner
    FROM ${sql(TEAM_SCHEMA)}.machines m WHERE m.name = ${name}`;
  if (row) {
    if (row.role_name !== row.me && !row.owner) {
      throw new TeamDbError(
        "privilege",
        `Machine "${name}" publishes as role "${row.role_name}", not "${row.me}": connect as ` +
          `that role (intendant team add-machine prints its URL) or set INTENDANT_MACHINE`,
      );
    }
    return;
  }
  // Only the team's owner registers machines (schema v2, H5): a machine role cannot name
  // itself after another machine, or a case variant of one.
  await refuseCaseVariant(sql, name);
  try {
    await sql`INSERT INTO ${sql(TEAM_SCHEMA)}.machines (name) VALUES (${name})
              ON CONFLICT (name) DO NOTHING`;
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    const msg = e instanceof Error ? e.message : String(e);
    throw new TeamDbError(
      "privilege",
      code === "42501"
        ? `Machine "${name}" is not registered in the team database: ask the team's owner to ` +
          `run \`intendant team add-machine ${name}\` and connect with the URL it prints`
        : `Cannot register machine "${name}": ${msg}`,
    );
  }
}

/**
 * TeamDbError "privilege" when another machine's name differs from `name` only in case:
 * two such names read as one machine to a person, and one could pass for the other.
 */
async function refuseCaseVariant(sql: TeamSql, name: string): Promise<void> {
  const [other] = await sql<{ name: string }[]>`
    SELECT name FROM ${sql(TEAM_SCHEMA)}.machines WHERE lower(name) = lower(${name})
      AND name <> ${name} LIMIT 1`;
  if (other) {
    throw new TeamDbError(
      "privilege",
      `Machine "${name}" differs from the registered machine "${other.name}" only in case: ` +
        "use that name, or a clearly different one",
    );
  }
}
