/**
 * The one CLI error printer: maps an error to one line, a hint and an exit code.
 * Stack traces only for internal errors (they are bugs, and the trace helps report them).
 * Messages quote values that can come from anywhere (argv, paths and ids from agent homes,
 * a mock script's text), so each is printed through lib/text terminalSafe: one line, no
 * terminal controls; a stack keeps its line breaks.
 * A Deno permission check that failed (NotCapable, or PermissionDenied carrying Deno's
 * "Requires <kind> access to" wording; also found as the cause of another error) names
 * the permission and the flag that grants it: the process was started with too narrow a
 * set of flags, which ownership of the state root has nothing to do with. A real
 * operating-system refusal (EACCES on the state root) keeps the ownership hint.
 */
import {
  AmbiguousPrefixError,
  ContainmentError,
  InvalidInputError,
  LockHeldError,
  NotFoundError,
  NotRestorableError,
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
import { connectionLostReason, TeamDbError, type TeamDbErrorKind } from "../team/mod.ts";

/** The hint for a lost team connection (also the client-fault guard's). */
export const TEAM_LOST_HINT = "PostgreSQL restarted or the network dropped: run the command " +
  "again in a moment (a publish is one transaction per batch: nothing is half-written, the " +
  "next run resumes)";

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
  lost: TEAM_LOST_HINT,
};

/** What a failed Deno permission check asked for: its kind and the value, when named. */
export interface MissingPermission {
  kind: "read" | "write" | "net" | "env" | "run" | "sys" | "ffi" | "import";
  value: string | null;
}

/**
 * The permission a Deno permission check refused in `err` (or in its cause chain), parsed
 * from Deno's message `Requires <kind> access to "<value>", run again with …`; null when
 * `err` is no such refusal.
 */
export function missingPermission(err: unknown): MissingPermission | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (!(e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied)) {
      continue;
    }
    const m = /Requires (read|write|net|env|run|sys|ffi|import) access(?: to "([^"]*)")?/
      .exec(e.message);
    if (m) return { kind: m[1] as MissingPermission["kind"], value: m[2] ?? null };
  }
  return null;
}

/** The hint for a refused permission check: the flag that grants it, and the locked route. */
function permissionHint(p: MissingPermission, command: string | null): string {
  const flag = p.value === null
    ? `--allow-${p.kind}`
    : `--allow-${p.kind}=${terminalSafe(p.value)}`;
  return `this process was started without that permission: add ${flag} (or run \`intendant ${
    command ?? "serve"
  } --locked\`, which computes the exact profile)`;
}

/**
 * What the daemon's DaemonBusyError (lib/server/daemon.ts) says is taken. Read by shape:
 * the error is an AddrInUse carrying `busy`, and the CLI may import only the server's door.
 */
type Busy =
  | { kind: "port"; host: string; port: number }
  | { kind: "state_root"; pid: number | null; port: number | null };

function busyOf(err: unknown): Busy | null {
  if (!(err instanceof Deno.errors.AddrInUse)) return null;
  const b = (err as { busy?: Busy }).busy;
  return b?.kind === "port" || b?.kind === "state_root" ? b : null;
}

function busyHint(b: Busy): string {
  if (b.kind === "port") return "pass --port N or set INTENDANT_PORT";
  const stop = b.pid === null ? "stop it" : `stop it (kill ${b.pid})`;
  return `that daemon is already serving: open its link (\`intendant url\`), ${stop}, or ` +
    "point INTENDANT_HOME at another state root";
}

/** Prints `err` and returns the exit code. */
export function reportError(
  err: unknown,
  write: (s: string) => void,
  command: string | null,
  o: { team?: boolean } = {},
): number {
  const msg = terminalSafe(err instanceof Error ? err.message : String(err));
  const help = command ? `intendant ${command} --help` : "intendant --help";
  // First: a refused permission check can surface inside any other error (as its cause).
  const missing = missingPermission(err);
  if (missing) {
    // Deno's "run again with the --allow-x flag" tail is replaced by the hint's exact flag.
    const what = msg.replace(/, run again with the --allow-[a-z]+ flag/, "");
    write(`intendant: ${what}\nhint: ${permissionHint(missing, command)}\n`);
    return EXIT_FAILURE;
  }
  // The sentence says what to do instead (restore with --to DIR): no usage hint.
  if (err instanceof NotRestorableError) {
    write(`intendant: ${msg}\n`);
    return EXIT_FAILURE;
  }
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
  // The team database's connection went away mid-command (H8): the client's and the
  // server's own wording, reduced to one line (its message names host:port, never a password).
  const lost = connectionLostReason(err, { team: o.team });
  if (lost) {
    write(
      `intendant: lost the connection to the team database: ${terminalSafe(lost)}\n` +
        `hint: ${TEAM_HINTS.lost}\n`,
    );
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
  const busy = busyOf(err);
  if (busy) {
    write(`intendant: ${msg}\nhint: ${busyHint(busy)}\n`);
    return EXIT_BUSY;
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
