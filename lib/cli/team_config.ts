/**
 * The team URL a CLI command uses: `--team URL` (already folded into ResolvedConfig by
 * resolveConfig) or INTENDANT_TEAM_URL, with its password from the URL, PGPASSWORD or the
 * libpq password file, in libpq's order (lib/team/team_url.ts).
 * The password file is read only when neither the URL nor PGPASSWORD carries a password:
 * the locked profiles grant read access to it for exactly that case (lib/permissions.ts),
 * and a password file that is never needed should not be opened at all.
 * Errors: no team configured → InvalidInputError naming both ways to configure one; a bad
 * URL → the parser's InvalidInputError (it never quotes the password).
 */
import { readHostname, readPgpassFile, type ResolvedConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import {
  openTeamDb,
  parseTeamUrl,
  requireCurrentSchema,
  resolveMachineName,
  type TeamDb,
  type TeamUrl,
} from "../team/mod.ts";

/** The configured team URL with its password resolved; `warn` gets the pgpass warnings. */
export async function resolveTeamUrl(
  cfg: ResolvedConfig,
  warn: (line: string) => void,
): Promise<TeamUrl> {
  const raw = cfg.team.url;
  if (raw === null) {
    throw new InvalidInputError(
      "No team database configured: pass --team postgres://ROLE@HOST/DATABASE or set INTENDANT_TEAM_URL",
    );
  }
  const bare = parseTeamUrl(raw, { pgpassword: cfg.team.pgpassword });
  if (bare.passwordSource !== null) return bare;
  const url = parseTeamUrl(raw, {
    pgpassword: cfg.team.pgpassword,
    pgpass: await readPgpassFile(cfg.team.pgpassFile),
  });
  for (const w of url.warnings) warn(w);
  return url;
}

/** An open team database for publishing or searching, and this machine's name in it. */
export interface OpenTeam {
  db: TeamDb;
  url: TeamUrl;
  machine: string;
}

/**
 * Opens the configured team database for a publisher or a reader: connected and checked
 * (lib/team connect), the schema at this binary's version (else the `team init` / upgrade
 * error), and this machine named (INTENDANT_MACHINE or the hostname). The caller closes
 * `db`.
 */
export async function openTeam(
  cfg: ResolvedConfig,
  warn: (line: string) => void,
): Promise<OpenTeam> {
  const machine = teamMachine(cfg);
  const url = await resolveTeamUrl(cfg, warn);
  return { db: await openCheckedTeamDb(url), url, machine };
}

/** This machine's team name: INTENDANT_MACHINE, else the hostname (InvalidInputError). */
export function teamMachine(cfg: ResolvedConfig): string {
  return resolveMachineName({ configured: cfg.team.machine, hostname: readHostname() });
}

/** Opens `url` and checks it holds this binary's schema; closed again when not. */
export async function openCheckedTeamDb(url: TeamUrl): Promise<TeamDb> {
  const db = await openTeamDb(url);
  try {
    await requireCurrentSchema(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
