/**
 * The edge of the program: the only module that reads the environment, argv, cwd and
 * home. It resolves the configuration, dispatches the subcommand (errors are printed as
 * one line plus a hint, with a distinct exit code), or with `--locked` re-executes the
 * program under its exact permission profile (lib/relaunch.ts). A reader that closes the
 * output early (`| head`) silences it, never fails the command (streamWriter).
 */
import { resolve } from "node:path";
import { ENV_VARS_READ, resolveConfig } from "./lib/config.ts";
import { reportError, runCli } from "./lib/cli/mod.ts";
import { LOCKED_FLAG, relaunchLocked } from "./lib/relaunch.ts";

/** Only the variables we document: Deno.env.toObject() fails under the locked-down profile. */
function readEnv(): Record<string, string | undefined> {
  return Object.fromEntries(ENV_VARS_READ.map((k) => [k, Deno.env.get(k)]));
}

/** Reads one line of stdin (without its line end), or null at end of input. */
async function readLine(): Promise<string | null> {
  const buf = new Uint8Array(1);
  const bytes: number[] = [];
  // Byte at a time: a confirmation is one short line, and nothing past it may be consumed.
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return bytes.length ? new TextDecoder().decode(new Uint8Array(bytes)) : null;
    if (buf[0] === 0x0a) break;
    bytes.push(buf[0]!);
  }
  return new TextDecoder().decode(new Uint8Array(bytes)).replace(/\r$/, "");
}

/**
 * A process stream as a CliIo writer. A reader that went away (EPIPE: `intendant sessions
 * | head -1`) is not an error: from then on that stream's output is dropped and the
 * command runs to its natural end, so the exit code is the one it would have had (0 for a
 * listing) and nothing is printed about it. Dropping rather than exiting at once (the way
 * SIGPIPE ends a C tool) is deliberate: `intendant run … | head -2` must still finish and
 * record its session, and `intendant serve | head -1` keeps serving. The listings print
 * after their work is done, so running on costs next to nothing. Handled here, once, so
 * no command needs to know.
 */
function streamWriter(stream: { writeSync(p: Uint8Array): number }): (s: string) => void {
  const enc = new TextEncoder();
  let closed = false;
  return (s) => {
    if (closed) return;
    const bytes = enc.encode(s);
    try {
      // writeSync may take less than all of it (a pipe under pressure): loop until done.
      for (let off = 0; off < bytes.length;) off += stream.writeSync(bytes.subarray(off));
    } catch (err) {
      if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
      closed = true;
    }
  };
}

/** The working directory, or "/" when the profile may not even read it. */
function readCwd(): string {
  try {
    return Deno.cwd();
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return "/";
    }
    throw err;
  }
}

if (import.meta.main) {
  const stdout = streamWriter(Deno.stdout);
  const stderr = streamWriter(Deno.stderr);
  const env = readEnv();
  const cwd = readCwd();
  let code: number;
  // `mcp --print-config` only prints how to start this program, which the locked mcp
  // profile cannot see (the checkout's deno.json): it runs here, in the launcher.
  const printOnly = Deno.args[0] === "mcp" && Deno.args.includes("--print-config");
  if (Deno.args.includes(LOCKED_FLAG) && !printOnly) {
    const args = Deno.args.filter((a) => a !== LOCKED_FLAG);
    try {
      const i = args.indexOf("--project");
      const project = i >= 0 && args[i + 1] ? resolve(cwd, args[i + 1]!) : cwd;
      const portAt = args.indexOf("--port");
      const port = portAt >= 0 ? Number(args[portAt + 1]) : undefined;
      // `--team URL` (or `--team=URL`) widens the profile by the team host:port.
      const teamAt = args.indexOf("--team");
      const team = teamAt >= 0
        ? args[teamAt + 1]
        : args.find((a) => a.startsWith("--team="))?.slice("--team=".length);
      const cfg = resolveConfig(env, {
        cwd,
        port: Number.isInteger(port) ? port : undefined,
        team,
      });
      code = await relaunchLocked({
        cfg,
        args,
        mainModule: Deno.mainModule,
        denoPath: Deno.execPath(),
        os: Deno.build.os,
        projectRoot: project,
      });
    } catch (err) {
      code = reportError(err, stderr, null);
    }
  } else {
    code = await runCli(Deno.args.filter((a) => a !== LOCKED_FLAG), {
      env,
      cwd,
      os: Deno.build.os,
      stdout,
      stderr,
      isTty: Deno.stderr.isTerminal(),
      stdinIsTty: Deno.stdin.isTerminal(),
      readLine,
      exit: (c) => Deno.exit(c),
      launcher: { denoPath: Deno.execPath(), mainModule: Deno.mainModule },
    });
  }
  Deno.exit(code);
}
