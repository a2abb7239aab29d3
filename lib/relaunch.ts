/**
 * `--locked`: re-executes the program under its exact permission profile. The launcher
 * (started with the small deno.json `launch` set, or broad flags for the single file)
 * resolves the configuration, computes the profile (permissions.ts) and spawns
 * `deno run <profile flags> <this module> <args>` with inherited stdio, forwarding
 * SIGINT/SIGTERM, and exits with the child's code. The child is the real program: it
 * runs with no --allow-all, no ffi, no sys, and (for serve) no run.
 * The child runs with `--quiet`: it loads the same module graph under the same config as
 * the launcher, so everything Deno itself would print (the "permissions in the config file
 * is an experimental feature" warning, npm "Download" lines on a cold cache) was already
 * printed once by the launcher; without it every line appeared twice (issue 14). Only
 * Deno's own diagnostics are silenced: the program's output and an uncaught error's report
 * still reach the inherited stderr.
 * The daemon's child also gets V8 flags (DAEMON_V8_FLAGS) and glibc allocator settings
 * (config.ts DAEMON_ALLOCATOR_ENV, unless the user set them): both measured on its resident
 * memory.
 * From a checkout the child runs under runtime/deno.json (RUNTIME_CONFIG), not deno.json:
 * the runtime config maps only the packages main.ts imports and has a frozen lock of its
 * own (runtime/deno.lock, every entry identical to deno.lock's, a test checks), with
 * `"nodeModulesDir": "auto"`, so its packages land in runtime/node_modules on first use,
 * silently under --quiet, and nothing only the tests or the build need (playwright-core,
 * esbuild, fast-check, preact) is ever fetched for the program. The launcher ran under the
 * same config (deno.json's runtime tasks, the installed shim), so the child finds them
 * installed.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ENV_TEAM_URL, type ResolvedConfig } from "./config.ts";
import {
  mcpProfile,
  profileFlags,
  runProfile,
  serveProfile,
  STATIC_PROFILES,
  teamProfile,
} from "./permissions.ts";

export const LOCKED_FLAG = "--locked";

/** The runtime config's file name, beside main.ts in a checkout (see the header). */
export const RUNTIME_CONFIG = "runtime/deno.json";

/**
 * V8 flags of the daemon (serve). A 4 MiB young generation instead of V8's default 16:
 * measured on the bench corpus (530k messages), idle RSS after the first sweep drops from
 * ≈ 175–209 MiB to ≈ 99 MiB with backfill time and query latency unchanged within noise;
 * `--memory-saver-mode` would bring idle to ≈ 87 MiB but slows the backfill 1.4×, and a
 * 1 MiB young generation with it 2.5× (bench/RESULTS.md). The bench runs its phases with
 * these same flags, so its figures are the daemon's.
 * A heap growing factor of 2.5 (V8 picks 1.1–4 from its GC speed; issue 28): an extraction
 * worker parsing unit after unit let garbage pile up to ≈ 185 MiB of heap and 150 MiB of
 * dead file buffers before a full GC, per worker. Measured on the same corpus, two workers:
 * the backfill's peak RSS fell from 647–772 to 436–461 MiB for ≈ 4 % of its time (a factor
 * of 2: 396–434 MiB for ≈ 8 %).
 */
export const DAEMON_V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=4",
  "--heap-growing-percent=150",
];

/** Options for {@link relaunchLocked}. */
export interface RelaunchOptions {
  cfg: ResolvedConfig;
  /** argv without --locked. */
  args: string[];
  /** Deno.mainModule */
  mainModule: string;
  /** Deno.execPath() */
  denoPath: string;
  os: string;
  /** For `run`: the project directory the runner works in. */
  projectRoot: string;
}

/** The child command line (exported for tests and `intendant permissions`). */
export function lockedCommand(o: RelaunchOptions): string[] {
  const mode = lockedMode(o.args);
  const profile = mode === "run"
    ? runProfile(o.cfg, o.projectRoot)
    : mode === "mcp"
    ? mcpProfile(o.cfg)
    : mode === "team"
    ? teamProfile(o.cfg)
    : serveProfile(o.cfg);
  // An explicit --allow-env REPLACES the set's env list (Deno 2.9.6), so it is passed only
  // when the profile reads more than the set declares (a configured team adds the postgres
  // client's names), and then in full.
  const setEnv: readonly string[] = STATIC_PROFILES[mode].env;
  const env = profile.env.every((e) => setEnv.includes(e)) ? [] : profile.env;
  const config = configBeside(o.mainModule);
  // From a source checkout the child uses the runtime config's permission set (the static
  // part of the profile) plus the per-user paths; the single file spells out every flag.
  const flags = config
    ? [`--config=${config}`, `-P=${mode}`, ...profileFlags({ ...profile, env, run: [] })]
    : profileFlags(profile);
  const v8 = mode === "serve" ? [`--v8-flags=${DAEMON_V8_FLAGS.join(",")}`] : [];
  return ["run", "--quiet", ...flags, ...v8, o.mainModule, ...withoutTeamFlag(o.args)];
}

/**
 * `args` without `--team URL` / `--team=URL`: the child gets the team URL in its
 * environment instead (relaunchLocked), because a URL may carry a password and a child's
 * argv is visible to every user in `ps`; its environment is not.
 */
export function withoutTeamFlag(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--team") {
      i++;
      continue;
    }
    if (args[i]!.startsWith("--team=")) continue;
    out.push(args[i]!);
  }
  return out;
}

function configBeside(mainModule: string): string | null {
  if (!mainModule.startsWith("file:")) return null;
  const config = join(dirname(fileURLToPath(mainModule)), RUNTIME_CONFIG);
  try {
    return Deno.statSync(config).isFile ? config : null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * What the child's environment adds to the inherited one: the team URL (from --team or
 * the environment), which travels there and never in its argv (withoutTeamFlag); and for
 * the daemon, the allocator settings (config.ts DAEMON_ALLOCATOR_ENV) the user did not set.
 */
export function lockedEnv(o: Pick<RelaunchOptions, "cfg" | "args">): Record<string, string> {
  const env: Record<string, string> = lockedMode(o.args) === "serve"
    ? { ...o.cfg.daemonAllocatorEnv }
    : {};
  if (o.cfg.team.url !== null) env[ENV_TEAM_URL] = o.cfg.team.url;
  return env;
}

/** Which profile a locked run of `args` gets. */
function lockedMode(args: readonly string[]): "run" | "mcp" | "team" | "serve" {
  const first = args[0];
  return first === "run" || first === "mcp" || first === "team" ? first : "serve";
}

/** Runs the program locked down and returns its exit code. */
export async function relaunchLocked(o: RelaunchOptions): Promise<number> {
  const child = new Deno.Command(o.denoPath, {
    args: lockedCommand(o),
    env: lockedEnv(o),
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const forward = (sig: Deno.Signal) => () => {
    try {
      child.kill(sig);
    } catch (err) {
      // Already exited.
      if (!(err instanceof TypeError)) throw err;
    }
  };
  const signals: Deno.Signal[] = o.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  const handlers = signals.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) Deno.addSignalListener(s, h);
  const status = await child.status;
  for (const [s, h] of handlers) Deno.removeSignalListener(s, h);
  return status.code;
}
