/**
 * The real daemon on a real port: `intendant serve --port 0` prints the tokenized URL,
 * writes daemon.json (0600), trades the URL token for a cookie, answers the API, refuses
 * foreign Host headers on a raw socket (fetch would rewrite Host), is not reachable on a
 * non-loopback address (D13), and shuts down cleanly on SIGTERM.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnIntendant, waitFor, waitForDaemonJson } from "./helpers/cli.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { withTempDir } from "./helpers/temp.ts";
import { figure } from "./helpers/figures.ts";

async function rawGet(port: number, host: string, path: string, token: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      ),
    );
    let out = "";
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      out += new TextDecoder().decode(buf.subarray(0, n));
    }
    return out;
  } finally {
    conn.close();
  }
}

Deno.test("`intendant serve` on a real port: tokenized URL, cookie, API, Host check, loopback only, clean stop", () =>
  withTempDir(async (root) => {
    await writeNativeSession(join(root, "state", "logs"), {
      turns: 3,
      task: "Find the flaky websocket test",
    });
    const run = spawnIntendant(root, ["serve", "--port", "0"]);
    // daemon.json is written before the URL is printed: wait for it.
    const daemonJson = join(root, "state", "daemon.json");
    const info = await waitForDaemonJson(root);
    assert.equal(Deno.statSync(daemonJson).mode! & 0o777, 0o600);
    const base = `http://127.0.0.1:${info.port}`;
    const boot = await fetch(`${base}/?token=${info.token}`, { redirect: "manual" });
    assert.equal(boot.status, 303);
    const cookie = (boot.headers.get("set-cookie") ?? "").split(";")[0]!;
    await boot.body?.cancel();
    await waitFor(
      async () => {
        const c = await fetch(`${base}/api/coverage`, { headers: { cookie } });
        const j = await c.json();
        return j.state === "ready";
      },
      20_000,
      "first sweep",
    );
    const s = await (await fetch(`${base}/api/sessions/message-search?q=websocket`, {
      headers: { cookie },
    })).json();
    assert.equal(s.groups.length, 1);
    assert.equal((await fetch(`${base}/api/sessions`)).status, 401);
    const evil = await rawGet(info.port, "evil.example", "/api/routes", info.token);
    assert.match(evil, /^HTTP\/1\.1 403/);
    const good = await rawGet(info.port, `localhost:${info.port}`, "/api/routes", info.token);
    assert.match(good, /^HTTP\/1\.1 200/);
    // D13: not reachable on any non-loopback interface address.
    const addrs = Deno.networkInterfaces().filter((i) =>
      i.family === "IPv4" && !i.address.startsWith("127.")
    );
    let accepted = 0;
    for (const a of addrs) {
      try {
        const conn = await Deno.connect({ hostname: a.address, port: info.port });
        conn.close();
        accepted++;
      } catch {
        // Refused: the daemon binds 127.0.0.1 only.
      }
    }
    figure("D13", `non-loopback connects accepted: ${accepted}`);
    console.log(`D13 detail: non-loopback interface addresses tried: ${addrs.length}`);
    assert.equal(accepted, 0);
    run.child.kill("SIGTERM");
    const done = await run.done;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Open: http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    assert.throws(() => Deno.statSync(daemonJson), Deno.errors.NotFound);
  }));
