/**
 * Team search end to end (issue 19's "done when"): two state roots — two machines, each
 * with every agent's fixture home — publish into ONE real PostgreSQL through the real
 * program, and every interface answers across them:
 *  - `team init`, then `index --team` on each machine (what it published, then "nothing
 *    new" on a re-run);
 *  - `search --team` (human and --json) finds both machines' sessions, each named with its
 *    machine; `--machine` narrows; `--local` searches this machine's index only;
 *  - `serve --team` on machine alpha publishes on its own: a line appended to one of
 *    alpha's transcripts becomes searchable from machine beta's CLI, and the daemon's API
 *    answers `scope=team` across both machines and opens beta's session remotely;
 *  - `team status` lists both machines with their record counts.
 * Nothing is mocked: real files, real subprocesses, real PostgreSQL, real HTTP.
 */
import { plantUserMessage as plant } from "./fixtures/plant.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildAllFixtures } from "./fixtures/all.ts";
import { runIntendant, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { randomChars } from "./helpers/secret_keys.ts";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** A key of GitHub's token shape, one per machine (its own text, pasted into a prompt). */
const keyOf = (machine: string) => `ghp_${machine.slice(0, 2)}${randomChars(ALNUM, 34, [])}`;

Deno.test("team search across two machines through every interface", async () => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (dir) => {
      const url = `postgres://${pg.superuser}@127.0.0.1:${pg.port}/postgres?sslmode=disable`;
      const machine = async (name: string) => {
        const root = join(dir, name);
        const fixtures = await buildAllFixtures(root);
        Deno.mkdirSync(join(root, "tmp"), { recursive: true });
        const key = keyOf(name);
        plant(fixtures.homes.codex!, `zephyrteam word from ${name} with token ${key}`);
        const env: Record<string, string> = {
          ...hermeticEnv(root, fixtures.env),
          INTENDANT_MACHINE: name,
          PGPASSWORD: pg.password,
        };
        const run = (...args: string[]) => runIntendant(root, args, { env });
        return {
          root,
          fixtures,
          env,
          run,
          key,
          codexKey: fixtures.homes.codex!.appendTarget.key,
        };
      };
      const alpha = await machine("alpha");
      const beta = await machine("beta");
      const init = await alpha.run("team", "init", "--team", url);
      assert.equal(init.code, 0, init.stderr);

      // index --team on each machine.
      for (const m of [alpha, beta]) {
        const r = await m.run("index", "--team", url);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /as machine (alpha|beta): published \d+ records of \d+ sessions/);
        assert.ok(!r.stdout.includes(pg.password) && !r.stderr.includes(pg.password));
      }
      const again = await beta.run("index", "--team", url);
      assert.match(again.stdout, /nothing new to publish/);

      // search --team from alpha sees both machines.
      const j = await alpha.run("search", "zephyrteam", "--team", url, "--json");
      assert.equal(j.code, 0, j.stderr);
      const res = JSON.parse(j.stdout);
      assert.equal(res.state, "ready");
      assert.equal(res.answered_by, "team");
      assert.deepEqual(
        res.groups.map((g: { machine: string }) => g.machine).sort(),
        ["alpha", "beta"],
      );
      for (const g of res.groups) {
        assert.equal(g.session_key, alpha.codexKey.replace(/^.*?codex:/, "codex:"));
        assert.match(g.hits[0].snippet, new RegExp(`zephyrteam word from ${g.machine}`));
      }
      const human = await alpha.run("search", "zephyrteam", "--team", url);
      assert.match(human.stdout, /^beta codex /m);
      assert.match(human.stdout, /^alpha codex /m);
      // Another machine's text is someone else's: masked in the CLI too, human and --json
      // (issue 25); this machine's own only with --unmask-own, another's never.
      for (const out of [human.stdout, j.stdout]) {
        assert.ok(!out.includes(beta.key) && !out.includes(alpha.key), out);
        assert.match(out, /token ghp_…\[github token\]|token ghp_\S*…/);
      }
      assert.ok(res.groups.every((g: { masked?: boolean }) => g.masked === true));
      const own = await alpha.run("search", "zephyrteam", "--team", url, "--unmask-own");
      assert.ok(own.stdout.includes(alpha.key), own.stdout);
      assert.ok(!own.stdout.includes(beta.key), own.stdout);
      assert.match(own.stdout, /\(2 sessions\)$/m);
      const mixed = await alpha.run("search", "zephyrteam", "--local", "--unmask-own");
      assert.equal(mixed.code, 2);
      assert.match(mixed.stderr, /--unmask-own applies to team search/);
      const onlyBeta = await alpha.run("search", "zephyrteam", "--team", url, "--machine", "beta");
      assert.doesNotMatch(onlyBeta.stdout, /^alpha /m);
      assert.match(onlyBeta.stdout, /^beta codex /m);
      const local = await alpha.run("search", "zephyrteam", "--local", "--json");
      assert.equal(JSON.parse(local.stdout).groups.length, 1);

      // serve --team on alpha publishes by itself and answers team scope over HTTP.
      const serve = spawnIntendant(alpha.root, ["serve", "--port", "0", "--team", url], {
        env: alpha.env,
      });
      try {
        const djPath = join(alpha.env.INTENDANT_HOME!, "daemon.json");
        await waitFor(
          async () => {
            try {
              await Deno.stat(djPath);
              return true;
            } catch {
              return false;
            }
          },
          30_000,
          "daemon.json",
        ).catch((e) => {
          throw new Error(`${e.message}; serve said: ${serve.stderrSoFar()}`);
        });
        const dj = JSON.parse(await Deno.readTextFile(djPath));
        const word = `teamappend${crypto.randomUUID().slice(0, 8)}`;
        // The first sweep must have run before an append is a pure append.
        await new Promise((r) => setTimeout(r, 1500));
        const t0 = performance.now();
        plant(alpha.fixtures.homes.codex!, `${word} appended on alpha`);
        await waitFor(
          async () => {
            const r = await beta.run("search", word, "--team", url, "--json");
            return r.code === 0 && JSON.parse(r.stdout).groups.length === 1;
          },
          30_000,
          "the append to be team-searchable from beta",
        );
        const appendMs = performance.now() - t0;
        const api = await fetch(
          `http://127.0.0.1:${dj.port}/api/sessions/message-search?scope=team&q=zephyrteam&complete=true`,
          { headers: { authorization: `Bearer ${dj.token}` } },
        );
        assert.equal(api.status, 200);
        const body = await api.json();
        assert.equal(body.state, "ready", JSON.stringify(body));
        assert.deepEqual(
          body.groups.map((g: { machine: string }) => g.machine).sort(),
          ["alpha", "beta"],
        );
        const remote = await fetch(
          `http://127.0.0.1:${dj.port}/api/team/session?machine=beta&key=${
            encodeURIComponent(body.groups[0].session_key)
          }`,
          { headers: { authorization: `Bearer ${dj.token}` } },
        );
        assert.equal(remote.status, 200);
        const detail = await remote.json();
        assert.equal(detail.meta.remote, true);
        assert.ok(
          detail.records.some((r: { text: string }) =>
            r.text.includes("zephyrteam word from beta")
          ),
        );
        const status = await alpha.run("team", "status", "--team", url, "--json");
        const st = JSON.parse(status.stdout);
        assert.deepEqual(st.machines.map((m: { name: string }) => m.name).sort(), [
          "alpha",
          "beta",
        ]);
        for (const m of st.machines) assert.ok(m.records > 0);
        console.log(`append on alpha → searchable from beta's CLI: ${Math.round(appendMs)} ms`);
      } finally {
        serve.child.kill("SIGTERM");
        const done = await serve.done;
        assert.equal(done.code, 0, done.stderr);
      }
    });
  });
});
