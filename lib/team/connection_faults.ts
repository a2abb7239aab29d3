/**
 * What a dropped team-database connection looks like, so that every caller says it in one
 * line instead of a stack (issue 26 H8). Three shapes reach us when PostgreSQL restarts or
 * the network drops while a command runs:
 *  - the client's own codes (porsager 3.4.9 src/errors.js `connection()`):
 *    CONNECTION_CLOSED, CONNECTION_ENDED, CONNECTION_DESTROYED, CONNECT_TIMEOUT, carried
 *    as `code` on an Error whose message is "<code> <host>:<port>" (no password);
 *  - the server's own error before it goes: SQLSTATE class 08 (connection exception) and
 *    57P01–57P05 (admin/crash shutdown, cannot connect now: "the database system is
 *    starting up", idle-session timeout), on a PostgresError;
 *  - a TypeError thrown INSIDE the client (src/connection.js `nextWrite` writes to a
 *    socket its close handler already cleared: "Cannot read properties of null (reading
 *    'write')"). It is thrown from a timer, so no caller can catch it: the CLI's fault
 *    guard (lib/cli/client_fault_guard.ts) recognises it by its stack's top frame.
 * Pure: classification only; nothing here prints.
 */

/** The client's codes for a connection that went away. */
const CLIENT_LOST = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/** Socket codes the client passes through unchanged when the server's side goes. */
const SOCKET_LOST = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ECONNABORTED", "ETIMEDOUT"]);

/** The SQLSTATEs of a server going away or not yet back. */
function serverLostState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-5]$/.test(code);
}

/**
 * Why `err` says the team database's connection went away: a short reason ("the server
 * closed the connection (CONNECTION_CLOSED)") or null when it is some other error. A bare
 * socket error (ECONNRESET, ECONNREFUSED …, raised by the runtime's net layer, so its stack
 * need not name the client) counts when its stack names the client or when the caller
 * knows the command talks to the team database (`team`); otherwise an unrelated
 * ECONNRESET keeps its own report.
 */
export function connectionLostReason(
  err: unknown,
  o: { team?: boolean } = {},
): string | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string") return null;
  if (CLIENT_LOST.has(code)) {
    return code === "CONNECT_TIMEOUT"
      ? "no answer within the connect timeout (CONNECT_TIMEOUT)"
      : `the server closed the connection (${code})`;
  }
  if (serverLostState(code) && err.name === "PostgresError") {
    return `the server ${
      code === "57P03" ? "is starting up or shutting down" : "ended the session"
    }: ${err.message} (SQLSTATE ${code})`;
  }
  if (SOCKET_LOST.has(code) && (o.team || isClientStack(err.stack))) {
    return `the connection failed (${code})`;
  }
  return null;
}

/** Whether `stack` runs through the postgres client's sources. */
function isClientStack(stack: string | undefined): boolean {
  return typeof stack === "string" &&
    /[\\/]postgres(?:@[^\\/]+)?[\\/](?:.*[\\/])?src[\\/]/.test(stack);
}

/**
 * Whether `err` is a fault thrown inside the postgres client itself — an Error whose top
 * stack frame is in the client's sources, or (in the single file, where the client is
 * bundled and its paths are gone) a TypeError whose top frame is the client's socket
 * writer `nextWrite`; and, in a command that uses the team (`team`), any socket error of
 * the lost-connection kind. Such an error escapes every caller (it is thrown from the
 * client's own timers, or rejected where nobody awaits).
 */
export function isClientFault(err: unknown, o: { team?: boolean } = {}): boolean {
  if (!(err instanceof Error) || typeof err.stack !== "string") return false;
  // A pooled connection the client opens in the background and whose refusal it never
  // hands to a caller: an unhandled socket error, in a command that uses the team.
  const code = (err as { code?: unknown }).code;
  if (o.team && typeof code === "string" && SOCKET_LOST.has(code)) return true;
  const top = err.stack.split("\n").find((l) => /^\s+at /.test(l));
  if (top === undefined) return false;
  return isClientStack(top) || (err instanceof TypeError && /\bnextWrite \(/.test(top));
}
