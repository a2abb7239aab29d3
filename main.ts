/**
 * The edge of the program: the only module that reads the environment, argv, cwd and
 * home. It resolves the configuration, installs the process-wide hooks, dispatches the
 * subcommand and prints errors as one line plus a hint with a distinct exit code.
 */
import { ENV_VARS_READ } from "./lib/config.ts";
import { runCli } from "./lib/cli/mod.ts";

if (import.meta.main) {
  const code = await runCli(Deno.args, {
    // Only the variables we document: Deno.env.toObject() fails under the locked-down profile.
    env: Object.fromEntries(ENV_VARS_READ.map((k) => [k, Deno.env.get(k)])),
    cwd: Deno.cwd(),
    os: Deno.build.os,
    stdout: (s) => Deno.stdout.writeSync(new TextEncoder().encode(s)),
    stderr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
    isTty: Deno.stderr.isTerminal(),
    exit: (code) => Deno.exit(code),
  });
  Deno.exit(code);
}
