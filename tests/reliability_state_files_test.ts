/**
 * Reliability-plan F5: the state root's own files are read safely. Every file of the state
 * root the daemon or the CLI reads — cursor.key, daemon.json, token, session_names.json,
 * a leased-active entry, the store's manifest.json and manifest.journal — is replaced by a
 * symlink to /dev/zero, a FIFO, a symlink to a file outside, a huge (sparse, 2 GiB) file and
 * garbage. Then the REAL daemon starts (the exact child `serve --locked` re-executes) and
 * serves: its peak RSS (VmHWM from /proc) stays bounded, nothing blocks or hangs (every step
 * under a timeout), the outside file is neither served nor touched, cursor.key and token
 * are replaced (one line each on stderr), the index is rebuilt, and shutdown is clean.
 * The CLI (`search`, `sessions`) meets the same plants with no daemon running.
 * By default the five variants each plant all seven files at once; INTENDANT_STRESS=1 runs
 * every file × variant on its own (35 daemon starts).
 * Negative control: the read Deno.readFile does (read until EOF) on the /dev/zero link is
 * still going at a 64 MiB guard, and on the FIFO it blocks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { resolveConfig, type ResolvedConfig } from "../lib/config.ts";
import { lockedCommand } from "../lib/relaunch.ts";
import { createMessageIndex, registerLeasedHome } from "../lib/message_search/mod.ts";
import { setOverlayName } from "../lib/session_log/mod.ts";
import { loadCursorKey, loadOrCreateToken } from "../lib/server/mod.ts";
import { readContained } from "../lib/durable/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { MAIN, waitFor } from "./helpers/cli.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { DENO, hermeticEnv, withTempDir } from "./helpers/temp.ts";

const WORD = "stateroottapir";
const CANARY = "CANARYF5outsideSTATE";
const VARIANTS = ["zero", "fifo", "outside", "huge", "garbage"] as const;
type Variant = (typeof VARIANTS)[number];
const FILES = [
  "cursor.key",
  "daemon.json",
  "token",
  "session_names.json",
  "leased-active entry",
  "manifest.json",
  "manifest.journal",
] as const;
type StateFile = (typeof FILES)[number];
/** Far above a healthy daemon (≈ 100 MiB here), far below one read of a planted file. */
const RSS_BOUND_MIB = 512;
const STEP_TIMEOUT_MS = 30_000;

function pathOf(cfg: ResolvedConfig, f: StateFile): string {
  const cache = cfg.messageSearch.cacheRoot;
  switch (f) {
    case "cursor.key":
      return join(cache, "cursor.key");
    case "daemon.json":
      return cfg.daemonJsonPath;
    case "token":
      return join(cfg.stateRoot, "token");
    case "session_names.json":
      return cfg.sessionNamesPath;
    case "leased-active entry":
      return join(cache, "leased-active", "lease1.json");
    case "manifest.json":
      return join(cfg.messageSearch.storeRoot, "manifest.json");
    case "manifest.journal":
      return join(cfg.messageSearch.storeRoot, "manifest.journal");
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A state root with an index, a journal, a key, a token, a name and a lease entry. */
async function buildWorld(root: string) {
  const port = freePort();
  const env: Record<string, string> = { ...hermeticEnv(root), INTENDANT_PORT: String(port) };
  Deno.mkdirSync(env.TMPDIR!, { recursive: true });
  const cfg = resolveConfig(env, { cwd: root });
  const s = await writeNativeSession(cfg.logsDir, { turns: 2, task: `Check the ${WORD} loop` });
  const { indexer } = await createMessageIndex(cfg);
  await indexer.sweep();
  await writeNativeSession(cfg.logsDir, { turns: 1, task: "A second session" });
  await indexer.sweep(); // a journal line
  await loadCursorKey(cfg.messageSearch.cacheRoot);
  await loadOrCreateToken(cfg.stateRoot);
  await setOverlayName(cfg.sessionNamesPath, { source: "codex", sessionId: "t1", name: "Named" });
  const home = join(root, "lease-home");
  Deno.mkdirSync(home);
  await registerLeasedHome(cfg.messageSearch.cacheRoot, {
    leaseId: "lease1",
    source: "codex",
    home,
  });
  Deno.writeTextFileSync(cfg.daemonJsonPath, "{}");
  for (const f of FILES) assert.ok(Deno.lstatSync(pathOf(cfg, f)).isFile, `${f} exists`);
  const outside = join(root, "outside");
  Deno.mkdirSync(outside);
  return { cfg, env, port, outside, sessionId: s.id };
}

function plant(path: string, v: Variant, outside: string, f: StateFile): void {
  Deno.removeSync(path);
  switch (v) {
    case "zero":
      return Deno.symlinkSync("/dev/zero", path);
    case "fifo": {
      const r = new Deno.Command("mkfifo", { args: [path] }).outputSync();
      assert.ok(r.success);
      return;
    }
    case "outside": {
      // Plausible content: a valid token, a names overlay, a lease naming an outside home.
      const target = join(outside, f.replace(/\W/g, "_"));
      const text = f === "token"
        ? `${CANARY}${"A".repeat(30)}\n`
        : f === "session_names.json"
        ? JSON.stringify({ codex: { t1: CANARY } })
        : f === "leased-active entry"
        ? JSON.stringify({ source: "codex", home: outside, lease_id: CANARY, created_at_ms: 1 })
        : `${CANARY}\n`;
      Deno.writeTextFileSync(target, text);
      return Deno.symlinkSync(target, path);
    }
    case "huge":
      Deno.writeFileSync(path, new Uint8Array(0), { mode: 0o600 });
      return Deno.truncateSync(path, 2 * 1024 ** 3);
    case "garbage":
      return Deno.writeFileSync(path, crypto.getRandomValues(new Uint8Array(4096)), {
        mode: 0o600,
      });
  }
}

/** Peak RSS of `pid` so far (VmHWM), in MiB; null once it is gone. */
function vmHwmMiB(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Polls a child's VmHWM until it exits. */
function watchRss(pid: number): { peak: () => number; stop: () => void } {
  let peak = 0;
  const tick = () => (peak = Math.max(peak, vmHwmMiB(pid) ?? 0));
  const timer = setInterval(tick, 25);
  return { peak: () => (tick(), peak), stop: () => clearInterval(timer) };
}

/** Races `p` against the step timeout: "blocked" when it does not settle in time. */
async function step<T>(p: Promise<T>, ms = STEP_TIMEOUT_MS): Promise<T | "blocked"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<"blocked">((r) => (timer = setTimeout(() => r("blocked"), ms)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

interface RunResult {
  peakMiB: number;
  blocked: string[];
  hung: boolean;
  stderr: string;
  leaked: boolean;
}

/** Starts the locked daemon on a planted world and drives every reader once. */
async function runDaemon(w: Awaited<ReturnType<typeof buildWorld>>): Promise<RunResult> {
  const mainModule = pathToFileURL(MAIN).href;
  const cmd = lockedCommand({
    cfg: w.cfg,
    args: ["serve"],
    mainModule,
    denoPath: DENO,
    os: Deno.build.os,
    projectRoot: w.cfg.stateRoot,
  });
  const child = new Deno.Command(DENO, {
    args: cmd,
    clearEnv: true,
    env: { ...w.env, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const rss = watchRss(child.pid);
  const stderr = new Response(child.stderr).text();
  const blocked: string[] = [];
  let leaked = false;
  let hung = false;
  const result: RunResult = { peakMiB: 0, blocked, hung, stderr: "", leaked };
  const dec = new TextDecoder();
  try {
    // The test reads daemon.json through the contained reader too: until the daemon
    // replaces it, it is the plant (a plain read of the /dev/zero link would be the bug).
    const advertised = async () => {
      const r = await readContained(w.cfg.daemonJsonPath, { maxBytes: 64 * 1024 });
      if (!r.ok) return null;
      try {
        const d = JSON.parse(new TextDecoder().decode(r.bytes));
        return d.port === w.port ? d as { token: string } : null;
      } catch {
        return null;
      }
    };
    const up = await step(
      waitFor(async () => (await advertised()) !== null, STEP_TIMEOUT_MS, "daemon.json")
        .catch(() => "blocked" as const),
    );
    if (up === "blocked") {
      // Never advertised itself: stuck on a planted file before listening.
      hung = true;
      return result; // completed by the finally block
    }
    const token = (await advertised())!.token;
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${w.port}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = dec.decode(await r.arrayBuffer());
      if (body.includes(CANARY)) leaked = true;
      return { status: r.status, body };
    };
    const ready = await step(
      waitFor(
        async () => JSON.parse((await get("/api/coverage")).body).state === "ready",
        STEP_TIMEOUT_MS,
        "ready",
      ).catch(() => "blocked" as const),
    );
    if (ready === "blocked") blocked.push("first sweep");
    for (
      const path of [
        `/api/sessions/message-search?q=${WORD}&complete=true`,
        "/api/sessions?limit=100",
        `/api/session/${w.sessionId}?limit=100`,
      ]
    ) {
      const r = await step(get(path));
      if (r === "blocked") blocked.push(path);
      else assert.equal(r.status, 200, `${path}: ${r.body.slice(0, 200)}`);
    }
    // The index is whole again: the planted manifest/journal cost a rebuild, not the data.
    const found = await step(get(`/api/sessions/message-search?q=${WORD}&complete=true`));
    if (found !== "blocked") assert.equal(JSON.parse(found.body).groups.length, 1);
  } finally {
    child.kill("SIGTERM");
    const exited = await step(child.status, 15_000);
    if (exited === "blocked") {
      hung = true;
      child.kill("SIGKILL");
      await child.status;
    }
    rss.stop();
    result.peakMiB = rss.peak();
    result.stderr = await stderr;
    Object.assign(result, { blocked, hung, leaked });
  }
  return result;
}

/** Runs a one-shot CLI command on a planted world (no daemon). */
async function runCli(
  w: Awaited<ReturnType<typeof buildWorld>>,
  args: string[],
): Promise<RunResult & { code: number }> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: w.cfg.stateRoot,
    clearEnv: true,
    env: { ...w.env, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const rss = watchRss(child.pid);
  const out = step(child.output());
  const r = await out;
  rss.stop();
  if (r === "blocked") {
    child.kill("SIGKILL");
    await child.status;
    return {
      peakMiB: rss.peak(),
      blocked: [args[0]!],
      hung: true,
      stderr: "",
      leaked: false,
      code: -1,
    };
  }
  const text = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  return {
    peakMiB: rss.peak(),
    blocked: [],
    hung: false,
    stderr: new TextDecoder().decode(r.stderr),
    leaked: text.includes(CANARY),
    code: r.code,
  };
}

Deno.test("F5: planted state-root files never grow, block or hang the daemon or the CLI", async () => {
  const cases: { variant: Variant; files: readonly StateFile[] }[] = STRESS
    ? VARIANTS.flatMap((variant) => FILES.map((f) => ({ variant, files: [f] as const })))
    : VARIANTS.map((variant) => ({ variant, files: FILES }));
  let peak = 0;
  let blocked = 0;
  let hangs = 0;
  const problems: string[] = [];
  /** What the daemons said on stderr (state root elided), for the report. */
  const said = new Set<string>();
  for (const c of cases) {
    await withTempDir(async (tmp) => {
      const label = `${c.variant}: ${c.files.length === 1 ? c.files[0] : "all seven"}`;
      const w = await buildWorld(Deno.realPathSync(tmp));
      const untouched = () => {
        for (const e of Deno.readDirSync(w.outside)) {
          if (!Deno.readTextFileSync(join(w.outside, e.name)).includes(CANARY)) return false;
        }
        return true;
      };
      for (const f of c.files) plant(pathOf(w.cfg, f), c.variant, w.outside, f);
      const d = await runDaemon(w);
      for (const l of d.stderr.split("\n")) {
        if (l.trim()) said.add(l.replaceAll(w.cfg.stateRoot, "<state>").slice(0, 200));
      }
      peak = Math.max(peak, d.peakMiB);
      blocked += d.blocked.length;
      if (d.hung) hangs++;
      if (d.leaked) problems.push(`${label}: the outside file was served`);
      if (!untouched()) problems.push(`${label}: the outside file was changed`);
      if (/^\s+at /m.test(d.stderr)) problems.push(`${label}: a stack trace: ${d.stderr}`);
      // Replaced, and said so in one line each.
      for (
        const [f, re] of [["cursor.key", /search cursor key .* a new key was written/], [
          "token",
          /token file .* a new token was written/,
        ]] as const
      ) {
        if (!c.files.includes(f)) continue;
        if (!re.test(d.stderr)) problems.push(`${label}: no message for ${f}: ${d.stderr}`);
        const st = Deno.lstatSync(pathOf(w.cfg, f));
        if (!st.isFile || (f === "cursor.key" && st.size !== 32)) {
          problems.push(`${label}: ${f} was not replaced`);
        }
      }
      // The CLI on the same plants (re-planted: the daemon replaced some of them).
      for (const f of c.files) {
        try {
          plant(pathOf(w.cfg, f), c.variant, w.outside, f);
        } catch (err) {
          // The daemon removed daemon.json at shutdown: plant it afresh.
          if (!(err instanceof Deno.errors.NotFound)) throw err;
          Deno.writeTextFileSync(pathOf(w.cfg, f), "");
          plant(pathOf(w.cfg, f), c.variant, w.outside, f);
        }
      }
      for (const args of [["search", WORD], ["sessions"]]) {
        const r = await runCli(w, args);
        peak = Math.max(peak, r.peakMiB);
        blocked += r.blocked.length;
        if (r.hung) hangs++;
        if (r.leaked) problems.push(`${label}: \`${args[0]}\` printed the outside file`);
        if (r.code !== 0) problems.push(`${label}: \`${args[0]}\` exited ${r.code}: ${r.stderr}`);
        if (/^\s+at /m.test(r.stderr)) problems.push(`${label}: \`${args[0]}\` stack trace`);
      }
      if (!untouched()) problems.push(`${label}: the outside file was changed by the CLI`);
    });
  }

  // Negative control: the read-until-EOF that Deno.readFile does, guarded at 64 MiB.
  const control = await withTempDir(async (dir) => {
    const link = join(dir, "cursor.key");
    Deno.symlinkSync("/dev/zero", link);
    const GUARD = 64 << 20;
    const f = await Deno.open(link, { read: true });
    let got = 0;
    let eof = false;
    try {
      const buf = new Uint8Array(1 << 20);
      while (got < GUARD) {
        const n = await f.read(buf);
        if (n === null) {
          eof = true;
          break;
        }
        got += n;
      }
    } finally {
      f.close();
    }
    const fifo = join(dir, "token");
    new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
    const pending = Deno.readFile(fifo);
    const fifoBlocked = (await step(pending, 500)) === "blocked";
    // Unblock it (a writer that closes at once: EOF) so no operation outlives the test.
    (await Deno.open(fifo, { write: true })).close();
    await pending;
    return { mib: got >> 20, stillGoing: !eof, fifoBlocked };
  });

  figure(
    "F5",
    `RSS peak: ${peak.toFixed(0)} MiB, blocked reads: ${blocked}, hangs: ${hangs} ` +
      `(${cases.length} daemon starts + ${2 * cases.length} CLI runs over ${FILES.length} ` +
      `files × ${VARIANTS.length} plants; control: a read-to-EOF of the /dev/zero link was ` +
      `${control.stillGoing ? "still going" : "done"} at its ${control.mib} MiB guard, of the ` +
      `FIFO ${control.fifoBlocked ? "blocked" : "returned"})`,
  );
  // deno-lint-ignore no-console
  console.log(
    `F5 detail: files ${FILES.join(", ")}; plants ${VARIANTS.join(", ")}; problems ${
      JSON.stringify(problems)
    }; the daemons said: ${JSON.stringify([...said].slice(0, 12))}`,
  );
  assert.deepEqual(problems, []);
  assert.equal(blocked, 0);
  assert.equal(hangs, 0);
  assert.ok(peak > 0 && peak < RSS_BOUND_MIB, `peak RSS ${peak} MiB`);
  assert.ok(control.stillGoing && control.mib === 64 && control.fifoBlocked, "the control fails");
});
