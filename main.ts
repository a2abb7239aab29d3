/**
 * The edge of the program: the only module that reads the environment, argv, cwd and
 * home. It resolves the configuration, dispatches the subcommand (errors are printed as
 * one line plus a hint, with a distinct exit code), or with `--locked` re-executes the
 * program under its exact permission profile (lib/relaunch.ts).
 */
import { resolve } from "node:path";
import { ENV_VARS_READ, resolveConfig } from "./lib/config.ts";
import { reportError, runCli } from "./lib/cli/mod.ts";
import { LOCKED_FLAG, relaunchLocked } from "./lib/relaunch.ts";

/** Only the variables we document: Deno.env.toObject() fails under the locked-down profile. */
function readEnv(): Record<string, string | undefined> {
  return Object.fromEntries(ENV_VARS_READ.map((k) => [k, Deno.env.get(k)]));
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
  const write = (stream: typeof Deno.stdout) => (s: string) =>
    stream.writeSync(new TextEncoder().encode(s));
  const env = readEnv();
  const cwd = readCwd();
  let code: number;
  if (Deno.args.includes(LOCKED_FLAG)) {
    const args = Deno.args.filter((a) => a !== LOCKED_FLAG);
    try {
      const i = args.indexOf("--project");
      const project = i >= 0 && args[i + 1] ? resolve(cwd, args[i + 1]!) : cwd;
      const portAt = args.indexOf("--port");
      const port = portAt >= 0 ? Number(args[portAt + 1]) : undefined;
      const cfg = resolveConfig(env, { cwd, port: Number.isInteger(port) ? port : undefined });
      code = await relaunchLocked({
        cfg,
        args,
        mainModule: Deno.mainModule,
        denoPath: Deno.execPath(),
        os: Deno.build.os,
        projectRoot: project,
      });
    } catch (err) {
      code = reportError(err, write(Deno.stderr), null);
    }
  } else {
    code = await runCli(Deno.args, {
      env,
      cwd,
      os: Deno.build.os,
      stdout: write(Deno.stdout),
      stderr: write(Deno.stderr),
      isTty: Deno.stderr.isTerminal(),
      exit: (c) => Deno.exit(c),
    });
  }
  Deno.exit(code);
}
