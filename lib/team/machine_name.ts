/**
 * The machine name: what keys carry in the team database and what every team answer names
 * a session's origin by. INTENDANT_MACHINE wins; otherwise the hostname (lib/config.ts
 * reads both; the hostname needs the `sys` permission, so config answers null where it may
 * not be read, and the user sets INTENDANT_MACHINE).
 * Invariant: a valid name is 1-64 characters of `A-Z a-z 0-9 . _ -`: it is a key part, a
 * PostgreSQL role-name suffix and a terminal/HTML-safe label, with no escaping needed
 * anywhere. Case is kept (two names differing only in case are two machines).
 * Errors: InvalidInputError naming the value (quoted, control characters escaped, long
 * values cut) and where it came from.
 */
import { InvalidInputError } from "../errors.ts";

/** Longest machine name accepted. */
export const MACHINE_NAME_MAX = 64;

const VALID = /^[A-Za-z0-9._-]+$/;

/** Where the name came from, for the error message. */
/** Where a machine name came from, for the message that refuses it. */
export type MachineNameSource = "INTENDANT_MACHINE" | "hostname" | "argument";

/** A value quoted for a message: JSON escapes controls; long values are cut. */
function quoted(raw: string): string {
  return raw.length > 80 ? `${JSON.stringify(raw.slice(0, 80))}…` : JSON.stringify(raw);
}

/** Validates one machine name; throws InvalidInputError otherwise. */
export function machineName(raw: string, source: MachineNameSource = "INTENDANT_MACHINE"): string {
  if (raw.length >= 1 && raw.length <= MACHINE_NAME_MAX && VALID.test(raw)) return raw;
  const from = source === "argument" ? "" : ` (from ${source})`;
  const fix = source === "hostname"
    ? "; set INTENDANT_MACHINE to a valid name"
    : source === "argument"
    ? "; give a name like laptop-2 or ci.build"
    : "; change INTENDANT_MACHINE to a name like laptop-2";
  throw new InvalidInputError(
    `Invalid machine name ${quoted(raw)}${from}: expected 1-${MACHINE_NAME_MAX} ` +
      `characters of A-Z a-z 0-9 . _ -${fix}`,
  );
}

/**
 * The machine name from configuration: INTENDANT_MACHINE when set, else the hostname.
 * Neither (the hostname could not be read) is an error saying what to set.
 */
export function resolveMachineName(
  o: { configured: string | null; hostname: string | null },
): string {
  if (o.configured !== null) return machineName(o.configured, "INTENDANT_MACHINE");
  if (o.hostname !== null && o.hostname !== "") return machineName(o.hostname, "hostname");
  throw new InvalidInputError(
    "Cannot name this machine: the hostname is not readable here; set INTENDANT_MACHINE",
  );
}
