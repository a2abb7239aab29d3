/**
 * What `intendant team status` shows, read from the team database in one snapshot, and the
 * team's retention setting (`intendant team retention`).
 *
 * Decisions:
 *  - Lag is measured on the SERVER's clock (`now() - last_publish_at`): machines' clocks
 *    drift, the server's is the one every `last_publish_at` was stamped with.
 *  - "Revisions behind" = team revision − the machine's `last_publish_rev`: how many publish
 *    batches (by any machine) committed after this machine's last one. A quiet machine
 *    grows it without being stale, so it is shown beside the age, never alone.
 *  - Per-machine sessions/records are the publisher's counters on the machines row (O(1));
 *    the team total is an exact `count(*)` and the prose bytes an exact
 *    `sum(octet_length(text))` (a scan: status is an operator's command, and the issue's
 *    target "disk ≤ 5× the prose" needs the real figure). Disk is
 *    `pg_total_relation_size` (heap + TOAST + every index) of records and sessions.
 *  - Everything runs in one REPEATABLE READ READ ONLY transaction, so the counts, the
 *    revision and the machines agree with each other.
 * Errors: the caller has already checked the schema (requireCurrentSchema); a refused
 * retention change (not the schema owner) is TeamDbError "privilege".
 */
import type { TeamDb, TeamSql } from "./connect.ts";
import { TeamDbError } from "./connect.ts";
import { TEAM_SCHEMA } from "./schema_v1.ts";

/** One machine's row in the status. */
export interface MachineStatus {
  name: string;
  role: string;
  created_at: string;
  /** ISO time of its last publish; null: never published. */
  last_publish_at: string | null;
  /** Server now − last_publish_at, ms; null: never published. */
  lag_ms: number | null;
  last_publish_rev: number | null;
  /** Team revision − last_publish_rev; null: never published. */
  revisions_behind: number | null;
  sessions: number;
  records: number;
  binary_version: string | null;
}

/** The team database at one instant. */
export interface TeamStatus {
  /** The server's now(), ISO. */
  now: string;
  revision: number;
  /** null: keep everything. */
  retention_days: number | null;
  records_total: number;
  sessions_total: number;
  /** Sum of UTF-8 bytes of every record's text. */
  prose_bytes: number;
  disk_bytes: { records: number; sessions: number; total: number };
  /** disk_bytes.total / prose_bytes; null when there is no prose. */
  disk_to_prose: number | null;
  machines: MachineStatus[];
}

/** Largest retention accepted (100 years: a typo like 36500000 is refused). */
export const RETENTION_DAYS_MAX = 36_500;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);

/** Parses the stored retention value; anything but a positive integer means "keep all". */
export function parseRetention(value: string | null | undefined): number | null {
  if (value === null || value === undefined || !/^[0-9]+$/.test(value)) return null;
  const n = Number(value);
  return n >= 1 ? n : null;
}

/** Reads the status (see the header). */
export async function readTeamStatus(db: TeamDb): Promise<TeamStatus> {
  const s = TEAM_SCHEMA;
  return await db.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const [head] = await tx.unsafe<
      {
        now: Date;
        revision: string;
        retention: string | null;
        records_total: string;
        sessions_total: string;
        prose: string | null;
        disk_records: string;
        disk_sessions: string;
      }[]
    >(
      `SELECT now() AS now,
              (SELECT revision FROM ${s}.team_state) AS revision,
              (SELECT value FROM ${s}.settings WHERE key = 'retention_days') AS retention,
              (SELECT count(*) FROM ${s}.records) AS records_total,
              (SELECT count(*) FROM ${s}.sessions) AS sessions_total,
              (SELECT sum(octet_length(text)) FROM ${s}.records) AS prose,
              pg_total_relation_size('${s}.records') AS disk_records,
              pg_total_relation_size('${s}.sessions') AS disk_sessions`,
    );
    const rows = await tx.unsafe<Record<string, unknown>[]>(
      `SELECT name, role_name, created_at, last_publish_at, last_publish_rev, sessions,
              records, binary_version,
              (extract(epoch FROM (now() - last_publish_at)) * 1000)::bigint AS lag_ms
       FROM ${s}.machines ORDER BY name COLLATE "C"`,
    );
    const revision = num(head!.revision);
    const prose = num(head!.prose);
    const disk = {
      records: num(head!.disk_records),
      sessions: num(head!.disk_sessions),
      total: num(head!.disk_records) + num(head!.disk_sessions),
    };
    return {
      now: head!.now.toISOString(),
      revision,
      retention_days: parseRetention(head!.retention),
      records_total: num(head!.records_total),
      sessions_total: num(head!.sessions_total),
      prose_bytes: prose,
      disk_bytes: disk,
      disk_to_prose: prose > 0 ? disk.total / prose : null,
      machines: rows.map((r) => {
        const lastRev = numOrNull(r.last_publish_rev);
        const published = r.last_publish_at !== null;
        return {
          name: String(r.name),
          role: String(r.role_name),
          created_at: iso(r.created_at) ?? "",
          last_publish_at: iso(r.last_publish_at),
          // A clock step on the server can make it negative: clamp, it is "just now".
          lag_ms: published ? Math.max(0, num(r.lag_ms)) : null,
          last_publish_rev: lastRev,
          revisions_behind: published && lastRev !== null ? Math.max(0, revision - lastRev) : null,
          sessions: num(r.sessions),
          records: num(r.records),
          binary_version: r.binary_version === null ? null : String(r.binary_version),
        };
      }),
    };
  }) as TeamStatus;
}

/**
 * Sets the team's retention (days, or null = keep everything). Only the schema owner may
 * (machine roles have no privilege on intendant.settings): anyone else gets TeamDbError
 * "privilege". Returns the previous value.
 */
export async function setRetentionDays(
  sql: TeamSql,
  days: number | null,
): Promise<{ previous: number | null }> {
  if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= RETENTION_DAYS_MAX)) {
    throw new RangeError(`Invalid retention ${days}: expected whole days 1-${RETENTION_DAYS_MAX}`);
  }
  try {
    return await sql.begin(async (tx) => {
      const [prev] = await tx.unsafe<{ value: string | null }[]>(
        `SELECT value FROM ${TEAM_SCHEMA}.settings WHERE key = 'retention_days' FOR UPDATE`,
      );
      await tx.unsafe(
        `INSERT INTO ${TEAM_SCHEMA}.settings (key, value) VALUES ('retention_days', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [days === null ? null : String(days)],
      );
      return { previous: parseRetention(prev?.value) };
    });
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    if (code === "42501") {
      const [me] = await sql<{ u: string }[]>`SELECT current_user AS u`.catch(() => [{ u: "?" }]);
      throw new TeamDbError(
        "privilege",
        `Cannot change the team retention: role ${JSON.stringify(me!.u)} may not write ` +
          `${TEAM_SCHEMA}.settings (run it as the role that ran \`intendant team init\`)`,
      );
    }
    throw e;
  }
}
