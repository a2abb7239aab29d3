/**
 * The one CLI error printer: maps an error to one line, a hint and an exit code.
 * Stack traces only for internal errors (they are bugs, and the trace helps report them).
 * Messages quote values that can come from anywhere (argv, paths and ids from agent homes,
 * a mock script's text), so each is printed through lib/text terminalSafe: one line, no
 * terminal controls; a stack keeps its line breaks.
 */
import {
  AmbiguousPrefixError,
  ContainmentError,
  InvalidInputError,
  LockHeldError,
  NotFoundError,
  StalePublishError,
} from "../errors.ts";
import { CursorExpiredError, InvalidCursorError } from "../message_search/mod.ts";
import {
  EXIT_AMBIGUOUS,
  EXIT_BUSY,
  EXIT_FAILURE,
  EXIT_INTERNAL,
  EXIT_NOT_FOUND,
  EXIT_USAGE,
} from "./exit_codes.ts";
import { terminalSafe } from "../text/mod.ts";
import { TeamDbError, type TeamDbErrorKind } from "../team/mod.ts";

/**
 * One hint per team-database failure (lib/team connect.ts kinds). The messages are already
 * redacted there (the password never reaches one); these say what to do next.
 */
const TEAM_HINTS: Record<TeamDbErrorKind, string> = {
  connect: "check the team URL's host and port, and that PostgreSQL accepts TCP connections " +
    "from this machine (listen_addresses, pg_hba.conf)",
  tls: "use the sslmode the server supports: ?sslmode=disable for a server without TLS, " +
    "?sslmode=verify-full to check its certificate",
  auth: "check the password (the URL, PGPASSWORD or ~/.pgpass); " +
    "`intendant team add-machine NAME` sets a new one for a machine's role",
  database: "create the database first, or fix the database name in the team URL",
  version: "team search needs PostgreSQL 15 or newer",
  ctype: "create a UTF-8 database as the message shows and point the team URL at it",
  pg_trgm: "install PostgreSQL's contrib package on the server (e.g. postgresql-contrib)",
  settings: "connect to PostgreSQL directly, not through a pooler that drops startup parameters",
  schema: "`intendant team init --team URL` creates or migrates the schema; a schema newer " +
    "than this intendant needs an upgraded intendant",
  privilege: "run it as the role that ran `intendant team init`, or connect as this " +
    "machine's own role (`intendant team add-machine NAME` prints its URL)",
};

/** Prints `err` and returns the exit code. */
export function reportError(
  err: unknown,
  write: (s: string) => void,
  command: string | null,
): number {
  const msg = terminalSafe(err instanceof Error ? err.message : String(err));
  const help = command ? `intendant ${command} --help` : "intendant --help";
  if (err instanceof InvalidInputError || err instanceof RangeError) {
    write(`intendant: ${msg}\nhint: see \`${help}\`\n`);
    return EXIT_USAGE;
  }
  // A cursor is user input: a pasted fragment or an old page's cursor is a usage error.
  if (err instanceof InvalidCursorError) {
    write(
      `intendant: ${msg}\nhint: use the cursor printed by the previous page, or search again without --cursor\n`,
    );
    return EXIT_USAGE;
  }
  if (err instanceof CursorExpiredError) {
    write(
      `intendant: ${msg}\nhint: the index changed since that page: run the search again without --cursor\n`,
    );
    return EXIT_USAGE;
  }
  // The team database is outside this program: a failure there is a runtime failure of
  // this run (never usage: the command line was fine), whatever the kind.
  if (err instanceof TeamDbError) {
    write(`intendant: ${msg}\nhint: ${TEAM_HINTS[err.kind]}\n`);
    return EXIT_FAILURE;
  }
  if (err instanceof NotFoundError) {
    write(`intendant: ${msg}\nhint: \`intendant sessions\` lists what exists\n`);
    return EXIT_NOT_FOUND;
  }
  if (err instanceof AmbiguousPrefixError) {
    write(`intendant: ${msg}\nhint: give more characters of the id\n`);
    return EXIT_AMBIGUOUS;
  }
  if (
    err instanceof LockHeldError || err instanceof StalePublishError ||
    err instanceof Deno.errors.AddrInUse
  ) {
    write(
      `intendant: ${msg}\nhint: another intendant may be running; see README "Troubleshooting"\n`,
    );
    return EXIT_BUSY;
  }
  if (
    err instanceof ContainmentError || err instanceof Deno.errors.PermissionDenied ||
    err instanceof Deno.errors.NotCapable
  ) {
    write(`intendant: ${msg}\nhint: check ownership and permissions of the state root\n`);
    return EXIT_FAILURE;
  }
  if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.AlreadyExists) {
    write(`intendant: ${msg}\n`);
    return EXIT_FAILURE;
  }
  const detail = err instanceof Error && err.stack
    ? terminalSafe(err.stack, { multiline: true })
    : msg;
  // An operating-system refusal (a rename across devices, a full or read-only disk, EIO) is
  // a failure of this run, not a bug: one line, no stack.
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
    write(`intendant: ${msg}\nhint: the operating system refused it (${code})\n`);
    return EXIT_FAILURE;
  }
  write(`intendant: internal error: ${detail}\n`);
  return EXIT_INTERNAL;
}
