/**
 * The guard against the postgres client's own faults (issue 26 H8). When PostgreSQL
 * restarts while a command talks to the team database, the client can throw from one of
 * its timers (a TypeError writing to a socket its close handler already cleared: see
 * lib/team/connection_faults.ts). No caller can catch that; without this guard Deno prints
 * "Uncaught TypeError …" with a stack and ends the process — the daemon with it.
 * What the guard does with such a fault (and only with one: every other uncaught error
 * keeps its normal path, the crash hook of `run` included):
 *  - a one-shot command (index, search, team …) prints the same one line and hint as a
 *    connection lost anywhere else and exits 1 — its transaction on the server rolled back
 *    with the connection, so nothing is half-written, and running again resumes;
 *  - a daemon (serve, mcp) says so in one line on stderr (at most once a minute) and keeps
 *    serving: the client drops the broken connection and the next team request opens a new
 *    one, while every local answer never depended on it.
 * Installed once per process, before the command runs.
 */
import { isClientFault } from "../team/mod.ts";
import { EXIT_FAILURE } from "./exit_codes.ts";
import { TEAM_LOST_HINT } from "./errors_out.ts";

/** What the guard needs of the process edge. */
export interface FaultGuardOptions {
  /** A daemon keeps running; a one-shot command exits. */
  daemon: boolean;
  /** The command talks to the team database (its unhandled socket errors are the client's). */
  team: boolean;
  stderr: (text: string) => void;
  /** Ends the process (main.ts: Deno.exit); absent in-process (tests): only printed. */
  exit?: (code: number) => void;
  now?: () => number;
}

/** The one line said for a client fault. */
export const CLIENT_FAULT_LINE =
  "intendant: lost the connection to the team database: the client failed writing to a " +
  "connection that had just closed";

const DAEMON_REPEAT_MS = 60_000;

let installed: FaultGuardOptions | null = null;

/**
 * Installs the guard (first call) or retargets it (later calls: the options of the command
 * now running). Returns a function that tells whether `err` was the guard's to handle.
 */
export function installClientFaultGuard(o: FaultGuardOptions): (err: unknown) => boolean {
  const first = installed === null;
  installed = o;
  const handle = (err: unknown): boolean => {
    const g = installed;
    if (!g || !isClientFault(err, { team: g.team })) return false;
    handleFault(g);
    return true;
  };
  if (first) {
    globalThis.addEventListener("error", (e) => {
      if (!handle(e.error)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
    });
    globalThis.addEventListener("unhandledrejection", (e) => {
      if (!handle(e.reason)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
    });
  }
  return handle;
}

let lastDaemonLine = -Infinity;

function handleFault(g: FaultGuardOptions): void {
  if (g.daemon) {
    const now = (g.now ?? Date.now)();
    if (now - lastDaemonLine < DAEMON_REPEAT_MS) return;
    lastDaemonLine = now;
    g.stderr(`${CLIENT_FAULT_LINE}; still serving, the next team request reconnects\n`);
    return;
  }
  g.stderr(`${CLIENT_FAULT_LINE}\nhint: ${TEAM_LOST_HINT}\n`);
  g.exit?.(EXIT_FAILURE);
}
