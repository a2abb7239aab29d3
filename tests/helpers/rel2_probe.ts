/**
 * The lock-down probe (reliability-plan E1/E2), run by tests/reliability_lockdown_test.ts
 * under EXACTLY the daemon's serve-profile flags (lib/permissions.ts profileFlags). It is
 * a separate program, not a mode of the daemon: production has no probe backdoor. It
 *  - tries every capability the profile must withhold (reads and writes outside its
 *    paths, outbound net, listening elsewhere, spawn, kill, env outside the list, ffi,
 *    sys, permission requests) and records each outcome: "NotCapable" is the pass;
 *  - reads a canary through a symlink planted inside an allowed directory: Deno allows
 *    it (its documented gap, E2), the direct read is NotCapable;
 *  - runs the app-layer readers on the same plants, under the same flags: span reads,
 *    meta and spine reads, the catalog's contained reader, every extractor's discovery
 *    and extraction. None may return a canary byte.
 * Usage: rel2_probe.ts <json plan>; prints one JSON line.
 */
import { join } from "node:path";
import {
  readMeta,
  readNameOverlays,
  readSessionEvents,
  readSessionSpan,
} from "../../lib/session_log/mod.ts";
import { openInside } from "../../lib/catalog/mod.ts";
import {
  createClaudeExtractor,
  createCodexExtractor,
  createIntendantExtractor,
  createKimiExtractor,
  createPiExtractor,
  type Extractor,
} from "../../lib/message_search/mod.ts";

/** What the parent planted and where. */
export interface ProbePlan {
  canary: string;
  canaryPath: string;
  outsideDir: string;
  stateRoot: string;
  /** A symlink inside the state root pointing at canaryPath. */
  symlinkInside: string;
  /** A symlink inside the state root pointing at an outside name overlay that says the canary. */
  namesLink: string;
  /** A loopback port the profile does not grant (a listener the parent holds open). */
  otherPort: number;
  /** The port the profile grants. */
  allowedPort: number;
  /** A native session dir whose sidecar, spine and meta are symlinks to canaries. */
  nativeDir: string;
  logsDir: string;
  homes: { codex: string[]; claude: string[]; kimi: string[]; pi: string[] };
}

/** The probe's report. */
export interface ProbeReport {
  capabilities: Record<string, string>;
  /**
   * viaSymlink: a read through the planted symlink; direct: the target itself;
   * oNoFollow: node:fs open(O_NOFOLLOW) of the symlink ("ALLOWED" = the flag was ignored:
   * Deno 2.9.6 drops it under a scoped --allow-read, so the app must lstat first).
   */
  denoLayer: { viaSymlink: string; direct: string; oNoFollow: string };
  appLayer: Record<string, string>;
}

async function outcome(f: () => unknown): Promise<string> {
  try {
    await f();
    return "ALLOWED";
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) return "NotCapable";
    // The module loader reports the same permission check as a TypeError.
    if (err instanceof TypeError && /^Requires \w+ access/.test(err.message)) return "NotCapable";
    return `${(err as Error).name}: ${(err as Error).message.slice(0, 120)}`;
  }
}

async function capabilities(p: ProbePlan): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const probe = async (name: string, f: () => unknown) => (out[name] = await outcome(f));
  const outside = (n: string) => join(p.outsideDir, n);
  const fs = await import("node:fs");
  const cp = await import("node:child_process");
  const os = await import("node:os");
  const net = await import("node:net");
  // Reads outside the profile.
  await probe("read canary", () => Deno.readTextFile(p.canaryPath));
  await probe("read /etc/passwd", () => Deno.readTextFile("/etc/passwd"));
  await probe("read /proc/self/environ", () => Deno.readFile("/proc/self/environ"));
  await probe("open canary", () => Deno.open(p.canaryPath).then((f) => f.close()));
  await probe("stat outside", () => Deno.stat(p.outsideDir));
  await probe("lstat outside", () => Deno.lstat(p.canaryPath));
  await probe("readDir /", async () => {
    for await (const _ of Deno.readDir("/")) break;
  });
  await probe("realPath outside", () => Deno.realPath(p.canaryPath));
  await probe("readLink outside", () => Deno.readLink(p.canaryPath));
  await probe("fetch file:// canary", () => fetch(`file://${p.canaryPath}`).then((r) => r.text()));
  await probe("node:fs readFileSync", () => fs.readFileSync(p.canaryPath));
  await probe("chdir outside", () => Deno.chdir(p.outsideDir));
  // A specifier computed at run time is loaded under the permissions (a literal one would
  // be part of the static module graph, loaded at startup: code, not a capability).
  const outsideJson = `file://${p.outsideDir}/gap.json`;
  await probe(
    "import() of a JSON file outside",
    () => import(outsideJson, { with: { type: "json" } }),
  );
  await probe(
    "eval(import()) of a file outside",
    () => (0, eval)(`import(${JSON.stringify(outsideJson)}, { with: { type: "json" } })`),
  );
  await probe("Worker from a file outside", () =>
    new Promise<void>((res, rej) => {
      const w = new Worker(`file://${p.outsideDir}/worker.js`, { type: "module" });
      w.onerror = (
        e,
      ) => (e.preventDefault(), w.terminate(), rej(new Deno.errors.NotCapable(e.message)));
      w.onmessage = () => (w.terminate(), res());
    }));
  await probe(
    "copyFile canary → inside",
    () => Deno.copyFile(p.canaryPath, join(p.stateRoot, "copied")),
  );
  await probe(
    "hard link canary → inside",
    () => Deno.link(p.canaryPath, join(p.stateRoot, "hardlinked")),
  );
  // Writes outside the profile.
  await probe("write outside", () => Deno.writeTextFile(outside("written"), "x"));
  await probe("append canary", () => Deno.writeTextFile(p.canaryPath, "x", { append: true }));
  await probe("truncate canary", () => Deno.truncate(p.canaryPath, 0));
  await probe("mkdir outside", () => Deno.mkdir(outside("made")));
  await probe("remove canary", () => Deno.remove(p.canaryPath));
  await probe("rename canary", () => Deno.rename(p.canaryPath, outside("moved")));
  await probe("chmod canary", () => Deno.chmod(p.canaryPath, 0o777));
  await probe("utime canary", () => Deno.utime(p.canaryPath, 0, 0));
  await probe(
    "symlink inside → outside",
    () => Deno.symlink(p.outsideDir, join(p.stateRoot, "new-link")),
  );
  await probe("node:fs writeFileSync", () => fs.writeFileSync(outside("node-written"), "x"));
  // Net: only 127.0.0.1:<allowedPort>.
  await probe(
    "connect 127.0.0.1:other",
    () => Deno.connect({ hostname: "127.0.0.1", port: p.otherPort }).then((c) => c.close()),
  );
  await probe(
    "connect 1.1.1.1:53",
    () => Deno.connect({ hostname: "1.1.1.1", port: 53 }).then((c) => c.close()),
  );
  await probe("fetch https://example.com", () => fetch("https://example.com/"));
  await probe("fetch 127.0.0.1:other", () => fetch(`http://127.0.0.1:${p.otherPort}/`));
  await probe("resolveDns", () => Deno.resolveDns("example.com", "A"));
  await probe(
    "listen 0.0.0.0",
    () =>
      Promise.resolve(Deno.listen({ hostname: "0.0.0.0", port: p.allowedPort })).then((l) =>
        l.close()
      ),
  );
  await probe(
    "listen 127.0.0.1:other",
    () =>
      Promise.resolve(Deno.listen({ hostname: "127.0.0.1", port: p.otherPort + 1 })).then((l) =>
        l.close()
      ),
  );
  await probe("udp bind 127.0.0.1:other", async () => {
    const dgram = await import("node:dgram");
    await new Promise<void>((res, rej) => {
      // Deno's node:dgram reports a denied bind as an uncaught error, not a socket event.
      const onError = (e: ErrorEvent) => {
        e.preventDefault();
        globalThis.removeEventListener("error", onError);
        rej(e.error);
      };
      globalThis.addEventListener("error", onError);
      const s = dgram.createSocket("udp4");
      s.on("error", rej);
      s.bind(p.otherPort + 2, "127.0.0.1", () => (s.close(), res()));
    });
  });
  await probe("node:net connect", () =>
    new Promise<void>((res, rej) => {
      const s = net.connect(p.otherPort, "127.0.0.1", () => (s.destroy(), res()));
      s.on("error", rej);
    }));
  await probe("WebSocket 127.0.0.1:other", () =>
    new Promise<void>((res, rej) => {
      const ws = new WebSocket(`ws://127.0.0.1:${p.otherPort}/`);
      ws.onopen = () => (ws.close(), res());
      ws.onerror = () => rej(new Error("ws error"));
    }));
  // Spawn and signals.
  await probe("spawn sh", () => new Deno.Command("sh", { args: ["-c", "true"] }).output());
  await probe(
    "spawn deno",
    () => new Deno.Command(Deno.execPath(), { args: ["--version"] }).output(),
  );
  await probe("node:child_process", () => cp.execFileSync("true"));
  await probe("kill pid 1", () => Deno.kill(1, "SIGCONT"));
  // Env outside the list.
  await probe("env PATH", () => Deno.env.get("PATH"));
  await probe("env SECRET_TOKEN", () => Deno.env.get("SECRET_TOKEN"));
  await probe("env toObject", () => Deno.env.toObject());
  await probe("env set", () => Deno.env.set("INJECTED", "1"));
  await probe(
    "process.env.PATH",
    () => (globalThis as { process?: { env: Record<string, string> } }).process?.env.PATH,
  );
  // FFI and sys.
  await probe(
    "dlopen libc",
    () => Deno.dlopen("libc.so.6", { getpid: { parameters: [], result: "i32" } }),
  );
  await probe("hostname", () => Deno.hostname());
  await probe("osRelease", () => Deno.osRelease());
  await probe("networkInterfaces", () => Deno.networkInterfaces());
  await probe("systemMemoryInfo", () => Deno.systemMemoryInfo());
  await probe("loadavg", () => Deno.loadavg());
  await probe("uid", () => Deno.uid());
  await probe("node:os userInfo", () => os.userInfo());
  // Asking for more is refused without a prompt.
  for (const name of ["read", "write", "net", "run", "env", "ffi", "sys"] as const) {
    await probe(`permissions.request ${name}`, async () => {
      const s = await Deno.permissions.request({ name });
      if (s.state !== "granted") throw new Deno.errors.NotCapable(`request ${name}: ${s.state}`);
    });
  }
  return out;
}

/** Runs `f` and says whether its result (or error) carries the canary. */
async function leaks(canary: string, f: () => Promise<unknown>): Promise<string> {
  let value: unknown;
  try {
    value = await f();
  } catch (err) {
    value = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return String(value).includes(canary)
      ? "LEAKED (in error)"
      : `refused (${String(value).slice(0, 90)})`;
  }
  const text = value instanceof Uint8Array
    ? new TextDecoder().decode(value)
    : JSON.stringify(value, (_k, v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v));
  return text.includes(canary) ? "LEAKED" : "no canary";
}

async function extractAll(ex: Extractor): Promise<unknown> {
  const d = await ex.discover();
  const out: unknown[] = [d.skipped];
  for (const u of d.units) out.push(await ex.extract(u, null, { now: Date.now() }));
  return out;
}

async function appLayer(p: ProbePlan): Promise<Record<string, string>> {
  const c = p.canary;
  const dir = p.nativeDir;
  return {
    "readSessionSpan (sidecar symlink)": await leaks(
      c,
      () => Promise.resolve(readSessionSpan(dir, "turns/turn_001_model.txt", 0, 64)),
    ),
    "readSessionEvents (spine symlink)": await leaks(c, () => readSessionEvents(dir)),
    "readMeta (meta symlink)": await leaks(c, () => readMeta(dir)),
    "readNameOverlays (overlay symlink)": await leaks(c, () => readNameOverlays(p.namesLink)),
    "catalog openInside (sidecar symlink)": await leaks(c, async () => {
      const r = await openInside(dir, "turns/turn_001_model.txt");
      if (!r.ok) return r;
      try {
        return await r.file.read(0, 4096);
      } finally {
        await r.file.close();
      }
    }),
    "intendant extractor": await leaks(
      c,
      () => extractAll(createIntendantExtractor({ logsDir: p.logsDir })),
    ),
    "codex extractor": await leaks(
      c,
      () => extractAll(createCodexExtractor({ homes: p.homes.codex })),
    ),
    "claude-code extractor": await leaks(
      c,
      () => extractAll(createClaudeExtractor({ projectRoots: p.homes.claude })),
    ),
    "kimi extractor": await leaks(
      c,
      () => extractAll(createKimiExtractor({ homes: p.homes.kimi })),
    ),
    "pi extractor": await leaks(c, () => extractAll(createPiExtractor({ agentDirs: p.homes.pi }))),
  };
}

if (import.meta.main) {
  const plan: ProbePlan = JSON.parse(Deno.args[0]!);
  const report: ProbeReport = {
    capabilities: await capabilities(plan),
    denoLayer: {
      viaSymlink: await outcome(async () => {
        if (!(await Deno.readTextFile(plan.symlinkInside)).includes(plan.canary)) {
          throw new Error("read through the symlink did not return the canary");
        }
      }),
      direct: await outcome(() => Deno.readTextFile(plan.canaryPath)),
      oNoFollow: await outcome(async () => {
        const { constants, promises } = await import("node:fs");
        const h = await promises.open(
          plan.symlinkInside,
          constants.O_RDONLY | constants.O_NOFOLLOW,
        );
        await h.close();
      }),
    },
    appLayer: await appLayer(plan),
  };
  console.log(JSON.stringify(report));
}
