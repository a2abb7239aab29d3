/**
 * The dashboard token with the real program (issue 14, item 4): two `intendant serve`
 * starts on one state root advertise the same token and the first start's cookie still
 * opens the second; `intendant token --rotate` against a running daemon makes the old
 * token (bearer and cookie) fail at once, the new one work, and daemon.json follow, with
 * no restart; `intendant url` prints the running daemon's link, or the configured port's
 * with a note on stderr when none runs; a wrong `?token=` and a missing cookie get the
 * token page, not the app.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runIntendant, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";

interface Served {
  port: number;
  token: string;
  stop(): Promise<string>;
}

async function serve(root: string): Promise<Served> {
  const daemonJson = join(root, "state", "daemon.json");
  const run = spawnIntendant(root, ["serve", "--port", "0"]);
  let info: { pid: number; port: number; token: string } | null = null;
  await waitFor(
    () => {
      try {
        const d = JSON.parse(Deno.readTextFileSync(daemonJson));
        if (d.pid !== run.child.pid) return false;
        info = d;
        return true;
      } catch {
        return false;
      }
    },
    30_000,
    "daemon.json of the new daemon",
  );
  const { port, token } = info!;
  return {
    port,
    token,
    async stop() {
      run.child.kill("SIGTERM");
      const done = await run.done;
      assert.equal(done.code, 0, done.stderr);
      return done.stderr;
    },
  };
}

function get(port: number, path: string, headers: Record<string, string> = {}) {
  return fetch(`http://127.0.0.1:${port}${path}`, { headers, redirect: "manual" });
}

async function status(port: number, path: string, headers: Record<string, string> = {}) {
  const r = await get(port, path, headers);
  await r.body?.cancel();
  return r.status;
}

async function cookieFor(port: number, token: string): Promise<string> {
  const r = await get(port, `/?token=${token}`);
  await r.body?.cancel();
  assert.equal(r.status, 303);
  return (r.headers.get("set-cookie") ?? "").split(";")[0]!;
}

Deno.test("the token survives a restart: same token, and the first start's cookie opens the second", () =>
  withTempDir(async (root) => {
    const first = await serve(root);
    const cookie = await cookieFor(first.port, first.token);
    assert.equal(await status(first.port, "/api/routes", { cookie }), 200);
    await first.stop();

    const second = await serve(root);
    try {
      assert.equal(second.token, first.token);
      assert.equal(await status(second.port, "/api/routes", { cookie }), 200);
      const page = await get(second.port, "/", { cookie });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<script type="module" src="\/app\.js">/);
      const file = join(root, "state", "token");
      assert.equal(Deno.readTextFileSync(file).trim(), first.token);
      assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    } finally {
      await second.stop();
    }
  }));

Deno.test("`intendant token --rotate` on a running daemon: the old token and cookie stop working at once", () =>
  withTempDir(async (root) => {
    const d = await serve(root);
    let stderr = "";
    try {
      const cookie = await cookieFor(d.port, d.token);
      const url = await runIntendant(root, ["url"]);
      assert.equal(url.code, 0, url.stderr);
      assert.equal(url.stdout, `http://127.0.0.1:${d.port}/?token=${d.token}\n`);

      const rotated = await runIntendant(root, ["token", "--rotate"]);
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.match(rotated.stderr, /old links and cookies no longer work/);
      const fresh = /\?token=([A-Za-z0-9_-]+)$/m.exec(rotated.stdout)?.[1];
      assert.ok(fresh && fresh !== d.token, rotated.stdout);
      assert.equal(rotated.stdout, `http://127.0.0.1:${d.port}/?token=${fresh}\n`);

      // No waiting: the command returned only once the daemon accepted the new token.
      assert.equal(await status(d.port, "/api/routes", { cookie }), 401);
      assert.equal(
        await status(d.port, "/api/routes", { authorization: `Bearer ${d.token}` }),
        401,
      );
      assert.equal(await status(d.port, `/?token=${d.token}`), 401);
      const app = await get(d.port, "/", { cookie });
      assert.equal(app.status, 401);
      assert.match(await app.text(), /intendant url/);
      assert.equal(
        await status(d.port, "/api/routes", { authorization: `Bearer ${fresh}` }),
        200,
      );
      const newCookie = await cookieFor(d.port, fresh!);
      assert.equal(await status(d.port, "/api/routes", { cookie: newCookie }), 200);
      await waitFor(
        () => {
          const j = JSON.parse(Deno.readTextFileSync(join(root, "state", "daemon.json")));
          return j.token === fresh;
        },
        5_000,
        "daemon.json to carry the new token",
      );
      const again = await runIntendant(root, ["url"]);
      assert.equal(again.stdout, `http://127.0.0.1:${d.port}/?token=${fresh}\n`);
    } finally {
      stderr = await d.stop();
    }
    assert.match(stderr, /token was rotated/);
  }));

Deno.test("`intendant url` with no daemon: the configured port's link, and stderr says none runs", () =>
  withTempDir(async (root) => {
    const r = await runIntendant(root, ["url"], { env: { INTENDANT_PORT: "9876" } });
    assert.equal(r.code, 0, r.stderr);
    const token = Deno.readTextFileSync(join(root, "state", "token")).trim();
    assert.equal(r.stdout, `http://127.0.0.1:9876/?token=${token}\n`);
    assert.match(r.stderr, /no daemon is running/);
    const t = await runIntendant(root, ["token"]);
    assert.equal(t.stdout, token + "\n");
    const zero = await runIntendant(root, ["url"], { env: { INTENDANT_PORT: "0" } });
    assert.equal(zero.code, 1);
    assert.equal(zero.stdout, "");
    assert.match(zero.stderr, /port is 0/);
  }));

Deno.test("without a valid cookie `/` is the token page (401), never the app", () =>
  withTempDir(async (root) => {
    const d = await serve(root);
    try {
      for (const path of ["/", "/?token=wrong", `/?token=${d.token}x`]) {
        const r = await get(d.port, path);
        assert.equal(r.status, 401, path);
        assert.match(r.headers.get("content-type") ?? "", /text\/html/);
        assert.match(r.headers.get("content-security-policy") ?? "", /default-src 'none'/);
        const body = await r.text();
        assert.match(body, /intendant url/, path);
        assert.match(body, /daemon\.json/, path);
        // The token page loads the bundle only to keep a shared link's #fragment (issue 25:
        // the CSP allows no inline script); it never mounts the app.
        assert.ok(!body.includes('id="app"'), `${path} must not mount the app`);
        assert.match(
          body,
          /<script type="module" src="\/app\.js" data-page="token"><\/script><\/body>/,
        );
      }
      const api = await get(d.port, "/api/sessions");
      assert.equal(api.status, 401);
      const help = await api.json();
      assert.equal(help.command, "intendant url");
      assert.equal(help.reason, "missing");
    } finally {
      await d.stop();
    }
  }));
