/**
 * One-step install, for real: `deno task install --root <tmp>` (from this checkout, and
 * from a single-file bundle) writes a `<tmp>/bin/intendant` shim without --allow-all that
 * runs the Deno that installed it by its absolute path (from the checkout with its
 * runtime config and frozen lock), and that command works in a
 * hermetic environment whose PATH holds NO deno (`/usr/bin:/bin`, what the README's npx
 * route leaves a user with; issue 25): --version, run (sh/setsid), sessions, index, plain
 * `serve` (its default command: the daemon's private unix socket), a team command (the
 * postgres client's PG* variables), and `serve --locked` (which re-executes deno) with
 * `search` answered by the daemon over 127.0.0.1 while it runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { ENV_VARS_READ } from "../lib/config.ts";
import { TEAM_CLIENT_ENV } from "../lib/permissions.ts";
import { RUNTIME_CONFIG } from "../lib/relaunch.ts";
import { installFlags, shim, shimArgs } from "../install.ts";
import { waitFor } from "./helpers/cli.ts";
import { denoDir } from "./helpers/deno_dir.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const dec = new TextDecoder();

/** A PATH as a fresh machine has it: no deno on it (checked by the tests). */
export const PATH_WITHOUT_DENO = "/usr/bin:/bin";

/** The shim runs this test's deno by its absolute path, and nothing on PATH. */
function assertPinned(text: string): void {
  assert.ok(text.startsWith("#!/bin/sh\n"), text);
  assert.ok(text.includes(`\nexec ${DENO} run --quiet `), text);
  assert.doesNotMatch(text, /exec deno /);
  // The PATH the commands below run with has no deno: the pin is what makes them work.
  for (const dir of PATH_WITHOUT_DENO.split(":")) {
    assert.throws(() => Deno.statSync(join(dir, "deno")), Deno.errors.NotFound);
  }
}

async function installInto(root: string, file: string[] = []): Promise<string> {
  const r = await new Deno.Command(DENO, {
    args: ["task", "--quiet", "install", "--root", root, ...file],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, dec.decode(r.stderr));
  return join(root, "bin", "intendant");
}

function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** SIGTERM to `child` unless it already exited (its status and stderr then say why). */
function stop(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGTERM");
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
}

/** Exercises an installed command in a hermetic environment rooted at `world`. */
async function exercise(bin: string, world: string): Promise<void> {
  const env: Record<string, string> = {
    PATH: PATH_WITHOUT_DENO,
    DENO_DIR: await denoDir(),
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    // Every agent home is read as a user's would be (they point into `world`, empty).
    ...hermeticEnv(world, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" }),
  };
  Deno.mkdirSync(env.TMPDIR!, { recursive: true });
  const cmd = (args: string[]) =>
    new Deno.Command(bin, {
      args,
      cwd: world,
      clearEnv: true,
      env,
      stdout: "piped",
      stderr: "piped",
    });
  const run = async (args: string[]) => {
    const o = await cmd(args).output();
    const r = { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
    assert.equal(r.code, 0, `intendant ${args.join(" ")}: ${r.stderr}`);
    return r;
  };

  assert.match((await run(["--version"])).stdout, /^intendant \d+\.\d+\.\d+\n$/);
  const started = await run(["run", "Check the installed wombat command"]);
  const id = /^session (\S+)$/m.exec(started.stdout)?.[1];
  assert.ok(id, started.stdout);
  const listed = await run(["sessions"]);
  assert.ok(listed.stdout.includes(id), listed.stdout);
  assert.match(listed.stdout, /Check the installed wombat command/);
  assert.match((await run(["index"])).stdout, /^intendant +1 /m);
  // A team command reaches the postgres client, which reads PG* variables on every connect:
  // nothing listens on port 1, so it fails connecting (exit 1, the connect hint), never on
  // a variable the command may not read.
  const team = await cmd(["team", "status", "--team", "postgres://u@127.0.0.1:1/db"]).output();
  const teamErr = dec.decode(team.stderr);
  assert.equal(team.code, 1, teamErr);
  assert.doesNotMatch(teamErr, /Requires \w+ access|NotCapable/);
  assert.match(teamErr, /\nhint: check the team URL's host and port/);

  // Plain serve (the installed command's default), unlocked: it listens on 127.0.0.1 and on
  // its private unix socket in the state root.
  const cfg = resolveConfig(env, { cwd: world });
  await serveUntilAnswering(cmd(["--port", "0"]), cfg.daemonJsonPath);

  // serve --locked re-executes deno under the narrow profile; port 0 picks a free port.
  await serveUntilAnswering(
    cmd(["serve", "--locked", "--port", "0"]),
    cfg.daemonJsonPath,
    async () => {
      // The daemon answers over loopback: a refused connection or a missing net grant would
      // print a note on stderr and fall back to the store.
      const found = await run(["search", "wombat", "--json"]);
      assert.equal(found.stderr, "");
      assert.equal(JSON.parse(found.stdout).groups[0].session_id, id);
    },
  );
}

/**
 * Starts `serve`, waits until its API answers, runs `then`, stops it with SIGTERM and
 * asserts a clean exit (0, with its stderr as the message otherwise).
 */
async function serveUntilAnswering(
  serve: Deno.Command,
  daemonJsonPath: string,
  then: () => Promise<void> = async () => {},
): Promise<void> {
  const daemon = serve.spawn();
  const served = Promise.all([daemon.status, new Response(daemon.stderr).text()]);
  void daemon.stdout.cancel();
  let exited = false;
  void daemon.status.then(() => (exited = true));
  try {
    // An early exit ends the wait at once; its code and stderr are asserted below.
    await waitFor(() => exited || existsFile(daemonJsonPath), 60_000, "daemon.json");
    if (exited) {
      const [status, stderr] = await served;
      assert.fail(`serve exited before answering (code ${status.code}): ${stderr}`);
    }
    const info = JSON.parse(Deno.readTextFileSync(daemonJsonPath));
    const cov = await fetch(`http://127.0.0.1:${info.port}/api/coverage`, {
      headers: { authorization: `Bearer ${info.token}` },
    });
    assert.equal(cov.status, 200);
    await cov.body?.cancel();
    await then();
  } finally {
    stop(daemon);
  }
  const [status, stderr] = await served;
  assert.equal(status.code, 0, stderr);
}

Deno.test("the installed command's flags: no --allow-all, ffi or sys; env the variables any command reads", () => {
  const flags = installFlags({ denoPath: "/opt/deno/bin/deno" });
  assert.ok(!flags.some((f) => /^(-A|--allow-all|--allow-ffi|--allow-sys|--allow-import)/.test(f)));
  // Unscoped net: the daemon's unix socket and the team host are per user (install.ts).
  assert.ok(flags.includes("--allow-net"));
  assert.ok(flags.includes(`--allow-env=${[...ENV_VARS_READ, ...TEAM_CLIENT_ENV].join(",")}`));
  // The one deno the shim runs; no bare "deno" to find on PATH.
  assert.ok(flags.includes("--allow-run=sh,setsid,/opt/deno/bin/deno"));
  const fromCheckout = shimArgs({ module: join(REPO_ROOT, "main.ts"), denoPath: "/d" });
  // The runtime config (only what main.ts imports, its lock frozen), never the dev config.
  assert.deepEqual(fromCheckout.slice(-3), [
    "--config",
    join(REPO_ROOT, RUNTIME_CONFIG),
    `file://${join(REPO_ROOT, "main.ts")}`,
  ]);
  assert.ok(!fromCheckout.includes(join(REPO_ROOT, "deno.json")));
  const single = shimArgs({ module: "/x/intendant.js", denoPath: "/d" });
  assert.deepEqual(single.slice(-2), ["--no-config", "file:///x/intendant.js"]);
});

Deno.test("shim() names one deno by its absolute path, quoted for sh, and writes a .cmd on Windows", () => {
  const sh = shim({
    module: "/a b/intendant.js",
    denoPath: "/home/o'neil/.npm/_npx/x/deno",
    os: "linux",
  });
  assert.equal(sh.name, "intendant");
  const lines = sh.text.split("\n");
  assert.equal(lines[0], "#!/bin/sh");
  assert.ok(
    lines[2]!.startsWith(`exec '/home/o'\\''neil/.npm/_npx/x/deno' run --quiet --no-prompt `),
    lines[2],
  );
  // The path is a URL (its space escaped); the user's arguments pass through untouched.
  assert.ok(lines[2]!.endsWith(` --no-config file:///a%20b/intendant.js "$@"`), lines[2]);
  assert.equal(lines.length, 4, "three lines and a final newline");
  const cmd = shim({
    module: "C:/x/intendant.js",
    denoPath: "C:\\Program Files\\deno.exe",
    os: "windows",
  });
  assert.equal(cmd.name, "intendant.cmd");
  assert.match(cmd.text, /^@rem .*\r\n@"C:\\Program Files\\deno\.exe" run --quiet .* %\*\r\n$/);
});

Deno.test("deno task install (from the checkout) puts a working intendant on PATH", () =>
  withTempDir(async (root) => {
    const real = Deno.realPathSync(root);
    const bin = await installInto(join(real, "inst"));
    const shim = Deno.readTextFileSync(bin);
    assert.doesNotMatch(shim, /--allow-all|\s-A\s|--allow-ffi|--allow-sys/);
    assert.match(shim, /main\.ts/);
    assertPinned(shim);
    await exercise(bin, join(real, "world"));
  }));

Deno.test("deno task install dist/intendant.js installs the single file, which works the same", () =>
  withTempDir(async (root) => {
    const real = Deno.realPathSync(root);
    const file = join(real, "dist", "intendant.js");
    const built = await new Deno.Command(DENO, {
      args: ["bundle", "--platform=deno", "-o", file, join(REPO_ROOT, "main.ts")],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, dec.decode(built.stderr));
    const bin = await installInto(join(real, "inst"), [file]);
    const shim = Deno.readTextFileSync(bin);
    // The single file runs with --no-config: the checkout's config must not leak in.
    assert.doesNotMatch(shim, /--allow-all|\s-A\s|--allow-ffi|--allow-sys/);
    assert.ok(!shim.includes(join(REPO_ROOT, "deno.json")));
    assert.match(shim, /intendant\.js/);
    assertPinned(shim);
    await exercise(bin, join(real, "world"));
  }));
