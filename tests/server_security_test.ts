/**
 * The HTTP edge's security, through app.request() on a real world (reliability-plan D1,
 * D3, D4, D6, D8, D9, D11, D12): exact Host allowlist, token on every /api route (never
 * from the query string), Origin on state-changing requests, no CORS grants, id grammar
 * before any file access, the concurrency cap, no-store everywhere, and q never logged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildWorld, PORT } from "./helpers/world.ts";
import { withTempDir } from "./helpers/temp.ts";
import { figure } from "./helpers/figures.ts";
import { tokenMatches } from "../lib/server/mod.ts";

Deno.test("D1: only the three exact loopback Host forms are served", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const allowed = [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`];
    const foreign = [
      `evil.example:${PORT}`,
      "evil.example",
      `localhost.evil.example:${PORT}`,
      `evillocalhost:${PORT}`,
      `127.0.0.1.nip.io:${PORT}`,
      `LOCALHOST:${PORT}`,
      `localhost.:${PORT}`,
      `127.0.0.1:${PORT + 1}`,
      "127.0.0.1",
      "localhost",
      "",
      `[::ffff:127.0.0.1]:${PORT}`,
      `0x7f.1:${PORT}`,
      `127.1:${PORT}`,
      `0.0.0.0:${PORT}`,
      `127.0.0.2:${PORT}`,
      `[::1]`,
      `2130706433:${PORT}`,
      `localhost:${PORT}.evil`,
      `a.localhost:${PORT}`,
      `127.0.0.1:0${PORT}`,
      `127.0.0.1 :${PORT}`,
      `127.0.0.1:${PORT}/x`,
      `user@127.0.0.1:${PORT}`,
      `%31%32%37.0.0.1:${PORT}`,
      `127.0.0.1:${PORT}:${PORT}`,
      `[0:0:0:0:0:0:0:1]:${PORT}`,
      `localhost\t:${PORT}`,
    ];
    let served = 0;
    for (const h of allowed) {
      if ((await w.get("/api/routes", { headers: { host: h } })).status === 200) served++;
    }
    let rejected = 0;
    for (const h of foreign) {
      const r = await w.get("/api/routes", { headers: { host: h } });
      if (r.status === 403) rejected++;
      await r.body?.cancel();
    }
    figure(
      "D1",
      `allowed forms served: ${served}/${allowed.length}, foreign hosts rejected: ${rejected}/${foreign.length}`,
    );
    assert.equal(served, allowed.length);
    assert.equal(rejected, foreign.length);
  }));

Deno.test("D3/D4: token required on every API route, never taken from the query; Origin checked; no CORS", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const noAuth = { authorization: "" };
    let bypasses = 0;
    for (
      const path of [
        "/api/routes",
        "/api/sessions",
        "/api/coverage",
        "/api/sessions/message-search?q=cookie",
      ]
    ) {
      for (
        const headers of [noAuth, { authorization: "Bearer wrong" }, {
          authorization: `Bearer ${w.token.slice(0, -1)}`,
        }, { authorization: `Bearer ${w.token}x` }]
      ) {
        const r = await w.get(path, { headers });
        if (r.status !== 401) bypasses++;
        assert.equal(r.headers.get("cache-control"), "no-store");
        await r.body?.cancel();
      }
      const q = await w.get(`${path}${path.includes("?") ? "&" : "?"}token=${w.token}`, {
        headers: noAuth,
      });
      if (q.status !== 401) bypasses++;
      await q.body?.cancel();
    }
    const cookie = await w.get("/api/routes", {
      headers: { authorization: "", cookie: `intendant_token=${w.token}` },
    });
    assert.equal(cookie.status, 200);
    assert.equal(bypasses, 0);
    // Cross-origin state changes are refused with or without a token; no CORS headers ever.
    let crossOk = 0, acao = 0;
    const id = Object.keys(w.homes.intendant!.expected)[0]!.split(":")[1]!;
    for (
      const origin of [
        "http://evil.example",
        "null",
        `http://192.168.1.5:${PORT}`,
        `https://127.0.0.1:${PORT}`,
      ]
    ) {
      for (const withToken of [true, false]) {
        const r = await w.get(`/api/session/${id}/name`, {
          method: "POST",
          headers: { origin, "content-type": "application/json", ...(withToken ? {} : noAuth) },
          body: JSON.stringify({ name: "pwned" }),
        });
        if (r.status < 400) crossOk++;
        if (r.headers.get("access-control-allow-origin")) acao++;
        await r.body?.cancel();
      }
    }
    const site = await w.get(`/api/session/${id}/name`, {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site", "content-type": "application/json" },
      body: JSON.stringify({ name: "x" }),
    });
    if (site.status < 400) crossOk++;
    let preflights = 0;
    for (const path of ["/api/sessions", "/api/session/x/name", "/api/sessions/message-search"]) {
      const pre = await w.get(path, {
        method: "OPTIONS",
        headers: {
          origin: "http://evil.example",
          "access-control-request-method": path.endsWith("name") ? "POST" : "GET",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      if (
        pre.headers.get("access-control-allow-origin") ||
        pre.headers.get("access-control-allow-methods")
      ) {
        acao++;
        preflights++;
      }
      await pre.body?.cancel();
    }
    figure(
      "D3",
      `cross-origin successes: ${crossOk}, ACAO headers emitted: ${acao}, preflight approvals: ${preflights}`,
    );
    assert.equal(crossOk, 0);
    assert.equal(acao, 0);
    // Same-origin rename works.
    const ok = await w.get(`/api/session/${id}/name`, {
      method: "POST",
      headers: { origin: `http://127.0.0.1:${PORT}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Mine" }),
    });
    assert.equal(ok.status, 200);
    const tokenInLogs = w.logs.join("\n").split(w.token).length - 1;
    assert.ok(!w.logs.join("\n").includes(w.token), "token never logged");
    const timing = tokenTiming(w.token);
    figure(
      "D4",
      `auth bypasses: ${bypasses}, timing delta ${
        timing.significant ? "SIGNIFICANT" : "not significant"
      }, token occurrences in logs: ${tokenInLogs}`,
    );
    console.log(
      `D4 detail: token compare, wrong first byte vs wrong last byte (same length): median ` +
        `${timing.firstNs.toFixed(1)} vs ${timing.lastNs.toFixed(1)} ns/compare, delta ` +
        `${(timing.delta * 100).toFixed(1)}%, Mann-Whitney p = ${timing.p.toFixed(3)} over ` +
        `${timing.rounds} interleaved rounds of ${timing.perRound} (length mismatch: fixed-length ` +
        `tokens, by design)`,
    );
    assert.equal(timing.significant, false, JSON.stringify(timing));
  }));

Deno.test("the tokenized URL is traded for an HttpOnly SameSite=Strict cookie and leaves the address bar", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const r = await w.get(`/?token=${w.token}`, {
      headers: { authorization: "" },
      redirect: "manual",
    });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get("location"), "/");
    assert.match(r.headers.get("set-cookie") ?? "", /intendant_token=.*HttpOnly.*SameSite=Strict/);
    const bad = await w.get(`/?token=nope`, { headers: { authorization: "" } });
    assert.equal(bad.status, 401);
    assert.match(await bad.text(), /intendant url/, "the token page, not a bare text");
    // Without the cookie `/` is the token page too; with it, the page itself.
    const anonymous = await w.get("/", { headers: { authorization: "" } });
    assert.equal(anonymous.status, 401);
    assert.match(await anonymous.text(), /intendant url/);
    const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = await w.get("/", { headers: { authorization: "", cookie } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    await page.body?.cancel();
  }));

Deno.test("D6: ids are checked against the grammar before any file access", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const vectors = [
      "..%2F..%2Fetc%2Fpasswd",
      "%2e%2e%2f%2e%2e",
      "..",
      ".hidden",
      "a%00b",
      "x".repeat(10_000),
      "a%2Fb",
      "%252e%252e%252f",
      "..%5c..%5cwin",
      "~root",
      "a b",
      "%C0%AE%C0%AE",
    ];
    let reached = 0;
    for (const v of vectors) {
      for (const suffix of ["", "/replay", "/report", "/stream"]) {
        const r = await w.get(`/api/session/${v}${suffix}`);
        if (r.status !== 400 && r.status !== 404) reached++;
        assert.ok(r.status < 500, `${v}${suffix} → ${r.status}`);
        await r.body?.cancel();
      }
    }
    figure("D6", `ids reaching fs without matching grammar: ${reached}`);
    assert.equal(reached, 0);
  }));

Deno.test("D8/D9: at most two searches in flight; the rest 429 with Retry-After; slots never leak", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const rssBefore = Deno.memoryUsage().rss;
    const results = await Promise.all(
      Array.from(
        { length: 100 },
        (_, i) => w.get(`/api/sessions/message-search?q=cookie${i % 3 ? "" : "+the"}`),
      ),
    );
    const by = (s: number) => results.filter((r) => r.status === s).length;
    const withRetry = results.filter((r) =>
      r.status === 429 && r.headers.get("retry-after")
    ).length;
    for (const r of results) await r.body?.cancel();
    const alive = (await w.get("/api/routes")).status === 200;
    const rssDelta = (Deno.memoryUsage().rss - rssBefore) / (1 << 20);
    const retryPct = by(429) === 0 ? "n/a" : `${Math.round((withRetry / by(429)) * 100)}%`;
    figure(
      "D8",
      `max in-flight observed: ${w.gate.maxSeen}, 200s: ${by(200)}, 429s: ${by(429)}, ` +
        `429 with Retry-After: ${retryPct}, 5xx: ${
          results.filter((r) => r.status >= 500).length
        }, ` +
        `daemon alive: ${alive ? "yes" : "no"}, RSS delta: ${rssDelta.toFixed(0)} MiB`,
    );
    console.log(
      "D8 detail: RSS is this test process's (in-process app, parallel test files share it)",
    );
    assert.ok(alive);
    assert.ok(w.gate.maxSeen <= 2);
    assert.equal(by(200) + by(429), 100);
    assert.ok(by(200) >= 1);
    assert.equal(withRetry, by(429));
    // Aborted clients release their slots; so do clients that never read the response.
    const aborts = Array.from({ length: 100 }, () => {
      const ac = new AbortController();
      const p = w.get("/api/sessions/message-search?q=redirect", { signal: ac.signal }).catch(() =>
        null
      );
      setTimeout(() => ac.abort(), 10);
      return p;
    });
    const unread = Array.from({ length: 10 }, () => w.get("/api/sessions/message-search?q=cookie"));
    await Promise.all([...aborts, ...unread]); // responses held, bodies never read
    await new Promise((r) => setTimeout(r, 1000));
    const gauge = w.gate.inFlight;
    const after = await w.get("/api/sessions/message-search?q=cookie");
    figure("D9", `in-flight gauge 1 s after: ${gauge}, leaked slots: ${gauge}`);
    console.log(
      `D9 detail: 100 requests aborted after 10 ms, 10 responses never read; next search: ` +
        `${after.status}`,
    );
    assert.equal(after.status, 200);
    await after.body?.cancel();
    assert.equal(w.gate.inFlight, 0);
  }));

Deno.test("D11/D12: a canary query never reaches any log or state file; no-store on every status; tampered cursors are 400/410, never 500", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const canary = "zq" + crypto.randomUUID().replaceAll("-", "");
    const statuses: number[] = [];
    let noStoreMissing = 0;
    const variants = [
      `q=${canary}`,
      `q=${canary}&limit=0`,
      `q=${canary}&limit=abc`,
      `q=${canary}&cursor=garbage`,
      `q=${canary}&source=aider`,
      `q=${canary}&since=notatime`,
      `q=${canary}&bogus=1`,
      `q=${canary}&cursor=${"A".repeat(5000)}`,
    ];
    for (let i = 0; i < 1000; i++) {
      const r = await w.get(`/api/sessions/message-search?${variants[i % variants.length]}`);
      statuses.push(r.status);
      if (r.headers.get("cache-control") !== "no-store") noStoreMissing++;
      assert.equal(r.headers.get("cache-control"), "no-store");
      await r.body?.cancel();
    }
    assert.ok(statuses.every((s) => s < 500));
    assert.ok(statuses.includes(200) && statuses.includes(400));
    let hits = w.logs.filter((l) => l.includes(canary)).length;
    for await (const f of walk(root)) {
      if ((await Deno.readTextFile(f).catch(() => "")).includes(canary)) hits++;
    }
    const dash = await w.get("/", { headers: { authorization: "" } });
    const referrer = dash.headers.get("referrer-policy") === "no-referrer";
    await dash.body?.cancel();
    figure(
      "D11",
      `canary hits outside responses: ${hits}, responses without Cache-Control: no-store: ` +
        `${noStoreMissing}, Referrer-Policy no-referrer on dashboard: ${referrer ? "yes" : "no"}`,
    );
    assert.equal(hits, 0);
    assert.ok(referrer);
    // Cursor from another query, an old revision, forged bytes.
    const p1 = await (await w.get("/api/sessions/message-search?q=the&limit=1")).json();
    assert.ok(p1.cursor, "a broad query pages");
    const tampered: number[] = statuses.filter((_, i) =>
      /cursor=/.test(variants[i % variants.length]!)
    );
    const other = await w.get(`/api/sessions/message-search?q=cookie&limit=1&cursor=${p1.cursor}`);
    tampered.push(other.status);
    assert.equal(other.status, 400);
    // Always a different character (choosing by another position's character left it the
    // same one time in 64: the "forged" cursor was the real one).
    const at = p1.cursor.length - 2;
    const flipped = p1.cursor.slice(0, at) + (p1.cursor[at] === "A" ? "B" : "A") +
      p1.cursor.slice(at + 1);
    assert.notEqual(flipped, p1.cursor);
    const forged = (await w.get(`/api/sessions/message-search?q=the&limit=1&cursor=${flipped}`))
      .status;
    tampered.push(forged);
    assert.equal(forged, 400);
    // A publish between pages → 410.
    const s = Object.keys(w.homes.intendant!.expected)[0]!;
    const path = w.homes.intendant!.appendTarget.path;
    Deno.writeTextFileSync(
      path,
      w.homes.intendant!.appendTarget.userLine("a new message about the weather", 7),
      { append: true },
    );
    await w.indexer.sweep();
    const stale = await w.get(`/api/sessions/message-search?q=the&limit=1&cursor=${p1.cursor}`);
    tampered.push(stale.status);
    figure(
      "D12",
      `5xx: ${tampered.filter((s) => s >= 500).length}, wrong-snapshot pages: ${
        tampered.filter((s) => s === 200).length
      }`,
    );
    console.log(
      `D12 detail: ${tampered.length} tampered/foreign/old cursors (garbage, 5,000 chars, ` +
        `another query's, a flipped MAC byte, an older revision's) → ${
          JSON.stringify([...new Set(tampered)])
        }`,
    );
    assert.equal(stale.status, 410);
    assert.equal((await stale.json()).error, "cursor_expired");
    assert.ok(s);
  }));

/**
 * Times the token compare: a token wrong in its first byte against one wrong in its last
 * (same length), interleaved rounds, medians of per-round ns/compare. "Significant" only
 * when the medians differ by over 10% AND a Mann-Whitney U test says p < 0.001: a
 * byte-by-byte compare differs by far more; scheduling noise on a busy box by far less.
 */
function tokenTiming(token: string) {
  const first = (token[0] === "A" ? "B" : "A") + token.slice(1);
  const last = token.slice(0, -1) + (token.at(-1) === "A" ? "B" : "A");
  const rounds = 31;
  const perRound = 8_000;
  const a: number[] = [];
  const b: number[] = [];
  const time = (given: string) => {
    const t0 = performance.now();
    for (let i = 0; i < perRound; i++) tokenMatches(given, token);
    return ((performance.now() - t0) * 1e6) / perRound;
  };
  time(first); // warm-up
  time(last);
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      a.push(time(first));
      b.push(time(last));
    } else {
      b.push(time(last));
      a.push(time(first));
    }
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
  const firstNs = median(a);
  const lastNs = median(b);
  const delta = Math.abs(firstNs - lastNs) / Math.min(firstNs, lastNs);
  const p = mannWhitneyP(a, b);
  return { firstNs, lastNs, delta, p, rounds, perRound, significant: delta > 0.1 && p < 0.001 };
}

/** Two-sided Mann-Whitney U p-value (normal approximation, ties averaged). */
function mannWhitneyP(a: number[], b: number[]): number {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) =>
    x.v - y.v
  );
  const ranks = new Array<number>(all.length);
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    for (let k = i; k <= j; k++) ranks[k] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const r1 = all.reduce((s, x, i) => s + (x.g === 0 ? ranks[i]! : 0), 0);
  const n1 = a.length, n2 = b.length;
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
  const z = Math.abs(u - mu) / sigma;
  // erfc via Abramowitz-Stegun 7.1.26.
  const t = 1 / (1 + 0.3275911 * (z / Math.SQRT2));
  const erfc = t * Math.exp(-((z / Math.SQRT2) ** 2)) *
    (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return erfc;
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile) yield p;
  }
}
