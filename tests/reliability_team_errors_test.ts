/**
 * Reliability-plan H8: team commands while PostgreSQL restarts. `index --team`, `search
 * --team` and `team status` run as real processes against a real cluster that is
 * restarted (`pg_ctl restart -m immediate`: every connection cut) at a random point of each
 * run; each run must end either in success or in exactly one `intendant: …` line and one
 * `hint: …` line with exit 1 — never an uncaught error, a stack trace or exit 70. The MCP
 * server with `--team` (a daemon) is asked while the cluster restarts under it and must
 * keep answering. A final publish after the restarts succeeds. Negative control: the bare
 * postgres client (tests/helpers/bare_pg_child.ts) under the same restarts ends with an
 * uncaught error and a stack.
 */
import assert from "node:assert/strict";
import { type CliResult, runIntendant } from "./helpers/cli.ts";
import { buildAllFixtures } from "./fixtures/all.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { join } from "node:path";

const RUNS = STRESS ? 30 : 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Success, or one line and a hint with exit 1; anything else is a defect. */
function clean(r: CliResult): boolean {
  if (r.code === 0) return !/Uncaught|^\s+at /m.test(r.stderr);
  const lines = r.stderr.trimEnd().split("\n");
  return r.code === 1 && lines.length === 2 && /^intendant: /.test(lines[0]!) &&
    /^hint: /.test(lines[1]!);
}

Deno.test("H8: team commands during PostgreSQL restarts end in one line and a hint, never a stack", async () => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (root) => {
      const fx = await buildAllFixtures(root);
      const url = `${pg.url}?sslmode=disable`;
      const env = { ...fx.env, INTENDANT_MACHINE: "m1" };
      const init = await runIntendant(root, ["team", "init", "--team", url], { env });
      assert.equal(init.code, 0, init.stderr);
      const commands = [
        ["index", "--team", url],
        ["search", "the", "--team", url],
        ["team", "status", "--team", url],
      ];
      const rows: string[] = [];
      let bad = 0;
      let total = 0;
      for (const cmd of commands) {
        let t0 = Date.now();
        const first = await runIntendant(root, cmd, { env });
        assert.equal(first.code, 0, `${cmd.join(" ")}: ${first.stderr}`);
        const cold = Date.now() - t0;
        // The restart points span from early in a warm run to past the end of the cold one:
        // a cold first run (sweep, vault keep) alone put them all after a warm `index` had
        // ended, a warm run alone all before a loaded `team status` reached the database.
        t0 = Date.now();
        const warm = await runIntendant(root, cmd, { env });
        assert.equal(warm.code, 0, `${cmd.join(" ")}: ${warm.stderr}`);
        const warmMs = Date.now() - t0;
        const from = 0.2 * warmMs;
        const span = Math.max(1.2 * Math.max(cold, warmMs) - from, warmMs);
        let hit = 0;
        const shapes = new Map<string, number>();
        // RUNS runs, and more (up to 3 × RUNS) until a restart has reached the command: on a
        // loaded machine start-up can swallow the restart point of several runs in a row.
        let runs = 0;
        for (let i = 0; i < 3 * RUNS && (i < RUNS || hit === 0); i++) {
          const run = runIntendant(root, cmd, { env });
          // A point in the run: from start-up through the last query.
          await sleep(from + span * ((i % RUNS) + Math.random()) / RUNS);
          await pg.restart();
          const r = await run;
          runs++;
          total++;
          if (r.code !== 0) hit++;
          if (!clean(r)) {
            bad++;
            console.error(`${cmd[0]} run ${i}: exit ${r.code}\n${r.stderr.slice(0, 2000)}`);
          }
          const shape = r.code === 0
            ? "ok"
            : (r.stderr.split("\n")[0] ?? "").replace(/^intendant: /, "").slice(0, 40);
          shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
        }
        rows.push(`${cmd.slice(0, 2).join(" ")}: ${hit}/${runs} hit`);
        assert.ok(hit > 0, `no restart reached ${cmd.join(" ")}: ${[...shapes]}`);
      }
      assert.equal(bad, 0, `${bad} runs ended in something other than one line and a hint`);
      const after = await runIntendant(root, ["index", "--team", url], { env });
      assert.equal(after.code, 0, `publish after the restarts: ${after.stderr}`);

      // The MCP server (a daemon) keeps answering across restarts.
      const { client, stderr } = await connectMcp(
        { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env, PGPASSWORD: pg.password },
        ["--team", `postgres://${pg.superuser}@127.0.0.1:${pg.port}/postgres`],
      );
      let answered = 0;
      const asks = Math.max(3, RUNS / 2);
      try {
        for (let i = 0; i < asks; i++) {
          const q = callTool(client, "search_messages", { query: "the" });
          await sleep(Math.random() * 50);
          await pg.restart();
          await q.catch(() => null);
          // After the restart it answers again (team or a one-line tool error, never silence).
          for (let tries = 0; tries < 20; tries++) {
            const r = await callTool(client, "search_messages", { query: "the" });
            if (!r.isError) {
              answered++;
              break;
            }
            await sleep(300);
          }
        }
      } finally {
        await client.close();
      }
      assert.equal(answered, asks, `the MCP server stopped answering: ${stderr()}`);

      // Negative control: the bare client under the same restarts.
      let control = 0;
      const controlRuns = Math.max(4, RUNS / 2);
      for (let i = 0; i < controlRuns; i++) {
        const child = new Deno.Command(DENO, {
          args: [
            "run",
            "-A",
            "--quiet",
            `--config=${join(REPO_ROOT, "deno.json")}`,
            join(REPO_ROOT, "tests/helpers/bare_pg_child.ts"),
            url,
          ],
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        await sleep(600 + Math.random() * 800);
        await pg.restart();
        const out = await child.output();
        const err = new TextDecoder().decode(out.stderr);
        if (out.code !== 0 && /Uncaught|^\s+at /m.test(err)) control++;
      }
      assert.ok(control > 0, "the bare client ends with an uncaught error under restarts");
      figure(
        "H8",
        `runs ending in anything but one line + hint (exit 1) or success: ${bad} of ${total} ` +
          `team commands with PostgreSQL restarted mid-run (${rows.join(", ")}); MCP --team ` +
          `answered after ${answered}/${asks} restarts; publish after them ok; control (bare ` +
          `postgres client, same restarts): ${control}/${controlRuns} end in an uncaught error`,
      );
    });
  });
});
