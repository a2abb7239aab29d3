/**
 * The daemon as users run it, for the benchmark: `intendant serve --locked` started the
 * way the installed command starts it (`deno run <installFlags> main.ts`, install.ts), so
 * the process measured is the locked child with the daemon's V8 flags (lib/relaunch.ts),
 * its whole module graph (Hono, the dashboard bundle, the HTTP front), its startup (GC and
 * the verification of every generation) and its first sweep. It is driven over HTTP only,
 * through the TCP front, with the token from daemon.json; its memory is read from
 * /proc/<pid>/status of the daemon itself (daemon.json names its pid; the launcher that
 * waits on it is a separate process, sampled separately).
 * The one-shot CLI (`intendant search`) is started the same way, with no daemon running.
 * Everything lives under the corpus: the state root is the corpus's own (its logs/ holds
 * the native sessions), the agent homes are the corpus's homes, HOME is the corpus's user
 * home (Droid's `.factory`); the working directory and Deno's cache are a scratch
 * directory beside it. Nothing here reads the store: only the program does.
 */
import { join } from "node:path";
import { installFlags } from "../install.ts";
import { resolveConfig } from "../lib/config.ts";
import type { CorpusHomes } from "./corpus/mod.ts";
import { sleep } from "./harness.ts";

const REPO = new URL("..", import.meta.url).pathname;
const MAIN = join(REPO, "main.ts");

/** Where the daemon started on `c`'s homes keeps its store (as the program resolves it). */
export function daemonStoreRoot(c: { homes: CorpusHomes }): string {
  return resolveConfig(userEnv(c.homes, "/nonexistent"), { cwd: "/" }).messageSearch.storeRoot;
}

/**
 * The environment of a user whose homes are `h`: each source's own override names its
 * home in the corpus (the rules of issue 17's wiring: GEMINI_CLI_HOME replaces $HOME for
 * Gemini, which appends `.gemini`; QWEN_RUNTIME_DIR names Qwen's base; OpenCode's data
 * dir is `$XDG_DATA_HOME/opencode`; GOOSE_PATH_ROOT holds Goose's `data/`). Droid has no
 * override: HOME is the corpus's user home, which holds `.factory`. `scratch` (beside the
 * corpus) keeps Deno's cache, where it was when HOME pointed there: DENO_DIR names it.
 */
export function userEnv(h: CorpusHomes, scratch: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: h.userHome,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(scratch, ".cache", "deno"),
    INTENDANT_HOME: h.stateRoot,
    CODEX_HOME: h.codex,
    CLAUDE_CONFIG_DIR: h.claude,
    KIMI_CODE_HOME: h.kimi,
    PI_CODING_AGENT_DIR: h.pi,
    GEMINI_CLI_HOME: h.geminiCliHome,
    QWEN_RUNTIME_DIR: h.qwen,
    COPILOT_HOME: h.copilot,
    CURSOR_CONFIG_DIR: h.cursor,
    XDG_DATA_HOME: h.xdgData,
    GOOSE_PATH_ROOT: h.gooseRoot,
    TMPDIR: Deno.env.get("TMPDIR") ?? "/tmp",
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
}

/** `deno run …` of the installed command (install.ts: same flags, config and no type check). */
function intendantArgs(args: string[]): string[] {
  const flags = installFlags({ denoPath: Deno.execPath() });
  return [
    "run",
    "--quiet",
    "--no-check",
    "--config",
    join(REPO, "deno.json"),
    ...flags,
    MAIN,
    ...args,
  ];
}

/** VmRSS and VmHWM of a process, in bytes (0 when it is gone). */
export function procMemory(pid: number): { rss: number; peak: number } {
  let s: string;
  try {
    s = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { rss: 0, peak: 0 };
    throw err;
  }
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** A search page as the API answers it (the fields the bench reads). */
export interface Page {
  state: string;
  partial_reason?: string | null;
  took_ms: number;
  groups: { session_key: string; total_hits: number; hits: { superseded: boolean }[] }[];
}

/** A running `intendant serve --locked`. */
export interface RunningDaemon {
  /** The daemon's own pid (the locked child), and the launcher's. */
  pid: number;
  launcherPid: number;
  port: number;
  /** ms from spawn to daemon.json, and to the first sweep's end (coverage `ready`). */
  startedMs: number;
  readyMs: number;
  /** One search over HTTP: the page and the client-side wall time (request to parsed body). */
  search(q: string, o?: { complete?: boolean }): Promise<{ ms: number; page: Page }>;
  memory(): { rss: number; peak: number };
  /** SIGTERM through the launcher (as Ctrl-C would); resolves with the exit code. */
  stop(): Promise<number>;
}

/** Options for {@link startDaemon}. */
export interface StartOptions {
  /** The user's homes (the corpus's, or empty ones for the floor). */
  homes: CorpusHomes;
  /** An empty directory used as HOME. */
  home: string;
  /** Give up waiting for `ready` after this long. @default 600_000 */
  readyTimeoutMs?: number;
  /** Called while waiting for the first sweep (progress on stderr). */
  log?: (line: string) => void;
  /** More environment (a team URL, its machine name). */
  env?: Record<string, string>;
}

/** Starts the daemon and waits until its first sweep is done. */
export async function startDaemon(o: StartOptions): Promise<RunningDaemon> {
  const { homes, home, readyTimeoutMs = 600_000 } = o;
  await Deno.mkdir(homes.stateRoot, { recursive: true });
  const djson = join(homes.stateRoot, "daemon.json");
  await Deno.remove(djson).catch(() => {});
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: intendantArgs(["serve", "--locked", "--port", "0"]),
    cwd: home,
    clearEnv: true,
    env: { ...userEnv(homes, home), ...o.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) stderr = (stderr + dec.decode(chunk)).slice(-4000);
  })();
  let exited: number | null = null;
  const status = child.status.then((s) => (exited = s.code));
  const fail = (why: string) =>
    new Error(`The daemon ${why}: ${stderr.trim().split("\n").slice(-3).join(" / ")}`);
  let info: { pid: number; port: number; token: string } | null = null;
  while (info === null) {
    if (exited !== null) throw fail(`exited with code ${exited} before daemon.json`);
    try {
      const d = JSON.parse(await Deno.readTextFile(djson));
      if (typeof d.pid === "number" && d.pid !== child.pid) info = d;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound || err instanceof SyntaxError)) throw err;
    }
    if (info === null) await sleep(10);
  }
  const startedMs = performance.now() - t0;
  const base = `http://127.0.0.1:${info.port}`;
  const headers = { authorization: `Bearer ${info.token}` };
  const get = async (path: string) => {
    const res = await fetch(base + path, { headers });
    const body = await res.json();
    if (!res.ok) {
      throw new Error(`GET ${path.split("?")[0]}: HTTP ${res.status} ${body?.error ?? ""}`);
    }
    return body;
  };
  let lastLog = performance.now();
  for (;;) {
    if (exited !== null) throw fail(`exited with code ${exited} during its first sweep`);
    const c = await get("/api/coverage");
    if (c.state === "ready") break;
    if (performance.now() - t0 > readyTimeoutMs) throw fail("was not ready in time");
    if (o.log && performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      o.log(`bench: daemon first sweep… ${Math.round((performance.now() - t0) / 1000)} s`);
    }
    await sleep(50);
  }
  const readyMs = performance.now() - t0;
  const pid = info.pid;
  return {
    pid,
    launcherPid: child.pid,
    port: info.port,
    startedMs,
    readyMs,
    async search(q, so = {}) {
      const params = new URLSearchParams({ q });
      if (so.complete) params.set("complete", "true");
      const t = performance.now();
      const page = await get(`/api/sessions/message-search?${params}`) as Page;
      return { ms: performance.now() - t, page };
    },
    memory: () => procMemory(pid),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch (err) {
        if (!(err instanceof TypeError)) throw err; // already exited
      }
      await status;
      await errDone;
      if (exited !== 0) throw fail(`stopped with exit code ${exited}`);
      return exited;
    },
  };
}

/** Samples the daemon's RSS every 100 ms for `ms` after it went idle; the last sample and the largest. */
export async function idleRss(d: RunningDaemon, ms: number): Promise<{ rss: number; max: number }> {
  let max = 0;
  let rss = 0;
  for (const end = performance.now() + ms; performance.now() < end;) {
    rss = d.memory().rss;
    max = Math.max(max, rss);
    await sleep(100);
  }
  return { rss, max };
}

/** One `intendant search Q --json` in a new process: wall time and the page it printed. */
export async function oneShotSearch(
  h: CorpusHomes,
  home: string,
  q: string,
): Promise<{ ms: number; page: Page & { answered_by: string } }> {
  const r = await userArgsRun(h, home, ["search", q, "--json"]);
  return { ms: r.ms, page: JSON.parse(r.stdout) };
}

/** Wall time of a command that loads the program and does nothing (`intendant --version`). */
export async function oneShotFloor(h: CorpusHomes, home: string): Promise<number> {
  return (await userArgsRun(h, home, ["--version"])).ms;
}

/** Runs `intendant ARGS` to completion as the installed command; throws on a failure. */
export async function userArgsRun(
  h: CorpusHomes,
  home: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ ms: number; stdout: string }> {
  const t = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: intendantArgs(args),
    cwd: home,
    clearEnv: true,
    env: { ...userEnv(h, home), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t;
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim();
    throw new Error(`intendant ${args[0]} failed with exit code ${out.code}: ${err}`);
  }
  return { ms, stdout: new TextDecoder().decode(out.stdout) };
}
