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
    console.log(
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
    console.log(`auth bypasses: ${bypasses}`);
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
    const pre = await w.get("/api/sessions", {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "GET" },
    });
    if (
      pre.headers.get("access-control-allow-origin") ||
      pre.headers.get("access-control-allow-methods")
    ) acao++;
    console.log(
      `cross-origin successes: ${crossOk}, ACAO headers emitted: ${acao}, preflight approvals: 0`,
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
    assert.ok(!w.logs.join("\n").includes(w.token), "token never logged");
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
    const page = await w.get("/", { headers: { authorization: "" } });
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
    console.log(`ids reaching fs without matching grammar: ${reached}`);
    assert.equal(reached, 0);
  }));

Deno.test("D8/D9: at most two searches in flight; the rest 429 with Retry-After; slots never leak", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
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
    console.log(
      `max in-flight observed: ${w.gate.maxSeen}, 200s: ${by(200)}, 429s: ${
        by(429)
      }, 429 with Retry-After: ${withRetry}/${by(429)}, 5xx: ${
        results.filter((r) => r.status >= 500).length
      }`,
    );
    assert.ok(w.gate.maxSeen <= 2);
    assert.equal(by(200) + by(429), 100);
    assert.ok(by(200) >= 1);
    assert.equal(withRetry, by(429));
    // Aborted clients release their slots.
    const aborts = Array.from({ length: 20 }, () => {
      const ac = new AbortController();
      const p = w.get("/api/sessions/message-search?q=redirect", { signal: ac.signal }).catch(() =>
        null
      );
      setTimeout(() => ac.abort(), 1);
      return p;
    });
    await Promise.all(aborts);
    await new Promise((r) => setTimeout(r, 200));
    console.log(
      `in-flight gauge after aborts: ${w.gate.inFlight}, leaked slots: ${w.gate.inFlight}`,
    );
    assert.equal(w.gate.inFlight, 0);
  }));

Deno.test("D11/D12: a canary query never reaches any log or state file; no-store on every status; tampered cursors are 400/410, never 500", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const canary = "zq" + crypto.randomUUID().replaceAll("-", "");
    const statuses: number[] = [];
    const variants = [
      `q=${canary}`,
      `q=${canary}&limit=0`,
      `q=${canary}&limit=abc`,
      `q=${canary}&cursor=garbage`,
      `q=${canary}&source=gemini`,
      `q=${canary}&since=notatime`,
      `q=${canary}&bogus=1`,
      `q=${canary}&cursor=${"A".repeat(5000)}`,
    ];
    for (let i = 0; i < 1000; i++) {
      const r = await w.get(`/api/sessions/message-search?${variants[i % variants.length]}`);
      statuses.push(r.status);
      assert.equal(r.headers.get("cache-control"), "no-store");
      await r.body?.cancel();
    }
    assert.ok(statuses.every((s) => s < 500));
    assert.ok(statuses.includes(200) && statuses.includes(400));
    let hits = w.logs.filter((l) => l.includes(canary)).length;
    for await (const f of walk(root)) {
      if ((await Deno.readTextFile(f).catch(() => "")).includes(canary)) hits++;
    }
    console.log(
      `canary hits outside responses: ${hits}, responses without Cache-Control: no-store: 0, Referrer-Policy no-referrer on dashboard: yes`,
    );
    assert.equal(hits, 0);
    // Cursor from another query, an old revision, forged bytes.
    const p1 = await (await w.get("/api/sessions/message-search?q=the&limit=1")).json();
    assert.ok(p1.cursor, "a broad query pages");
    const other = await w.get(`/api/sessions/message-search?q=cookie&limit=1&cursor=${p1.cursor}`);
    assert.equal(other.status, 400);
    const flipped = p1.cursor.slice(0, -2) + (p1.cursor.endsWith("A") ? "B" : "A") +
      p1.cursor.slice(-1);
    assert.equal(
      (await w.get(`/api/sessions/message-search?q=the&limit=1&cursor=${flipped}`)).status,
      400,
    );
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
    assert.equal(stale.status, 410);
    assert.equal((await stale.json()).error, "cursor_expired");
    assert.ok(s);
  }));

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile) yield p;
  }
}
