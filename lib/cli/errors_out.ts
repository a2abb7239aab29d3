/**
 * The one CLI error printer: maps an error to one line, a hint and an exit code.
 * Stack traces only for internal errors (they are bugs, and the trace helps report them).
 */
import {
  AmbiguousPrefixError,
  ContainmentError,
  InvalidInputError,
  LockHeldError,
  NotFoundError,
} from "../errors.ts";
import {
  EXIT_AMBIGUOUS,
  EXIT_BUSY,
  EXIT_FAILURE,
  EXIT_INTERNAL,
  EXIT_NOT_FOUND,
  EXIT_USAGE,
} from "./exit_codes.ts";

/** Prints `err` and returns the exit code. */
export function reportError(
  err: unknown,
  write: (s: string) => void,
  command: string | null,
): number {
  const msg = err instanceof Error ? err.message : String(err);
  const help = command ? `intendant ${command} --help` : "intendant --help";
  if (err instanceof InvalidInputError || err instanceof RangeError) {
    write(`intendant: ${msg}\nhint: see \`${help}\`\n`);
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
  if (err instanceof LockHeldError || err instanceof Deno.errors.AddrInUse) {
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
  write(`intendant: internal error: ${err instanceof Error ? err.stack ?? msg : msg}\n`);
  return EXIT_INTERNAL;
}
