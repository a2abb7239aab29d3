/**
 * Reliability-plan D10 and D2 against the real daemon (startDaemon, real port, real
 * fetch) over a world: the five fixture homes indexed by the real indexer, plus a bulk
 * corpus published into the same store.
 *  D10 budgets: a broad query on a cold arena (a fresh daemon each time) must answer
 *      `partial`/`timeout` within the 150 ms budget; warm, the same query answers
 *      complete; no response of any query (broad, dense highlights, pages filled to the
 *      brim by a binary search on the group size) is over 256 KiB.
 *  D2  DNS rebinding end to end in headless Chromium: `--host-resolver-rules` maps
 *      evil.test to 127.0.0.2, where a switching proxy on the daemon's own port first
 *      serves the attacker page, then forwards every new connection to the daemon (the
 *      DNS flip). The page's same-origin fetches then reach the daemon with
 *      `Host: evil.test:P`, exactly as after a real rebind, and must read nothing. A naive
 *      server behind the same proxy is the negative control: the page must read it.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import type { Page } from "playwright-core";
import { type MessageRecord, openStore, PARSER_VERSION } from "../lib/message_search/mod.ts";
import { SEARCH_RESPONSE_CAP_BYTES, startDaemon } from "../lib/server/mod.ts";
import { BROWSER_AVAILABLE, CHROMIUM } from "./helpers/browser.ts";
import { withoutSync } from "./helpers/fault_fs.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { record, update } from "./helpers/store_fixtures.ts";
import { withTempDir } from "./helpers/temp.ts";
import { buildWorld, type World } from "./helpers/world.ts";

const DAY = 86_400_000;
const fmt = (n: number) => n.toLocaleString("en-US");

/** Publishes the bulk corpus into the world's store (fsync skipped: not under test here). */
async function addCorpus(w: World, o: { sessions: number; records: number }): Promise<void> {
  const store = await openStore({
    root: w.store.root,
    fs: withoutSync(),
    parserVersion: PARSER_VERSION,
    windowDays: w.cfg.messageSearch.windowDays,
  });
  const now = Date.now();
  // Broad: every record but the newest says "the", at times spread over days, so a page's
  // best hits are old while every session's newest record is recent: the scan cannot stop
  // early and a cold arena must load every session.
  for (let b = 0; b < o.sessions; b += 50) {
    const ups = [];
    for (let s = b; s < Math.min(o.sessions, b + 50); s++) {
      const id = `019b0000-0000-7000-8000-${String(s).padStart(12, "0")}`;
      const recs: MessageRecord[] = [];
      for (let i = 0; i < o.records; i++) {
        const newest = i === o.records - 1;
        recs.push(record(id, i, {
          ts: newest ? now - s * 1000 : now - 2 * DAY - ((s * 7919 + i * 104729) % (8 * DAY)),
          text: newest ? `ok ${s}` : `the budget record ${i} of ${s}: ${"lorem ipsum ".repeat(24)}`,
        }));
      }
      ups.push(update("replace", id, { recs }));
    }
    assert.deepEqual((await store.publish(ups)).rejected, []);
  }
  // Dense: "zz" thousands of times per record, long titles and projects (heavy groups).
  const ups = [];
  for (let s = 0; s < 120; s++) {
    const id = `019c0000-0000-7000-8000-${String(s).padStart(12, "0")}`;
    const recs = [0, 1, 2, 3].map((i) =>
      record(id, i, { ts: now - 3600_000 - s * 1000 - i, text: "zz ".repeat(3000) })
    );
    const u = update("replace", id, { recs });
    u.meta = { ...u.meta!, title: "T".repeat(300), project: `/p/${"d".repeat(4000)}` };
    ups.push(u);
  }
  assert.deepEqual((await store.publish(ups)).rejected, []);
}

interface Answer {
  ms: number;
  status: number;
  bytes: number;
  state: string;
  reason?: string;
  groups: number;
  tookMs: number;
}

async function ask(base: string, token: string, q: string, limit = 100): Promise<Answer> {
  const t0 = performance.now();
  const r = await fetch(`${base}api/sessions/message-search?q=${q}&limit=${limit}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = new Uint8Array(await r.arrayBuffer());
  const ms = performance.now() - t0;
  const j = JSON.parse(new TextDecoder().decode(body));
  return {
    ms,
    status: r.status,
    bytes: body.length,
    state: j.state,
    reason: j.partial_reason,
    groups: j.groups?.length ?? 0,
    tookMs: j.took_ms,
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

Deno.test("D10 a cold broad query answers partial/timeout within the budget, warm complete; no response over 256 KiB", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    await addCorpus(w, { sessions: 300, records: 200 });
    const cfg = { ...w.cfg, server: { host: "127.0.0.1" as const, port: 0 } };
    const all: Answer[] = [];
    const cold: Answer[] = [];
    const coldTrials = STRESS ? 50 : 12;
    for (let i = 0; i < coldTrials; i++) {
      const d = await startDaemon(cfg, { noInitialSweep: true });
      try {
        cold.push(await ask(d.url, d.token, "the"));
      } finally {
        await d.shutdown();
      }
    }
    all.push(...cold);
    const d = await startDaemon(cfg, { noInitialSweep: true });
    const warm: Answer[] = [];
    const dense: Answer[] = [];
    let brim: Answer | null = null;
    try {
      // Warm up: each query loads more of the arena until the broad query completes.
      for (let i = 0; i < 30 && (await ask(d.url, d.token, "the")).state !== "ready"; i++);
      for (let i = 0; i < (STRESS ? 200 : 40); i++) warm.push(await ask(d.url, d.token, "the"));
      for (let i = 0; i < 6; i++) dense.push(await ask(d.url, d.token, "zz"));
      brim = await brimmingPage(w, d.url, d.token);
    } finally {
      await d.shutdown();
    }
    all.push(...warm, ...dense, brim);
    const over = all.filter((a) => a.bytes > SEARCH_RESPONSE_CAP_BYTES).length;
    const coldMs = cold.map((a) => a.ms);
    const warmMs = warm.map((a) => a.ms);
    const f = (x: number) => x.toFixed(0);
    figure(
      "D10",
      `p50/p99 latency: cold ${f(pct(coldMs, 50))}/${f(pct(coldMs, 99))} ms, warm ${
        f(pct(warmMs, 50))
      }/${f(pct(warmMs, 99))} ms, responses > 256 KiB: ${over}`,
    );
    const states = (xs: Answer[]) =>
      JSON.stringify(
        xs.reduce<Record<string, number>>((m, a) => {
          const k = a.reason ? `${a.state}/${a.reason}` : a.state;
          m[k] = (m[k] ?? 0) + 1;
          return m;
        }, {}),
      );
    // deno-lint-ignore no-console
    console.log(
      `D10 detail: corpus 300 broad sessions × 200 records + 120 dense sessions over the ` +
        `fixture world; cold (fresh daemon each) ${states(cold)}, engine took_ms max ` +
        `${f(Math.max(...cold.map((a) => a.tookMs)))}; warm ${states(warm)}; dense ${
          states(dense)
        } ` +
        `largest ${fmt(Math.max(...dense.map((a) => a.bytes)))} B; brimming page ` +
        `${brim.groups} groups, ${fmt(brim.bytes)} B (cap ${fmt(SEARCH_RESPONSE_CAP_BYTES)} B)`,
    );
    assert.ok(all.every((a) => a.status === 200));
    // Within the budget, partial/timeout or — since segments load as one read of binary
    // bytes (issue 16) — sometimes already complete; never past it (the time checks below).
    assert.ok(
      cold.every((a) => a.state === "partial" || a.state === "ready"),
      `cold: ${states(cold)}`,
    );
    // The engine stops at the 150 ms budget, checked before each segment: one segment's
    // load and match (and a GC pause on a loaded 2-core box) may run past it.
    const took = cold.map((a) => a.tookMs);
    assert.ok(pct(took, 50) <= 150 + 60, `cold engine time p50 ${pct(took, 50)} ms`);
    assert.ok(pct(coldMs, 99) < 150 + 500, `cold p99 ${pct(coldMs, 99)} ms`);
    // Warm, the broad query takes ~12 ms: a timeout needs a >10× stall (a GC of the
    // arena, or a CPU-starved 2-core CI box running the suite in parallel).
    const complete = warm.filter((a) => a.state === "ready").length;
    assert.ok(complete >= warm.length * 0.9, `warm: ${states(warm)}`);
    assert.equal(over, 0);
  }));

/**
 * Binary search on the project length of 101 one-hit sessions for the largest groups that
 * still all fit one 100-group page: the page then fills the response budget to the brim,
 * and the coverage block the route appends must still fit under the cap.
 */
async function brimmingPage(w: World, base: string, token: string): Promise<Answer> {
  const store = await openStore({
    root: w.store.root,
    fs: withoutSync(),
    parserVersion: PARSER_VERSION,
    windowDays: w.cfg.messageSearch.windowDays,
  });
  const now = Date.now();
  let wm = 1000;
  const trial = async (len: number) => {
    wm++;
    const ups = [];
    for (let s = 0; s < 101; s++) {
      const id = `019d0000-0000-7000-8000-${String(s).padStart(12, "0")}`;
      const u = update("replace", id, {
        recs: [record(id, 0, { ts: now - 60_000 - s * 1000, text: "qqbrim target" })],
        watermark: wm,
      });
      u.meta = { ...u.meta!, title: null, project: `/p/${"d".repeat(len)}` };
      ups.push(u);
    }
    assert.deepEqual((await store.publish(ups)).rejected, []);
    return await ask(base, token, "qqbrim");
  };
  let lo = 100, hi = 4000;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((await trial(mid)).groups === 100) lo = mid;
    else hi = mid;
  }
  const a = await trial(lo);
  assert.equal(a.groups, 100, "the brimming page holds a full page");
  return a;
}

/** The attacker side: a page server on 127.0.0.2:<port> that becomes a TCP forwarder. */
function rebindingProxy(hostname: string, port: number) {
  const listener = Deno.listen({ hostname, port });
  const state: { forward: { hostname: string; port: number } | null } = { forward: null };
  const page = `<!doctype html><title>evil</title><script>
    window.steal = async (path) => {
      try {
        const r = await fetch(path, { credentials: "include" });
        const body = await r.text();
        return { status: r.status, bytes: r.ok ? body.length : 0, errorBytes: r.ok ? 0 : body.length, head: body.slice(0, 80) };
      } catch (e) { return { status: 0, bytes: 0, errorBytes: 0, head: String(e) }; }
    };
  </script>`;
  const serve = async (conn: Deno.Conn) => {
    // The mode is decided per request, when its head has arrived: Chromium opens sockets
    // ahead of need (preconnect), so one accepted during the page load may carry a fetch
    // sent after the flip.
    const buf = new Uint8Array(8192);
    const head: Uint8Array[] = [];
    let req = "";
    while (!req.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) return conn.close();
      head.push(buf.slice(0, n));
      req += new TextDecoder().decode(buf.subarray(0, n));
    }
    const target = state.forward;
    if (target) {
      const up = await Deno.connect(target);
      for (const part of head) await up.write(part);
      await Promise.allSettled([
        conn.readable.pipeTo(up.writable),
        up.readable.pipeTo(conn.writable),
      ]);
      return;
    }
    const isPage = req.startsWith("GET / ");
    const body = isPage ? page : "not found";
    const reply = `HTTP/1.1 ${isPage ? "200 OK" : "404 Not Found"}\r\ncontent-type: text/html\r\n` +
      `content-length: ${new TextEncoder().encode(body).length}\r\nconnection: close\r\n\r\n`;
    await conn.write(new TextEncoder().encode(reply + body));
    conn.close();
  };
  const loop = (async () => {
    for await (const conn of listener) serve(conn).catch(() => {});
  })();
  return {
    flip(to: { hostname: string; port: number } | null) {
      state.forward = to;
    },
    async close() {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

type Stolen = { status: number; bytes: number; head: string };

/** Runs the attacker page's steal() on every path (same-origin fetches, credentials on). */
function stealAll(page: Page, paths: string[]): Promise<Stolen[]> {
  return page.evaluate(
    (ps) =>
      Promise.all(
        ps.map((p) => (globalThis as unknown as { steal(p: string): Promise<Stolen> }).steal(p)),
      ),
    paths,
  );
}

Deno.test({
  name:
    "D2 a DNS-rebinding page in Chromium reads nothing from the daemon (negative control reads a naive server)",
  ignore: !BROWSER_AVAILABLE,
  fn: () =>
    withTempDir(async (root) => {
      const w = await buildWorld(root);
      const cfg = { ...w.cfg, server: { host: "127.0.0.1" as const, port: 0 } };
      const d = await startDaemon(cfg, { noInitialSweep: true });
      await w.indexer.sweep();
      const naive = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () => new Response(`{"secret":"${"S".repeat(100)}"}`, { status: 200 }),
      );
      // One attacker origin per proxy: Chromium pools connections per origin, so the
      // control's kept-alive sockets can never carry the attack's requests.
      const proxy = rebindingProxy("127.0.0.2", d.port);
      const controlProxy = rebindingProxy("127.0.0.3", d.port);
      const profile = await Deno.makeTempDir({ prefix: "intendant-chromium-" });
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--host-resolver-rules=MAP evil.test 127.0.0.2, MAP control.test 127.0.0.3, " +
          "MAP rebind.test 127.0.0.1",
        ],
      });
      try {
        const page = context.pages()[0] ?? await context.newPage();
        // The victim opened the dashboard: the token cookie is set for 127.0.0.1.
        await page.goto(`${d.url}?token=${d.token}`);
        const own = await page.evaluate(() =>
          fetch("/api/sessions/message-search?q=cookie").then((r) => r.status)
        );
        assert.equal(own, 200, "the victim's own tab reads the API");
        const paths = [
          "/api/sessions/message-search?q=cookie",
          "/api/sessions/message-search?q=the",
          "/api/sessions",
          "/api/coverage",
          "/api/routes",
          "/",
          "/app.js",
        ];
        // Negative control: the same flip onto a server without a Host check is read.
        await page.goto(`http://control.test:${d.port}/`);
        controlProxy.flip({ hostname: "127.0.0.1", port: naive.addr.port });
        const control = await stealAll(page, paths);
        // The attack: the page from the attacker, then the flip onto the daemon.
        await page.goto(`http://evil.test:${d.port}/`);
        proxy.flip({ hostname: "127.0.0.1", port: d.port });
        const attack = await stealAll(page, paths);
        // A second name resolving straight to 127.0.0.1 (the post-flip view): also 403.
        const direct = await page.goto(`http://rebind.test:${d.port}/api/coverage`);
        const read = attack.reduce((n, a) => n + a.bytes, 0);
        const controlRead = control.reduce((n, a) => n + a.bytes, 0);
        figure("D2", `bytes read by attacker page: ${read}`);
        // deno-lint-ignore no-console
        console.log(
          `D2 detail: ${paths.length} same-origin fetches after the flip → statuses ` +
            `${JSON.stringify(attack.map((a) => a.status))} (${
              JSON.stringify(attack[0]?.head)
            }); rebind.test→127.0.0.1 navigation: ${direct?.status()}; negative control ` +
            `(naive server behind the same flip): ${controlRead} bytes read`,
        );
        assert.equal(read, 0);
        assert.ok(attack.every((a) => a.status === 403), JSON.stringify(attack));
        assert.equal(direct?.status(), 403);
        assert.ok(controlRead > 0, "the negative control must read the naive server");
      } finally {
        await context.close();
        await proxy.close();
        await controlProxy.close();
        await naive.shutdown();
        await d.shutdown();
        await Deno.remove(profile, { recursive: true }).catch(() => {});
      }
    }),
});
