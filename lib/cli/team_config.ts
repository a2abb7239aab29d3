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
import { readPgpassFile, type ResolvedConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { parseTeamUrl, type TeamUrl } from "../team/mod.ts";

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
