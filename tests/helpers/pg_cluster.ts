/**
 * A real, throwaway PostgreSQL cluster for the team tests (issue 19). Each call of
 * `startPgCluster` / `withPgCluster` runs `initdb` into a fresh temp dir and `pg_ctl start`s a
 * private server on 127.0.0.1 and a free high port (unix socket in the same temp dir), so tests
 * never touch a system cluster and never share state.
 *
 * Invariants:
 * - Binaries: the highest /usr/lib/postgresql/<v>/bin with v ≥ 15 (Debian's layout), else
 *   `pg_config --bindir`, else `initdb` on PATH; the version is read from `initdb --version`
 *   and anything below 15 counts as missing (the team schema needs ≥ 15).
 * - LC_CTYPE is UTF-8 (`initdb --encoding=UTF8 --locale=<C.UTF-8 or another UTF-8 locale from
 *   `locale -a`>): with LC_CTYPE=C pg_trgm extracts NO trigrams from CJK text (the issue's
 *   trap), so a non-UTF-8 cluster would make every CJK search test meaningless.
 * - initdb/postgres refuse to run as root, and tests and CI run as root here: as root the
 *   binaries run as Debian's unprivileged `postgres` user through `runuser -u postgres --`
 *   (`setpriv` when runuser is absent), and the temp dir is chowned to that user.
 * - Auth: host connections use scram-sha-256 with a random superuser password (so later tests
 *   can really check a wrong password); the unix socket is `trust` for the helper's own use.
 * - Durability is traded for speed (fsync, synchronous_commit, full_page_writes off; `durable:
 *   true` keeps the server defaults, for the benchmark): the data
 *   dies with the test anyway.
 * - No leaks: the server is stopped with `pg_ctl stop -m immediate` and the dir removed in a
 *   finally; clusters still alive at process exit (a crashed test) are stopped synchronously
 *   from an `unload` handler. A SIGKILLed test process can still orphan a server — nothing in
 *   process can prevent that; its dir is named `intendant-pg-*` in the temp dir.
 *
 * Errors: with CI=true a missing PostgreSQL, a missing unprivileged user or a failed start
 * FAILS loudly with the reason; outside CI `withPgCluster` / `startPgCluster` print a banner
 * with the reason and return null, and the caller skips (print why, never pass silently).
 */
import { join } from "node:path";

/** A running throwaway cluster. */
export interface PgCluster {
  /** postgres://superuser:password@127.0.0.1:port/postgres */
  url: string;
  port: number;
  /** Always 127.0.0.1. */
  host: string;
  superuser: string;
  password: string;
  /** Directory holding initdb, pg_ctl, postgres, psql. */
  binDir: string;
  dataDir: string;
  /** Unix socket directory (inside the temp dir). */
  socketDir: string;
  /** The UTF-8 locale the cluster was initialised with. */
  locale: string;
  /**
   * Restarts the server as a crash would (`pg_ctl restart -m immediate`: every connection
   * is cut, the same port and options come back); resolves once it accepts again.
   */
  restart(): Promise<void>;
  /** Stops the server and removes its dir; idempotent. */
  stop(): Promise<void>;
}

const MIN_MAJOR = 15;
const SUPERUSER = "intendant_test";
const RUN_AS = "postgres";
const START_TIMEOUT_S = 30;
const START_ATTEMPTS = 3;

interface Toolchain {
  binDir: string;
  major: number;
  locale: string;
  /** Prefix that drops root privileges, empty when not root. */
  asUser: string[];
  /** uid/gid that must own the temp dir, null when not root. */
  owner: { uid: number; gid: number } | null;
}

/** Clusters not yet stopped, for the exit guard. */
const live = new Set<{ binDir: string; dataDir: string; asUser: string[]; tmp: string }>();
let guardInstalled = false;

async function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string } = {},
): Promise<{ ok: boolean; out: string }> {
  try {
    const o = await new Deno.Command(cmd, {
      args,
      cwd: opts.cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { ok: o.success, out: (dec.decode(o.stdout) + dec.decode(o.stderr)).trim() };
  } catch (e) {
    return { ok: false, out: e instanceof Error ? e.message : String(e) };
  }
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

async function findBinDir(): Promise<string[]> {
  const found: string[] = [];
  try {
    const majors = [...Deno.readDirSync("/usr/lib/postgresql")]
      .map((e) => Number(e.name))
      .filter((v) => Number.isInteger(v) && v >= MIN_MAJOR)
      .sort((a, b) => b - a);
    for (const v of majors) found.push(`/usr/lib/postgresql/${v}/bin`);
  } catch { /* not Debian's layout */ }
  const cfg = await run("pg_config", ["--bindir"]);
  if (cfg.ok && cfg.out) found.push(cfg.out);
  const which = await run("sh", ["-c", "command -v initdb"]);
  if (which.ok && which.out) found.push(which.out.replace(/\/initdb$/, ""));
  return found.filter((d) => isFile(join(d, "initdb")) && isFile(join(d, "pg_ctl")));
}

/** Picks C.UTF-8 when present, else any UTF-8 locale `locale -a` lists. */
async function findUtf8Locale(): Promise<string | null> {
  const r = await run("locale", ["-a"]);
  if (!r.ok) return null;
  const names = r.out.split("\n").map((s) => s.trim()).filter(Boolean);
  const utf8 = names.filter((n) => /\.utf-?8$/i.test(n));
  return utf8.find((n) => /^C\.utf-?8$/i.test(n)) ?? utf8.find((n) => /^en_US\./i.test(n)) ??
    utf8[0] ?? null;
}

async function dropPrivileges(): Promise<
  { asUser: string[]; owner: { uid: number; gid: number } | null } | string
> {
  if (Deno.uid() !== 0) return { asUser: [], owner: null };
  const id = await run("id", ["-u", RUN_AS]);
  const gid = await run("id", ["-g", RUN_AS]);
  if (!id.ok || !gid.ok) {
    return `running as root and there is no unprivileged "${RUN_AS}" user to run PostgreSQL as (Debian's postgresql package creates it)`;
  }
  const owner = { uid: Number(id.out), gid: Number(gid.out) };
  if ((await run("sh", ["-c", "command -v runuser"])).ok) {
    return { asUser: ["runuser", "-u", RUN_AS, "--"], owner };
  }
  if ((await run("sh", ["-c", "command -v setpriv"])).ok) {
    return {
      asUser: ["setpriv", `--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--init-groups", "--"],
      owner,
    };
  }
  return "running as root and neither runuser nor setpriv is available to drop privileges";
}

/** Everything needed to start a cluster, or the reason it cannot be started. */
async function probe(): Promise<Toolchain | string> {
  const dirs = await findBinDir();
  let best: { binDir: string; major: number } | null = null;
  const seen: string[] = [];
  for (const binDir of dirs) {
    const v = await run(join(binDir, "initdb"), ["--version"]);
    const major = Number(/\(PostgreSQL\)\s+(\d+)/.exec(v.out)?.[1] ?? NaN);
    seen.push(`${binDir} (${v.out || "no version"})`);
    if (major >= MIN_MAJOR && (!best || major > best.major)) best = { binDir, major };
  }
  if (!best) {
    return seen.length
      ? `no PostgreSQL >= ${MIN_MAJOR} found (saw: ${seen.join("; ")})`
      : `no PostgreSQL binaries found (looked in /usr/lib/postgresql/*/bin, pg_config, PATH)`;
  }
  const locale = await findUtf8Locale();
  if (!locale) return `no UTF-8 locale available (locale -a lists none); initdb needs one`;
  const priv = await dropPrivileges();
  if (typeof priv === "string") return priv;
  return { binDir: best.binDir, major: best.major, locale, ...priv };
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function installExitGuard(): void {
  if (guardInstalled) return;
  guardInstalled = true;
  globalThis.addEventListener("unload", () => {
    for (const c of live) {
      const [cmd, ...pre] = [...c.asUser, join(c.binDir, "pg_ctl")];
      try {
        new Deno.Command(cmd!, {
          args: [...pre, "stop", "-D", c.dataDir, "-m", "immediate", "-w"],
          stdout: "null",
          stderr: "null",
          cwd: c.tmp,
        }).outputSync();
        Deno.removeSync(c.tmp, { recursive: true });
      } catch { /* best effort at exit */ }
    }
  });
}

function unavailable(reason: string): null {
  if (Deno.env.get("CI") === "true") {
    throw new Error(`PostgreSQL is required for the team tests under CI: ${reason}`);
  }
  console.error(
    `\n${"!".repeat(78)}\n!! POSTGRESQL TESTS SKIPPED: ${reason}.\n` +
      `!! Install it with: sudo apt-get install -y postgresql\n${"!".repeat(78)}\n`,
  );
  return null;
}

/** Runs a PostgreSQL binary as the unprivileged user, in `cwd`. */
function pgRun(tc: Toolchain, bin: string, args: string[], cwd: string) {
  const full = [...tc.asUser, join(tc.binDir, bin), ...args];
  return run(full[0]!, full.slice(1), { cwd });
}

/**
 * Starts a throwaway cluster. Returns null (after printing why) when PostgreSQL is missing or
 * fails to start outside CI; throws with the reason under CI=true.
 */
export async function startPgCluster(
  o: { durable?: boolean; settings?: readonly string[] } = {},
): Promise<PgCluster | null> {
  const tc = await probe();
  if (typeof tc === "string") return unavailable(tc);
  const tmp = await Deno.makeTempDir({ prefix: "intendant-pg-" });
  const dataDir = join(tmp, "data");
  const socketDir = join(tmp, "sock");
  const password = crypto.randomUUID().replaceAll("-", "");
  const handle = { binDir: tc.binDir, dataDir, asUser: tc.asUser, tmp };
  let started = false;
  try {
    await Deno.mkdir(socketDir, { mode: 0o700 });
    await Deno.writeTextFile(join(tmp, "pwfile"), `${password}\n`);
    if (tc.owner) {
      for (const p of [tmp, socketDir, join(tmp, "pwfile")]) {
        await Deno.chown(p, tc.owner.uid, tc.owner.gid);
      }
    }
    const init = await pgRun(tc, "initdb", [
      "-D",
      dataDir,
      "-U",
      SUPERUSER,
      `--pwfile=${join(tmp, "pwfile")}`,
      "--auth-host=scram-sha-256",
      "--auth-local=trust",
      "--encoding=UTF8",
      `--locale=${tc.locale}`,
      "--no-sync",
    ], tmp);
    await Deno.remove(join(tmp, "pwfile"));
    if (!init.ok) throw new Error(`initdb failed in "${dataDir}": ${init.out}`);
    live.add(handle);
    installExitGuard();
    let port = 0;
    let lastErr = "";
    // A free port can be taken between probing and binding; retry with a new one.
    for (let attempt = 0; attempt < START_ATTEMPTS && !started; attempt++) {
      port = freePort();
      const opts = [
        `-p ${port}`,
        `-k ${socketDir}`,
        "-c listen_addresses=127.0.0.1",
        // The benchmark runs durable (a server's real commit cost); tests do not.
        ...(o.durable
          ? []
          : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
        // Server settings of the caller's choosing (the benchmark sizes shared_buffers).
        ...(o.settings ?? []).map((kv) => `-c ${kv}`),
      ].join(" ");
      const logFile = join(tmp, `server-${attempt}.log`);
      const r = await pgRun(tc, "pg_ctl", [
        "start",
        "-D",
        dataDir,
        "-l",
        logFile,
        "-w",
        "-t",
        String(START_TIMEOUT_S),
        "-o",
        opts,
      ], tmp);
      if (r.ok) {
        started = true;
        break;
      }
      const log = await Deno.readTextFile(logFile).catch(() => "");
      lastErr = `${r.out}\n${log}`.trim();
    }
    if (!started) {
      throw new Error(`pg_ctl start failed after ${START_ATTEMPTS} attempts: ${lastErr}`);
    }
    await waitAccepting(port);
    let stopped = false;
    return {
      url: `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`,
      port,
      host: "127.0.0.1",
      superuser: SUPERUSER,
      password,
      binDir: tc.binDir,
      dataDir,
      socketDir,
      locale: tc.locale,
      async restart() {
        const r = await pgRun(tc, "pg_ctl", [
          "restart",
          "-D",
          dataDir,
          "-m",
          "immediate",
          "-w",
          "-t",
          String(START_TIMEOUT_S),
          "-l",
          join(tmp, "server-restart.log"),
        ], tmp);
        if (!r.ok) throw new Error(`pg_ctl restart failed for "${dataDir}": ${r.out}`);
        await waitAccepting(port);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopCluster(tc, handle);
      },
    };
  } catch (e) {
    await stopCluster(tc, handle);
    // A present PostgreSQL that will not start is reported like a missing one: fatal under
    // CI, a loud skip banner (with the full reason) on a developer machine.
    return unavailable(e instanceof Error ? e.message : String(e));
  }
}

/** pg_ctl -w already waited for "ready"; also prove the TCP listener answers. */
async function waitAccepting(port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_S * 1000;
  for (;;) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      return;
    } catch (e) {
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL started but 127.0.0.1:${port} refuses connections: ${e}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function stopCluster(
  tc: Toolchain,
  handle: { dataDir: string; tmp: string },
): Promise<void> {
  try {
    // postmaster.pid exists whenever a server may be up, including a start that timed out.
    if (isFile(join(handle.dataDir, "postmaster.pid"))) {
      const r = await pgRun(
        tc,
        "pg_ctl",
        ["stop", "-D", handle.dataDir, "-m", "immediate", "-w"],
        handle.tmp,
      );
      if (!r.ok) throw new Error(`pg_ctl stop failed for "${handle.dataDir}": ${r.out}`);
    }
  } finally {
    for (const h of live) if (h.tmp === handle.tmp) live.delete(h);
    await Deno.remove(handle.tmp, { recursive: true }).catch(() => {});
  }
}

/**
 * Runs `fn` against a fresh cluster and always stops it and removes its dir afterwards.
 * Returns null without calling `fn` when PostgreSQL is unavailable outside CI.
 */
export async function withPgCluster<T>(
  fn: (pg: PgCluster) => Promise<T> | T,
): Promise<T | null> {
  const pg = await startPgCluster();
  if (!pg) return null;
  try {
    return await fn(pg);
  } finally {
    await pg.stop();
  }
}
