/**
 * Reliability-plan E1 and E2: the process lock-down. The daemon (main.ts serve) runs
 * under EXACTLY the flags lib/permissions.ts computes for its config (profileFlags of
 * serveProfile: no -A, no run, no ffi, no sys), on a fixed port, over fixture homes of
 * all five tools. Canaries live OUTSIDE every granted path; symlinks to them are planted
 * INSIDE granted directories: a native session whose spine, meta and sidecar are
 * symlinks, a symlinked session directory, and a symlinked transcript (or session dir)
 * next to each external tool's live session; after the first sweep a sidecar of an
 * indexed session is swapped for a symlink too.
 *  E1  a probe program (tests/helpers/rel2_probe.ts) runs with the same flags and tries
 *      everything the profile withholds: every attempt must be NotCapable.
 *  E2  Deno lets a read through a symlink inside a granted dir reach the outside (its
 *      documented behaviour: 1 escape at the Deno layer, shown by the probe), while the
 *      application refuses it on every path: the probe's direct calls (span, spine and
 *      meta reads, the catalog's contained reader, all five extractors) and the running
 *      daemon's HTTP API (search, listing, detail, locate, replay, live stream, report
 *      zip, Deep Search). The canary must appear nowhere.
 */
import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { profileFlags, serveProfile } from "../lib/permissions.ts";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { FixtureHome } from "./fixtures/types.ts";
import type { ProbePlan, ProbeReport } from "./helpers/rel2_probe.ts";
import { figure } from "./helpers/figures.ts";
import { waitFor } from "./helpers/cli.ts";
import { readZip } from "./helpers/catalog_zip.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const CANARY = "CANARYE2zq7OUTSIDE";
const PROBE = join(REPO_ROOT, "tests", "helpers", "rel2_probe.ts");
const MAIN = join(REPO_ROOT, "main.ts");
const CONFIG = join(REPO_ROOT, "deno.json");
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function copyDir(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const e of Deno.readDirSync(from)) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) copyDir(a, b);
    else if (e.isFile) Deno.copyFileSync(a, b);
  }
}

/**
 * Next to `home`'s live session, a symlink named like a session of its own, pointing at
 * an outside copy that says the canary. Returns the planted path.
 */
function plantExternal(home: FixtureHome, outside: string): string {
  const path = home.appendTarget.path;
  const canaryLine = home.appendTarget.userLine(`${CANARY} from ${home.source}`, 900);
  if (home.source === "kimi") {
    // One session = one directory: the whole directory is the symlink.
    const sessionDir = dirname(dirname(dirname(path)));
    const copy = join(outside, "kimi-session");
    copyDir(sessionDir, copy);
    Deno.writeTextFileSync(join(copy, "agents", "main", "wire.jsonl"), canaryLine, {
      append: true,
    });
    const link = join(dirname(sessionDir), `session_${crypto.randomUUID()}`);
    Deno.symlinkSync(copy, link);
    // And a real session directory whose state.json (title, cwd) is a symlink.
    const real = join(dirname(sessionDir), `session_${crypto.randomUUID()}`);
    copyDir(sessionDir, real);
    Deno.writeTextFileSync(
      join(outside, "kimi-state.json"),
      JSON.stringify({ title: CANARY, cwd: `/${CANARY}`, createdAt: Date.now() }),
    );
    Deno.removeSync(join(real, "state.json"));
    Deno.symlinkSync(join(outside, "kimi-state.json"), join(real, "state.json"));
    return link;
  }
  const old = UUID.exec(basename(path))![0];
  const fresh = old.slice(0, -12) + "feedfacecafe";
  const text = Deno.readTextFileSync(path).replaceAll(old, fresh) +
    canaryLine.replaceAll(old, fresh);
  const copy = join(outside, `${home.source}-${basename(path).replace(old, fresh)}`);
  Deno.writeTextFileSync(copy, text);
  const link = join(dirname(path), basename(path).replace(old, fresh));
  Deno.symlinkSync(copy, link);
  return link;
}

/** A native session dir whose spine, meta and sidecar are symlinks to outside canaries. */
function plantNative(logsDir: string, outside: string, fixtureSpine: string): string {
  const id = crypto.randomUUID();
  const dir = join(logsDir, id);
  Deno.mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const spine = Deno.readTextFileSync(fixtureSpine).replaceAll("Fix the café login bug", CANARY);
  Deno.writeTextFileSync(join(outside, "spine.jsonl"), spine);
  Deno.writeTextFileSync(
    join(outside, "meta.json"),
    JSON.stringify({
      session_id: id,
      created_at: "2026-01-01 00:00:00",
      created_at_ms: Date.now(),
      project_root: `/${CANARY}`,
      name: CANARY,
      task: CANARY,
      status: "running",
      last_turn: 1,
      role: null,
      rounds: 1,
    }),
  );
  Deno.symlinkSync(join(outside, "spine.jsonl"), join(dir, "session.jsonl"));
  Deno.symlinkSync(join(outside, "meta.json"), join(dir, "session_meta.json"));
  Deno.symlinkSync(join(outside, "canary.txt"), join(dir, "turns", "turn_001_model.txt"));
  // And a whole session directory that is a symlink.
  const sessCopy = join(outside, "native-session");
  copyDir(dirname(fixtureSpine), sessCopy);
  Deno.writeTextFileSync(join(sessCopy, "session.jsonl"), spine);
  Deno.symlinkSync(sessCopy, join(logsDir, crypto.randomUUID()));
  return dir;
}

Deno.test("E1/E2 the daemon under its exact serve profile: no capability escapes; symlinks refused by the app", () =>
  withTempDir(async (tmp) => {
    const root = Deno.realPathSync(tmp);
    const outside = join(root, "outside");
    Deno.mkdirSync(outside);
    Deno.writeTextFileSync(join(outside, "canary.txt"), `${CANARY}\n`.repeat(200));
    Deno.writeTextFileSync(join(outside, "gap.json"), JSON.stringify({ secret: CANARY }));
    Deno.writeTextFileSync(join(outside, "worker.js"), "postMessage(1);");
    const fixtures = await buildAllFixtures(root);
    const { homes, dirs } = fixtures;
    const port = freePort();
    const env: Record<string, string> = {
      ...hermeticEnv(root, fixtures.env),
      INTENDANT_PORT: String(port),
    };
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const cfg = resolveConfig(env, { cwd: root });
    const flags = profileFlags(serveProfile(cfg));
    assert.ok(!flags.some((f) => /^(-A|--allow-all|--allow-run|--allow-ffi|--allow-sys)/.test(f)));
    // The port, and the unix socket behind the daemon's TCP front (http_front.ts).
    assert.ok(
      flags.includes(`--allow-net=127.0.0.1:${port},unix:${cfg.daemonSocketPath}`),
      flags.join(" "),
    );
    // Plants (before the first sweep).
    const nativeDir = plantNative(cfg.logsDir, outside, homes.intendant!.appendTarget.path);
    const planted = Object.values(homes).filter((h) => h.source !== "intendant").map((h) =>
      plantExternal(h, outside)
    );
    const symlinkInside = join(cfg.stateRoot, "link-to-canary");
    Deno.symlinkSync(join(outside, "canary.txt"), symlinkInside);
    // A name overlay outside that would show the canary if the link were followed.
    Deno.writeTextFileSync(join(outside, "names.json"), JSON.stringify({ codex: { t: CANARY } }));
    const namesLink = join(cfg.stateRoot, "names-link.json");
    Deno.symlinkSync(join(outside, "names.json"), namesLink);
    const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const childEnv = {
      ...env,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      SECRET_TOKEN: "not-for-the-daemon",
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    };
    const run = (args: string[], stdout: "piped" | "null" = "piped") =>
      new Deno.Command(DENO, {
        args: ["run", `--config=${CONFIG}`, ...flags, ...args],
        cwd: root,
        clearEnv: true,
        env: childEnv,
        stdout,
        stderr: "piped",
      });

    const daemon = run([MAIN, "serve"], "null").spawn();
    const stderr = new Response(daemon.stderr).text();
    const http: Record<string, string> = {};
    let report: ProbeReport;
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
      assert.equal(info.port, port);
      const base = `http://127.0.0.1:${port}`;
      const headers = { authorization: `Bearer ${info.token}` };
      const get = async (path: string) => {
        const r = await fetch(`${base}${path}`, { headers });
        return { status: r.status, body: new Uint8Array(await r.arrayBuffer()) };
      };
      await waitFor(
        async () =>
          JSON.parse(new TextDecoder().decode((await get("/api/coverage")).body)).state === "ready",
        60_000,
        "first sweep",
      );
      // The profile really serves: the fixture's native text is found.
      const found = JSON.parse(
        new TextDecoder().decode((await get("/api/sessions/message-search?q=logout")).body),
      );
      assert.ok(found.groups.length >= 1, "the daemon under its profile searches");
      // After indexing, an indexed sidecar becomes a symlink to the canary (locate/detail).
      const nativeId = homes.intendant!.appendTarget.key.split(":")[1]!;
      const cookie = JSON.parse(
        new TextDecoder().decode((await get("/api/sessions/message-search?q=redirect")).body),
      );
      const hit = cookie.groups.flatMap((g: { hits: { locator: string; role: string }[] }) =>
        g.hits
      )
        .find((h: { role: string }) => h.role === "assistant");
      assert.ok(hit, "an assistant hit to locate");
      const sidecar = join(cfg.logsDir, nativeId, "turns", "turn_001_model.txt");
      Deno.renameSync(sidecar, `${sidecar}.real`);
      Deno.symlinkSync(join(outside, "canary.txt"), sidecar);
      const text = (b: Uint8Array) => new TextDecoder().decode(b);
      const check = async (label: string, path: string, decode = text) => {
        const r = await get(path);
        http[label] = decode(r.body).includes(CANARY) ? "LEAKED" : `no canary (${r.status})`;
      };
      const xId = basename(nativeDir);
      await check("search canary", `/api/sessions/message-search?q=${CANARY}`);
      await check("search broad", "/api/sessions/message-search?q=the&limit=100");
      await check(
        "search superseded",
        `/api/sessions/message-search?q=${CANARY}&include_superseded=true`,
      );
      await check("listing", "/api/sessions?limit=200");
      await check("listing query", `/api/sessions?q=${CANARY}`);
      await check("deep search", `/api/sessions/search?q=${CANARY}`);
      await check("detail (sidecar symlink)", `/api/session/${nativeId}?limit=1000`);
      await check("locate (sidecar symlink)", `/api/session/${nativeId}?locate=${hit.locator}`);
      await check("detail (spine+meta symlinks)", `/api/session/${xId}?limit=1000`);
      await check("replay (spine symlink)", `/api/session/${xId}/replay`);
      await check(
        "report zip (sidecar symlink)",
        `/api/session/${nativeId}/report`,
        (b) => readZip(b).map((e) => `${e.name}\n${text(e.data)}`).join("\n"),
      );
      // The live stream: read for a second.
      const ac = new AbortController();
      const sse = await fetch(`${base}/api/session/${xId}/stream`, { headers, signal: ac.signal });
      let streamed = "";
      const reader = sse.body!.getReader();
      const deadline = setTimeout(() => ac.abort(), 1000);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          streamed += text(value);
        }
      } catch (err) {
        if (!(err instanceof DOMException) && !(err instanceof TypeError)) throw err;
      } finally {
        clearTimeout(deadline);
      }
      http["live stream (spine symlink)"] = streamed.includes(CANARY)
        ? "LEAKED"
        : `no canary (${sse.status}${streamed.includes("refused") ? ", refused" : ""})`;

      // E1 + the probe's E2 half, with the same flags.
      const plan: ProbePlan = {
        canary: CANARY,
        canaryPath: join(outside, "canary.txt"),
        outsideDir: outside,
        stateRoot: cfg.stateRoot,
        symlinkInside,
        namesLink,
        otherPort: (other.addr as Deno.NetAddr).port,
        allowedPort: port,
        nativeDir,
        logsDir: cfg.logsDir,
        homes: {
          codex: [dirs.codex!],
          claude: [join(dirs["claude-code"]!, ".claude", "projects")],
          kimi: [join(dirs.kimi!, ".kimi-code")],
          pi: [dirs.pi!],
        },
      };
      const probe = await run([PROBE, JSON.stringify(plan)]).output();
      assert.equal(probe.code, 0, text(probe.stderr));
      report = JSON.parse(text(probe.stdout).trim().split("\n").at(-1)!);
    } finally {
      daemon.kill("SIGTERM");
      const status = await daemon.status;
      other.close();
      const err = await stderr;
      assert.equal(status.code, 0, err);
      assert.ok(!err.includes("NotCapable"), `the daemon hit its own profile: ${err}`);
    }

    const escapes = Object.entries(report.capabilities).filter(([, v]) => v !== "NotCapable");
    const appLeaks = [...Object.entries(report.appLayer), ...Object.entries(http)].filter(([, v]) =>
      v.startsWith("LEAKED")
    );
    const denoLayer = report.denoLayer.viaSymlink === "ALLOWED" ? 1 : 0;
    figure("E1", `capability escapes: ${escapes.length}`);
    // With --port 0 the OS picks the port, so the profile can only name the host.
    const port0 = profileFlags(serveProfile({ ...cfg, server: { ...cfg.server, port: 0 } }))
      .find((f) => f.startsWith("--allow-net"));
    figure(
      "E2",
      `Deno-layer escapes: ${denoLayer} (documented), app-layer escapes: ${appLeaks.length}`,
    );
    // deno-lint-ignore no-console
    console.log(
      `E1 detail: ${Object.keys(report.capabilities).length} probes under \`deno run ${
        flags.join(" ").replaceAll(root, "<root>")
      }\`, all NotCapable: ${escapes.length === 0}; not NotCapable: ${JSON.stringify(escapes)}; ` +
        `with --port 0 the profile is ${port0}: every loopback port is reachable then`,
    );
    // deno-lint-ignore no-console
    console.log(
      `E2 detail: read through a symlink inside the state root: ${report.denoLayer.viaSymlink}, ` +
        `the same file directly: ${report.denoLayer.direct}; node:fs O_NOFOLLOW open of the ` +
        `link: ${report.denoLayer.oNoFollow} (ALLOWED = ignored under a scoped --allow-read, ` +
        `so every app reader lstats first and compares dev+ino); app layer ${
          JSON.stringify(report.appLayer)
        }; over HTTP ${JSON.stringify(http)}; plants: spine/meta/sidecar symlinks, a symlinked ` +
        `session dir, ${planted.length} external symlinks (codex, claude-code, kimi dir, pi)`,
    );
    assert.deepEqual(escapes, []);
    assert.equal(report.denoLayer.viaSymlink, "ALLOWED", "Deno's symlink gap is as documented");
    assert.equal(report.denoLayer.direct, "NotCapable");
    assert.deepEqual(appLeaks, []);
  }));
