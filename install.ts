/**
 * `deno task install [--root DIR] [FILE]`: puts an `intendant` command on PATH in one step
 * (a shim in `<root>/bin`, root = --root, else $DENO_INSTALL_ROOT, else ~/.deno). FILE
 * defaults to this checkout's main.ts; `dist/intendant.js` (from `deno task build`)
 * installs the single file instead.
 *
 * The shim is written here, not by `deno install -g`, because of two facts (Deno 2.9.6):
 * deno's shim says `exec deno run …`, which finds `deno` on PATH, and the README's route
 * (`npx -y deno@2.9.6 task install`) puts none there, so the first `intendant --help` died
 * with `deno: not found` (exit 127, issue 25); and from a checkout it copies the config
 * into `<root>/bin/.intendant/` and resolves the packages afresh, ignoring a lockfile put
 * beside the copy (measured: a seeded lock pinning ms 2.0.0 came out 2.1.3), so the
 * installed command could run package versions this checkout was never tested with.
 * Our shim is one line: `exec '<Deno.execPath()>' run --quiet <flags> --config
 * '<checkout>/runtime/deno.json' '<main.ts URL>' "$@"` — the Deno that installed it by its
 * absolute path (the same binary `--allow-run` grants and lib/relaunch.ts re-executes for
 * `--locked`: one deno, named once), the checkout's runtime config with its frozen lock
 * (only what main.ts imports; a pull applies at once, no reinstall), and its packages from
 * runtime/node_modules, which `deno task install` itself, running under that config, has
 * just filled (so the first run fetches nothing). The single file runs with `--no-config`
 * (a deno.json near it must not leak in). Written atomically with mode 0755; on Windows
 * the shim is `intendant.cmd`. If that Deno moves (an upgrade, a cleared npx cache), run
 * `deno task install` again. A `<root>/bin/.intendant/` left by an older, deno-written
 * install is removed: nothing refers to it any more.
 *
 * The flags (installFlags) are the union of what the subcommands need, never --allow-all,
 * --allow-ffi or --allow-sys, so every command runs as the README prints it. Read, write
 * and net are unscoped because what they must reach is per user and per invocation:
 * INTENDANT_HOME, the agent homes, --project, --log-file and TMPDIR for read and write; for
 * net, the daemon's private socket `<state-root>/run/http.sock` (Deno grants a unix socket
 * only by its exact path or with an unscoped --allow-net; a socket inside an allowed
 * directory is not covered) and the team database's host:port (INTENDANT_TEAM_URL /
 * --team). A grant frozen at install time would break the first time one of them moved.
 * Security: the installed command is not the sandbox. It may start `deno` (the relaunch),
 * and a process that may start deno may start it with any flags, so narrowing its net or
 * env would only break real use. The sandbox is `--locked` (`intendant serve --locked`,
 * likewise mcp, run, team): it re-executes the program under the exact profile of
 * lib/permissions.ts (net: 127.0.0.1:<port>, that one socket, the team host:port; read and
 * write per path), and the locked daemon gets no run at all. Env is the variables we read
 * plus the postgres client's (TEAM_CLIENT_ENV), which it reads on every connect.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ENV_VARS_READ } from "./lib/config.ts";
import { writeFileAtomic } from "./lib/durable/mod.ts";
import { TEAM_CLIENT_ENV } from "./lib/permissions.ts";
import { RUNTIME_CONFIG } from "./lib/relaunch.ts";

const ROOT = dirname(fileURLToPath(import.meta.url));
/** The command's name on PATH. */
export const COMMAND_NAME = "intendant";

/** The installed command's permission flags. */
export function installFlags(o: { denoPath: string }): string[] {
  return [
    "--no-prompt",
    "--allow-read",
    "--allow-write",
    // Unscoped: the daemon's unix socket and the team host are per user (see the header).
    "--allow-net",
    `--allow-env=${[...ENV_VARS_READ, ...TEAM_CLIENT_ENV].join(",")}`,
    // sh and setsid run the runner's commands; the deno the shim runs is the one the
    // relaunch spawns (Deno.execPath()), and Deno matches run paths exactly.
    `--allow-run=sh,setsid,${o.denoPath}`,
  ];
}

/** Options for {@link install}. */
export interface InstallOptions {
  /** The install root: the shim goes to `<root>/bin`. */
  root: string;
  /** The module to install: this checkout's main.ts or a single-file build. */
  module: string;
  /** The deno binary the shim runs (Deno.execPath()). */
  denoPath: string;
  /** Deno.build.os: "windows" gets a `.cmd` shim. */
  os: string;
}

/** The arguments the shim passes to deno, before the user's. */
export function shimArgs(o: Pick<InstallOptions, "module" | "denoPath">): string[] {
  const module = resolve(o.module);
  const config = module === join(ROOT, "main.ts")
    ? ["--config", join(ROOT, RUNTIME_CONFIG)]
    : ["--no-config"];
  // --quiet: Deno's own lines (a package fetch if runtime/node_modules was removed) are
  // noise to a command's user; the program's output and errors are untouched.
  return ["run", "--quiet", ...installFlags(o), ...config, pathToFileURL(module).href];
}

/** `s` as one POSIX sh word (quoted unless it is plainly safe). */
function shWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** `s` as one cmd.exe word: double-quoted when needed (no Windows path holds `"`), % doubled. */
function cmdWord(s: string): string {
  const t = s.replaceAll("%", "%%");
  return /^[\w@+=:,./\\-]+$/.test(t) ? t : `"${t}"`;
}

/** The shim's file name and text for `os`. */
export function shim(o: Omit<InstallOptions, "root">): { name: string; text: string } {
  const argv = [o.denoPath, ...shimArgs(o)];
  return o.os === "windows"
    ? {
      name: `${COMMAND_NAME}.cmd`,
      text: `@rem written by intendant install.ts\r\n@${argv.map(cmdWord).join(" ")} %*\r\n`,
    }
    : {
      name: COMMAND_NAME,
      text: `#!/bin/sh\n# written by intendant install.ts (deno task install)\nexec ${
        argv.map(shWord).join(" ")
      } "$@"\n`,
    };
}

/** Writes the shim into `<root>/bin`; returns its path. */
export async function install(o: InstallOptions): Promise<string> {
  const bin = join(o.root, "bin");
  await Deno.mkdir(bin, { recursive: true });
  const { name, text } = shim(o);
  const path = join(bin, name);
  await writeFileAtomic(path, text, { mode: 0o755 });
  try {
    await Deno.remove(join(bin, `.${COMMAND_NAME}`), { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return path;
}

if (import.meta.main) {
  const args = [...Deno.args];
  const at = args.indexOf("--root");
  const rootArg = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE");
  const root = rootArg ?? Deno.env.get("DENO_INSTALL_ROOT") ?? (home && join(home, ".deno"));
  if (!root || args.length > 1 || args.some((a) => a.startsWith("-"))) {
    console.error(
      "usage: deno task install [--root DIR] [FILE]   (FILE: main.ts or dist/intendant.js)",
    );
    Deno.exit(2);
  }
  // deno task runs in the checkout; a relative FILE means where the user typed it.
  const module = args[0]
    ? resolve(Deno.env.get("INIT_CWD") ?? Deno.cwd(), args[0])
    : join(ROOT, "main.ts");
  try {
    Deno.statSync(module);
    const denoPath = Deno.execPath();
    const path = await install({ root: resolve(root), module, denoPath, os: Deno.build.os });
    console.log(`Installed ${COMMAND_NAME}: ${path} (runs ${denoPath})`);
    const bin = dirname(path);
    const sep = Deno.build.os === "windows" ? ";" : ":";
    if (!(Deno.env.get("PATH") ?? "").split(sep).includes(bin)) {
      console.log(`Add ${bin} to PATH to run it by name: export PATH="${bin}:$PATH"`);
    }
  } catch (err) {
    console.error(`intendant install: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
