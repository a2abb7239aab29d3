/**
 * `deno task install [--root DIR] [FILE]`: puts an `intendant` command on PATH in one step,
 * with `deno install -g` (a shim in `<root>/bin`, root = --root, else $DENO_INSTALL_ROOT,
 * else ~/.deno). FILE defaults to this checkout's main.ts; `dist/intendant.js` (from
 * `deno task build`) installs the single file instead.
 *
 * From a checkout, deno install copies deno.json into `<root>/bin/.intendant/` and wants a
 * lockfile beside the copy; deno.json's `lock.frozen` would refuse to create one, and
 * letting it resolve afresh would pick whatever the registry has today. So our deno.lock is
 * copied there first and the install runs with --frozen=false: deno only adds its "links"
 * entry, every package stays at the version this checkout was tested with. The installed
 * command runs the checkout's code (edits apply at once); re-run after changing deno.json.
 *
 * The flags (installFlags) are the union of what the subcommands need, never --allow-all,
 * --allow-ffi or --allow-sys. Read and write are unscoped because the paths are per user
 * and per invocation (INTENDANT_HOME, the agent homes, --project, --log-file, TMPDIR): a
 * grant frozen at install time would break the first time one of them moved. The one
 * broad right is running `deno`: `serve --locked` and `run --locked` re-execute the program
 * (lib/relaunch.ts) under the exact, path-scoped profile, and a process that may start
 * deno may start it with any flags. That is the price of the lock-down, and only the
 * launcher holds it; the locked child gets no deno, and no run at all for serve.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ENV_VARS_READ } from "./lib/config.ts";

const ROOT = dirname(fileURLToPath(import.meta.url));
/** The command's name on PATH. */
export const COMMAND_NAME = "intendant";

/** The installed command's permission flags. */
export function installFlags(o: { denoPath: string }): string[] {
  return [
    "--no-prompt",
    "--allow-read",
    "--allow-write",
    // serve binds 127.0.0.1 on any --port; search (and url/token) reach the daemon there.
    "--allow-net=127.0.0.1",
    `--allow-env=${ENV_VARS_READ.join(",")}`,
    // sh and setsid run the runner's commands. deno twice: the shim starts `deno` from
    // PATH, while relaunch spawns Deno.execPath(), the resolved binary; a symlinked deno
    // (Homebrew, npm) makes those two different paths, and Deno matches paths exactly.
    `--allow-run=sh,setsid,deno,${o.denoPath}`,
  ];
}

/** Options for {@link installArgs}. */
export interface InstallOptions {
  /** Installation root; the shim goes to `<root>/bin`. */
  root: string;
  /** The module to install: this checkout's main.ts or a single-file build. */
  module: string;
  /** The deno binary the relaunch will find (Deno.execPath()). */
  denoPath: string;
}

/** Whether `module` is the checkout's main.ts (config and lock travel along) or a single file. */
function fromCheckout(module: string): boolean {
  return resolve(module) === join(ROOT, "main.ts");
}

/** The `deno install` argument list. */
export function installArgs(o: InstallOptions): string[] {
  const config = fromCheckout(o.module)
    ? ["--config", join(ROOT, "deno.json"), "--frozen=false"]
    // The single file imports nothing: a deno.json found near it must not leak in.
    : ["--no-config"];
  return [
    "install",
    "-g",
    "-f",
    "-n",
    COMMAND_NAME,
    "--root",
    o.root,
    // deno run does not type-check either; a type error elsewhere must not block install.
    "--no-check",
    ...config,
    ...installFlags({ denoPath: o.denoPath }),
    resolve(o.module),
  ];
}

/** Seeds the lockfile (from a checkout), runs deno install; returns its exit code. */
export async function install(o: InstallOptions): Promise<number> {
  if (fromCheckout(o.module)) {
    const dir = join(o.root, "bin", `.${COMMAND_NAME}`);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.copyFile(join(ROOT, "deno.lock"), join(dir, "deno.lock"));
  }
  const child = new Deno.Command(o.denoPath, {
    args: installArgs(o),
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
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
  Deno.exit(
    await install({
      root: resolve(root),
      // deno task runs in the checkout; a relative FILE means where the user typed it.
      module: args[0]
        ? resolve(Deno.env.get("INIT_CWD") ?? Deno.cwd(), args[0])
        : join(ROOT, "main.ts"),
      denoPath: Deno.execPath(),
    }),
  );
}
