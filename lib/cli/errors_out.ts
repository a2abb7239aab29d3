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
