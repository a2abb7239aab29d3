/**
 * `intendant team init|add-machine|status|retention` (issue 19): sets up and inspects the
 * shared PostgreSQL of team search. Every subcommand takes `--team URL` (wins) or
 * INTENDANT_TEAM_URL, and prints the URL only redacted.
 *  - init: opens and checks the database (lib/team connect), creates or migrates the
 *    schema (versioned, a newer schema refused), creates the publisher group role when this
 *    role may; says what it did, or that there was nothing to do.
 *  - add-machine NAME: creates (or resets the password of) the machine's LOGIN role and
 *    prints a ready team URL for that machine WITH the password, plus a password-file line.
 *    This is the only place a password is ever printed: it was just generated for the user,
 *    who must be able to hand it to the machine; it is printed once and never stored by us.
 *    `--password-stdin` sets a chosen password read from stdin (never from argv: argv is
 *    visible to every user in `ps`); it is then not echoed back.
 *  - status: machines, last publish and lag, counts, disk vs prose, retention
 *    (lib/team/team_status.ts says how each figure is measured).
 *  - retention DAYS|off: the server-side retention window; the schema owner only.
 * Invariants: every string from the server (versions, role names, machine names) reaches
 * the terminal through terminalSafe, JSON through stringifyTerminalSafe; the password is
 * never in an error (lib/team errors are redacted) and never in `--json` except add-machine's
 * own `url`/`password` fields, which are the point of that command.
 * Errors: TeamDbError and InvalidInputError go to the one printer (errors_out.ts); the pool
 * is always closed.
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import {
  addMachine,
  machineName,
  type MigrateReport,
  migrateTeamDb,
  openTeamDb,
  readTeamStatus,
  requireCurrentSchema,
  RETENTION_DAYS_MAX,
  setRetentionDays,
  type TeamDb,
  type TeamUrl,
} from "../team/mod.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { boolFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { resolveTeamUrl } from "./team_config.ts";
import { formatTeamStatus, teamStatusJson } from "./team_status_out.ts";
// A cycle (mod.ts lists this command), harmless: VERSION is read only when a command runs.
import { VERSION } from "./mod.ts";

const USAGE = `intendant team <subcommand> [--team URL] [--json]

  init                        create or migrate the team schema (run once, as the database owner)
  add-machine NAME            create machine NAME's database role; prints its team URL with
                              the password once [--password-stdin: read a chosen password]
  status                      machines, last publish, lag, counts, disk use, retention
  retention DAYS|off          keep the team's records DAYS days (off: keep everything)

--team URL  postgres://ROLE[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]
            (default: INTENDANT_TEAM_URL; password from the URL, PGPASSWORD or ~/.pgpass)`;

const FLAGS = {
  team: { type: "string" },
  json: { type: "boolean" },
  "password-stdin": { type: "boolean" },
} as const;

export const teamCommand: Command = {
  name: "team",
  summary: "set up and inspect team search on a shared PostgreSQL (init, add-machine, status)",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, FLAGS);
    const [sub, ...rest] = args.positionals;
    const cfg = resolveConfig(io.env, { cwd: io.cwd, team: stringFlag(args, "team") });
    const json = boolFlag(args, "json");
    const want = (n: number, shape: string) => {
      if (rest.length !== n) {
        throw new InvalidInputError(
          `\`intendant team ${sub}\` takes ${shape}, got ${rest.length} argument${
            rest.length === 1 ? "" : "s"
          }`,
        );
      }
    };
    if (sub === undefined) {
      throw new InvalidInputError("Missing subcommand: init, add-machine, status or retention");
    }
    if (!["init", "add-machine", "status", "retention"].includes(sub)) {
      throw new InvalidInputError(
        `Unknown team subcommand "${sub}": expected init, add-machine, status or retention`,
      );
    }
    if (boolFlag(args, "password-stdin") && sub !== "add-machine") {
      throw new InvalidInputError("--password-stdin is only for `intendant team add-machine`");
    }
    // Validate arguments before connecting: a typo costs no round trip.
    let machine: string | null = null;
    let retention: number | null = null;
    if (sub === "init" || sub === "status") want(0, "no arguments");
    if (sub === "add-machine") {
      want(1, "one machine NAME");
      machine = checkedMachineName(rest[0]!);
    }
    if (sub === "retention") {
      want(1, "DAYS or off");
      retention = parseRetentionArg(rest[0]!);
    }
    const password = boolFlag(args, "password-stdin") ? await readPassword(io) : undefined;
    const url = await resolveTeamUrl(cfg, (w) => io.stderr(`intendant: ${terminalSafe(w)}\n`));
    const db = await openTeamDb(url);
    try {
      if (sub === "init") return await init(db, url, io, json);
      if (sub === "add-machine") return await addOne(db, url, machine!, password, io, json);
      await requireCurrentSchema(db);
      if (sub === "status") {
        const status = await readTeamStatus(db);
        if (json) io.stdout(stringifyTerminalSafe(teamStatusJson(url, db, status)) + "\n");
        else io.stdout(formatTeamStatus(url, db, status));
        return EXIT_OK;
      }
      const { previous } = await setRetentionDays(db.sql, retention);
      if (json) {
        io.stdout(stringifyTerminalSafe({ retention_days: retention, previous }) + "\n");
      } else {
        const say = (d: number | null) => (d === null ? "keep everything" : `${d} days`);
        io.stdout(
          `team retention: ${say(retention)} (was: ${say(previous)})\n` +
            (retention === null
              ? "records are kept until their machine deletes them\n"
              : `records older than ${retention} days are removed from the team database; ` +
                "every machine's local store keeps its own copy\n"),
        );
      }
      return EXIT_OK;
    } finally {
      await db.close();
    }
  },
};

/** A valid machine name given as NAME (machineRoleName fits any of them in a role name). */
function checkedMachineName(raw: string): string {
  return machineName(raw, "argument");
}

/** `DAYS` (whole days 1..RETENTION_DAYS_MAX) or `off`/`forever` (null). */
function parseRetentionArg(raw: string): number | null {
  if (["off", "forever", "none"].includes(raw.toLowerCase())) return null;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= RETENTION_DAYS_MAX)) {
    throw new InvalidInputError(
      `Invalid retention "${raw}": expected whole days 1-${RETENTION_DAYS_MAX} or "off"`,
    );
  }
  return n;
}

/** One line of stdin: the chosen password (never argv). */
async function readPassword(io: CliIo): Promise<string> {
  const line = io.readLine ? await io.readLine() : null;
  if (line === null || line === "") {
    throw new InvalidInputError("--password-stdin: no password on standard input");
  }
  return line;
}

async function init(db: TeamDb, url: TeamUrl, io: CliIo, json: boolean): Promise<number> {
  const report = await migrateTeamDb(db, { binaryVersion: VERSION });
  if (json) {
    io.stdout(
      stringifyTerminalSafe({
        team: url.redacted,
        server_version: db.serverVersion,
        server_version_num: db.serverVersionNum,
        pg_trgm_before: db.pgTrgm,
        ...report,
      }) + "\n",
    );
    return EXIT_OK;
  }
  io.stdout(formatInit(db, url, report));
  return EXIT_OK;
}

/** The human report of `team init`. */
export function formatInit(db: TeamDb, url: TeamUrl, r: MigrateReport): string {
  const lines = [
    `team database ${terminalSafe(url.redacted)}`,
    `server: PostgreSQL ${terminalSafe(db.serverVersion)}` +
    (db.pgTrgm === "available" && r.applied.length > 0 ? " (pg_trgm installed now)" : ""),
    r.applied.length > 0
      ? `schema: version ${r.from} → ${r.to} (applied migration${r.applied.length > 1 ? "s" : ""} ${
        r.applied.join(", ")
      })`
      : `schema: version ${r.to}, current (nothing to do)`,
  ];
  if (r.publisherRole === "created") {
    lines.push('publisher role "intendant_publisher": created (machine roles join it)');
  } else if (r.publisherRole === "exists") {
    lines.push('publisher role "intendant_publisher": exists (privileges re-granted)');
  } else {
    lines.push(
      `publisher role "intendant_publisher": not created: role ${`"${
        terminalSafe(url.user)
      }"`} may not create roles. Machines can still all publish as this one role; for one ` +
        "role per machine (each writes only its own rows), run `intendant team init` once " +
        "as a role with CREATEROLE, then `intendant team add-machine NAME`",
    );
  }
  lines.push("next: `intendant team add-machine NAME --team URL` for each machine");
  return lines.join("\n") + "\n";
}

/** A URL part that is also safe inside the shell's single quotes we print it in. */
function urlPart(s: string): string {
  return encodeURIComponent(s).replaceAll("'", "%27");
}

/** pgpass escaping: `\` and `:` are escaped with `\` (libpq). */
function pgpassField(s: string): string {
  return s.replace(/[\\:]/g, (c) => `\\${c}`);
}

async function addOne(
  db: TeamDb,
  url: TeamUrl,
  name: string,
  chosen: string | undefined,
  io: CliIo,
  json: boolean,
): Promise<number> {
  await requireCurrentSchema(db);
  const added = await addMachine(db.sql, name, chosen === undefined ? {} : { password: chosen });
  // sslmode spelled out, so the machine connects exactly as this command did.
  const where = `${url.ipv6 ? `[${url.host}]` : url.host}:${url.port}/` +
    `${urlPart(url.database)}?sslmode=${url.sslmode}`;
  const role = urlPart(added.role);
  const base = `${role}@${where}`;
  const withPassword = `postgres://${role}:${urlPart(added.password)}@${where}`;
  const pgpass = [url.host, String(url.port), url.database, added.role, added.password]
    .map(pgpassField).join(":");
  const generated = chosen === undefined;
  if (json) {
    io.stdout(
      stringifyTerminalSafe({
        machine: added.machine,
        role: added.role,
        created_role: added.createdRole,
        password_generated: generated,
        url: generated ? withPassword : `postgres://${base}`,
        url_without_password: `postgres://${base}`,
        pgpass_line: generated ? pgpass : null,
      }) + "\n",
    );
    return EXIT_OK;
  }
  const lines = [
    `machine ${added.machine}: role ${terminalSafe(added.role)} ${
      added.createdRole ? "created" : "existed: its password was reset"
    }`,
  ];
  if (generated) {
    lines.push(
      "",
      "team URL for that machine (the password is shown only now: store it safely):",
      `  ${withPassword}`,
      "",
      "on that machine, either set",
      `  INTENDANT_TEAM_URL='${withPassword}' INTENDANT_MACHINE=${added.machine}`,
      "or keep the password out of the environment with a ~/.pgpass line (chmod 600):",
      `  ${pgpass}`,
      `  INTENDANT_TEAM_URL='postgres://${base}' INTENDANT_MACHINE=${added.machine}`,
    );
  } else {
    lines.push(
      "",
      "team URL for that machine (password as you chose it, from the URL, PGPASSWORD or ~/.pgpass):",
      `  INTENDANT_TEAM_URL='postgres://${base}' INTENDANT_MACHINE=${added.machine}`,
    );
  }
  lines.push("then publish from it: `intendant index` (or keep `intendant serve` running)");
  io.stdout(lines.join("\n") + "\n");
  return EXIT_OK;
}
