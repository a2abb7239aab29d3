/**
 * One-step install, for real: `deno task install --root <tmp>` (from this checkout, and
 * from a single-file bundle) writes a `<tmp>/bin/intendant` shim without --allow-all, and
 * that command works in a hermetic environment: --version, run (sh/setsid), sessions,
 * index, and `serve --locked` (which re-executes deno) with `search` answered by the
 * daemon over 127.0.0.1 while it runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { ENV_VARS_READ } from "../lib/config.ts";
import { installArgs, installFlags } from "../install.ts";
import { waitFor } from "./helpers/cli.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const dec = new TextDecoder();

/** The deno cache of this test run, shared with the installed command (no downloads). */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(DENO, { args: ["info", "--json"], stderr: "null" }).output();
  return JSON.parse(dec.decode(out.stdout)).denoDir;
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
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
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

  // serve --locked re-executes deno under the narrow profile; port 0 picks a free port.
  const cfg = resolveConfig(env, { cwd: world });
  const daemon = cmd(["serve", "--locked", "--port", "0"]).spawn();
  const served = Promise.all([daemon.status, new Response(daemon.stderr).text()]);
  void daemon.stdout.cancel();
  try {
    await waitFor(
      () => {
        try {
          return Deno.statSync(cfg.daemonJsonPath).isFile;
        } catch {
          return false;
        }
      },
      60_000,
      "daemon.json",
    );
    const info = JSON.parse(Deno.readTextFileSync(cfg.daemonJsonPath));
    const cov = await fetch(`http://127.0.0.1:${info.port}/api/coverage`, {
      headers: { authorization: `Bearer ${info.token}` },
    });
    assert.equal(cov.status, 200);
    await cov.body?.cancel();
    // The daemon answers over loopback: a refused connection or a missing net grant would
    // print a note on stderr and fall back to the store.
    const found = await run(["search", "wombat", "--json"]);
    assert.equal(found.stderr, "");
    assert.equal(JSON.parse(found.stdout).groups[0].session_id, id);
  } finally {
    stop(daemon);
  }
  const [status, stderr] = await served;
  assert.equal(status.code, 0, stderr);
}

Deno.test("the installed command's flags: no --allow-all, ffi or sys; env only the documented variables", () => {
  const flags = installFlags({ denoPath: "/opt/deno/bin/deno" });
  assert.ok(!flags.some((f) => /^(-A|--allow-all|--allow-ffi|--allow-sys|--allow-import)/.test(f)));
  assert.ok(flags.includes("--allow-net=127.0.0.1"));
  assert.ok(flags.includes(`--allow-env=${ENV_VARS_READ.join(",")}`));
  assert.ok(flags.includes("--allow-run=sh,setsid,deno,/opt/deno/bin/deno"));
  const fromCheckout = installArgs({
    root: "/r",
    module: join(REPO_ROOT, "main.ts"),
    denoPath: "/d",
  });
  assert.deepEqual(fromCheckout.slice(0, 7), [
    "install",
    "-g",
    "-f",
    "-n",
    "intendant",
    "--root",
    "/r",
  ]);
  assert.ok(fromCheckout.includes(join(REPO_ROOT, "deno.json")));
  const single = installArgs({ root: "/r", module: "/x/intendant.js", denoPath: "/d" });
  assert.ok(single.includes("--no-config"));
  assert.equal(single.at(-1), "/x/intendant.js");
});

Deno.test("deno task install (from the checkout) puts a working intendant on PATH", () =>
  withTempDir(async (root) => {
    const real = Deno.realPathSync(root);
    const bin = await installInto(join(real, "inst"));
    const shim = Deno.readTextFileSync(bin);
    assert.doesNotMatch(shim, /--allow-all|\s-A\s|--allow-ffi|--allow-sys/);
    assert.match(shim, /main\.ts/);
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
    // deno install gives every command a config of its own; the checkout's must not leak in.
    assert.doesNotMatch(shim, /--allow-all|\s-A\s|--allow-ffi|--allow-sys/);
    assert.ok(!shim.includes(join(REPO_ROOT, "deno.json")));
    assert.match(shim, /intendant\.js/);
    await exercise(bin, join(real, "world"));
  }));
