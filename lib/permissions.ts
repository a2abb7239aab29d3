/**
 * The permission profile: exactly what each long-running mode may touch, computed from a
 * ResolvedConfig. The static parts (net host, env names, no run/ffi/sys for the daemon)
 * are also declared as deno.json permission sets (`serve`, `run`); a test keeps the two
 * identical. The path parts cannot live in deno.json: permission sets expand neither `~`
 * nor `$HOME` nor any variable (verified with Deno 2.9.6), and the state root and agent
 * homes are per user. So `deno task start` launches main.ts under the small `launch` set,
 * which computes this profile and re-executes the program under it (see relaunch.ts).
 *   serve: net 127.0.0.1:<port>; read the state root and every agent home it indexes;
 *          write the state root only; env only the variables we read; no run, no ffi.
 *   run:   the headless runner: read/write the state root (or the pinned --log-file dir),
 *          read the project, write TMPDIR (private fallback), run `sh` and `setsid`.
 */
import { ENV_VARS_READ, type ResolvedConfig } from "./config.ts";

/** One mode's grants. */
export interface PermissionProfile {
  net: string[];
  read: string[];
  write: string[];
  env: string[];
  run: string[];
}

/** Static parts, mirrored in deno.json "permissions". */
export const STATIC_PROFILES = {
  serve: { env: [...ENV_VARS_READ], run: [] as string[] },
  run: { env: [...ENV_VARS_READ], run: ["sh", "setsid"] },
} as const;

/** The serve profile for `cfg`, plus any extra homes (leased or persisted) known at launch. */
export function serveProfile(
  cfg: ResolvedConfig,
  extraReadPaths: string[] = [],
): PermissionProfile {
  const homes = Object.values(cfg.agentHomes).map((h) => h.path);
  const read = cfg.messageSearch.homeOnly
    ? [cfg.stateRoot, ...extraReadPaths]
    : [cfg.stateRoot, ...homes, ...extraReadPaths];
  return {
    // Port 0 asks the OS for a free port: the host is granted without a port then.
    net: [cfg.server.port === 0 ? cfg.server.host : `${cfg.server.host}:${cfg.server.port}`],
    read: unique(read),
    write: [cfg.stateRoot],
    env: [...STATIC_PROFILES.serve.env],
    run: [],
  };
}

/** The runner profile: the state root (or pinned dir), the project, TMPDIR. */
export function runProfile(cfg: ResolvedConfig, projectRoot: string): PermissionProfile {
  const logDir = cfg.logFile ? [cfg.logFile] : [];
  return {
    net: [],
    read: unique([cfg.stateRoot, projectRoot, cfg.tmpDir, ...logDir]),
    write: unique([cfg.stateRoot, cfg.tmpDir, ...logDir]),
    env: [...STATIC_PROFILES.run.env],
    run: [...STATIC_PROFILES.run.run],
  };
}

/** deno run flags for a profile (none of --allow-all, --allow-ffi, --allow-sys). */
export function profileFlags(p: PermissionProfile): string[] {
  const flags = ["--no-prompt"];
  const list = (name: string, values: string[]) => {
    if (values.length > 0) flags.push(`--allow-${name}=${values.join(",")}`);
  };
  list("net", p.net);
  list("read", p.read);
  list("write", p.write);
  list("env", p.env);
  list("run", p.run);
  return flags;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
