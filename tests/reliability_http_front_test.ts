/**
 * Reliability-plan F7 and F9 against the daemon's TCP front (lib/server/http_front.ts).
 *  F7  the real daemon subprocess (`intendant serve --port 0`, default limits): invalid
 *      queries answer 400 with no sweep (coverage.last_sweep_at_ms unchanged; no query
 *      sweeps since issue 28, but a valid one with `refresh=1` does, so the probe can see
 *      one); then 50
 *      slow-header connections (one byte a second, never finishing), 25 connections that
 *      never send a byte and 25 kept-alive connections left idle after one request, while
 *      normal requests keep answering 200 within a bound. Every slow socket must be closed
 *      by the server by its timeout plus a grace. Negative control: the same clients
 *      against a bare Deno.serve, on the same clock, are all still open then. Also the
 *      price of the front: p50 of 200 small requests through it vs straight to the
 *      Deno.serve behind it (its unix socket), same daemon, same run.
 *  F9  raw request lines: absolute form (allowed and foreign authorities, any scheme
 *      case), authority form (CONNECT), asterisk form; only origin form is served.
 *      Negative control: a bare Deno.serve + the same Hono app serves the absolute form.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HEADER_TIMEOUT_MS, IDLE_TIMEOUT_MS, startDaemon } from "../lib/server/mod.ts";
import { spawnIntendant, waitFor } from "./helpers/cli.ts";
import { figure } from "./helpers/figures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { RawClient } from "./helpers/raw_http.ts";
import { withTempDir } from "./helpers/temp.ts";
import { buildWorld, PORT } from "./helpers/world.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Allowance past a timeout for the server's timer and a loaded 2-core machine. */
const GRACE_MS = 3_000;

type Kind = "slow" | "silent" | "idle";

/** A client socket that records when the server closed it. */
interface Tracked {
  kind: Kind;
  client: RawClient;
  closedAt: number | null;
}

/** Opens the three kinds of slow client against `port` (host header `host`). */
async function slowClients(
  port: number,
  o: { host: string; auth: string; slow: number; silent: number; idle: number },
): Promise<{ all: Tracked[]; stop(): void }> {
  const all: Tracked[] = [];
  const track = (kind: Kind, client: RawClient) => {
    const t: Tracked = { kind, client, closedAt: null };
    void client.closedByPeer().then(() => (t.closedAt = Date.now()));
    all.push(t);
  };
  for (let i = 0; i < o.silent; i++) track("silent", await RawClient.open(port));
  for (let i = 0; i < o.idle; i++) {
    const c = await RawClient.open(port);
    await c.send(`GET /api/routes HTTP/1.1\r\nHost: ${o.host}\r\nAuthorization: ${o.auth}\r\n\r\n`);
    assert.equal((await c.response())?.status, 200);
    track("idle", c);
  }
  const slow: RawClient[] = [];
  for (let i = 0; i < o.slow; i++) {
    const c = await RawClient.open(port);
    await c.send(`GET /api/routes HTTP/1.1\r\nHost: ${o.host}\r\n`);
    slow.push(c);
    track("slow", c);
  }
  // One more header byte a second, never the blank line that ends the head.
  const trickle = setInterval(() => {
    for (const c of slow) c.send("X").catch(() => {});
  }, 1000);
  return {
    all,
    stop() {
      clearInterval(trickle);
      for (const t of all) t.client.close();
    },
  };
}

/** Sockets of `kind` not closed by `deadline`. */
function heldPast(all: Tracked[], kinds: Kind[], deadline: number): number {
  return all.filter((t) => kinds.includes(t.kind) && (t.closedAt ?? Infinity) > deadline).length;
}

Deno.test("F7 slow and idle sockets are closed by their timeouts while requests keep 200; invalid queries never sweep", () =>
  withTempDir(async (root) => {
    await writeNativeSession(join(root, "state", "logs"), {
      turns: 3,
      task: "Tune the slow sockets",
    });
    const run = spawnIntendant(root, ["serve", "--port", "0"]);
    const control = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("ok"),
    );
    try {
      const daemonJson = join(root, "state", "daemon.json");
      await waitFor(() => exists(daemonJson), 20_000, "daemon.json");
      const info = JSON.parse(Deno.readTextFileSync(daemonJson));
      const base = `http://127.0.0.1:${info.port}`;
      const auth = `Bearer ${info.token}`;
      const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: auth } });
      const lastSweep = async () => (await (await get("/api/coverage")).json()).last_sweep_at_ms;
      await waitFor(async () => (await lastSweep()) !== null, 20_000, "first sweep");

      // Sweeps: no search sweeps unless it asks (refresh=1); an invalid one asking must
      // not either (it is refused before any sweep). Spaced out as a person would send them.
      const invalid = [
        "a",
        "%20",
        "a%20b%20c",
        "%22%22",
        "%22a%22",
        Array.from({ length: 17 }, (_, i) => `term${i}`).join("%20"),
      ];
      let sweeps = 0;
      let prev = await lastSweep();
      for (const q of invalid) {
        await sleep(700);
        const r = await get(`/api/sessions/message-search?q=${q}&refresh=1`);
        assert.equal(r.status, 400, q);
        await r.body?.cancel();
        const now = await lastSweep();
        if (now !== prev) sweeps++;
        prev = now;
      }
      await sleep(700);
      const valid = await get("/api/sessions/message-search?q=slow%20sockets&refresh=1");
      assert.equal(valid.status, 200);
      await valid.body?.cancel();
      const validSwept = (await lastSweep()) !== prev ? 1 : 0;

      // Slow clients on the daemon and, on the same clock, on the bare Deno.serve.
      const t0 = Date.now();
      const host = `127.0.0.1:${info.port}`;
      const n = { slow: 50, silent: 25, idle: 25 };
      const ours = await slowClients(info.port, { host, auth, ...n });
      const bare = await slowClients(control.addr.port, {
        host: `127.0.0.1:${control.addr.port}`,
        auth,
        ...n,
      });
      const setupMs = Date.now() - t0;
      // Normal requests all along: each must answer 200 within the bound.
      const latencies: number[] = [];
      let failures = 0;
      const headDeadline = t0 + setupMs + HEADER_TIMEOUT_MS + GRACE_MS;
      const idleDeadline = t0 + setupMs + IDLE_TIMEOUT_MS + GRACE_MS;
      while (Date.now() < idleDeadline) {
        const s = performance.now();
        const r = await get("/api/routes").catch(() => null);
        latencies.push(performance.now() - s);
        if (r?.status !== 200) failures++;
        await r?.body?.cancel();
        const open = ours.all.filter((t) => t.closedAt === null).length;
        if (open === 0 && Date.now() > headDeadline) break;
        await sleep(250);
      }
      // The bare server's sockets, judged at the same deadlines.
      while (Date.now() < idleDeadline) await sleep(100);
      const held = heldPast(ours.all, ["slow", "silent"], headDeadline) +
        heldPast(ours.all, ["idle"], idleDeadline);
      const controlHeld = heldPast(bare.all, ["slow", "silent"], headDeadline) +
        heldPast(bare.all, ["idle"], idleDeadline);
      ours.stop();
      bare.stop();
      const total = n.slow + n.silent + n.idle;
      const maxMs = Math.max(...latencies);
      figure(
        "F7",
        `slow sockets held past timeout: ${held}/${total}, sweeps on invalid queries: ${sweeps}/${invalid.length} (control: bare Deno.serve held ${controlHeld}/${total} past the same timeouts; a valid query asking refresh=1 after the same wait swept: ${validSwept})`,
      );
      // deno-lint-ignore no-console
      console.log(
        `F7 detail: ${n.slow} slow-header (1 byte/s), ${n.silent} silent, ${n.idle} kept-alive idle; ` +
          `header timeout ${HEADER_TIMEOUT_MS} ms, idle ${IDLE_TIMEOUT_MS} ms, grace ${GRACE_MS} ms; ` +
          `normal requests meanwhile: ${latencies.length}, non-200: ${failures}, max ${
            maxMs.toFixed(0)
          } ms`,
      );
      assert.equal(held, 0);
      assert.equal(sweeps, 0);
      assert.equal(failures, 0);
      // Generous for a loaded 2-core machine running the suite in parallel.
      assert.ok(maxMs < 5_000, `a normal request took ${maxMs} ms`);
      assert.equal(controlHeld, total);
      assert.equal(validSwept, 1);
    } finally {
      await control.shutdown().catch(() => {});
      run.child.kill("SIGTERM");
      const done = await run.done;
      assert.equal(done.code, 0, done.stderr);
      assert.ok(!exists(join(root, "state", "daemon.json")), "daemon.json removed");
      assert.deepEqual([...Deno.readDirSync(join(root, "state", "run"))], [], "socket removed");
    }
  }));

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Sends one raw request and returns its status (0 when the connection closed unanswered). */
async function rawStatus(port: number, text: string): Promise<number> {
  const c = await RawClient.open(port);
  try {
    await c.send(text);
    return (await c.response())?.status ?? 0;
  } finally {
    c.close();
  }
}

Deno.test("F9 only origin-form request targets are served", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const d = await startDaemon({ ...w.cfg, server: { host: "127.0.0.1", port: 0 } }, {
      noInitialSweep: true,
    });
    const bare = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, w.app.fetch);
    try {
      const P = d.port;
      const head = (target: string, method = "GET", host = `127.0.0.1:${P}`) =>
        `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${d.token}\r\n\r\n`;
      const refused = [
        head(`http://127.0.0.1:${P}/api/routes`),
        head(`http://localhost:${P}/api/routes`, "GET", `localhost:${P}`),
        head(`http://[::1]:${P}/api/routes`, "GET", `[::1]:${P}`),
        head(`HTTP://127.0.0.1:${P}/api/routes`),
        head(`https://127.0.0.1:${P}/api/routes`),
        head("http://evil.example/api/routes"),
        head(`http://evil.example:${P}/api/routes`),
        head(`http://127.0.0.1:${P}@evil.example/api/routes`),
        head(`127.0.0.1:${P}`, "CONNECT"),
        head("evil.example:443", "CONNECT"),
        head(`127.0.0.1:${P}/api/routes`),
        head("*", "OPTIONS"),
        head("*"),
        head("http:/api/routes"),
      ];
      let served = 0;
      const statuses: number[] = [];
      for (const text of refused) {
        const s = await rawStatus(P, text);
        statuses.push(s);
        if (s === 200) served++;
      }
      const origin = await rawStatus(P, head("/api/routes"));
      // Negative control: Deno.serve + the same Hono app answers an absolute-form target.
      const controlStatus = await rawStatus(
        bare.addr.port,
        `GET http://evil.example/api/routes HTTP/1.1\r\nHost: 127.0.0.1:${PORT}\r\nAuthorization: Bearer ${w.token}\r\n\r\n`,
      );
      figure(
        "F9",
        `non-origin-form targets served: ${served}/${refused.length} (origin form served: ${
          origin === 200 ? "yes" : "no"
        }; control: bare Deno.serve + Hono served the absolute-form request: ${
          controlStatus === 200 ? "yes" : "no"
        })`,
      );
      assert.equal(served, 0);
      assert.ok(statuses.every((s) => s === 400), JSON.stringify(statuses));
      assert.equal(origin, 200);
      assert.equal(controlStatus, 200);
      // The front's price: 200 small keep-alive requests through it vs its upstream directly.
      const sock = [...Deno.readDirSync(join(w.cfg.stateRoot, "run"))][0]!.name;
      const direct = new RawClient(
        await Deno.connect({ transport: "unix", path: join(w.cfg.stateRoot, "run", sock) }),
      );
      const front = await RawClient.open(P);
      const viaFront: number[] = [];
      const viaDirect: number[] = [];
      for (let i = 0; i < 200; i++) {
        for (const [c, xs] of [[front, viaFront], [direct, viaDirect]] as const) {
          const s = performance.now();
          await c.send(head("/api/routes"));
          assert.equal((await c.response())?.status, 200);
          xs.push(performance.now() - s);
        }
      }
      front.close();
      direct.close();
      const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      // deno-lint-ignore no-console
      console.log(
        `F7 detail: added latency of the front, p50 of 200 small requests: through the front ${
          p50(viaFront).toFixed(2)
        } ms, direct ${p50(viaDirect).toFixed(2)} ms (+${
          (p50(viaFront) - p50(viaDirect)).toFixed(2)
        } ms)`,
      );
      assert.ok(p50(viaFront) - p50(viaDirect) < 5, "the front adds under 5 ms at p50");
    } finally {
      await bare.shutdown();
      await d.shutdown();
    }
  }));
