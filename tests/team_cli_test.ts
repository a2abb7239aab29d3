/**
 * `intendant team` through the real program (tests/helpers/cli.ts) against a real throwaway
 * PostgreSQL (tests/helpers/pg_cluster.ts): init on a fresh database and again, status
 * before init / with no machines / with a machine row, add-machine's URL and password-file
 * line really connecting as the new role, a chosen password from stdin, retention set and
 * unset (and refused to a machine role), a wrong password and a C-locale database as one
 * line + hint + exit 1 without the password, and the locked `team` profile running the real
 * client with net to the team host:port only. One cluster for all steps (startup costs more
 * than every step together).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { type CliResult, MAIN, runIntendant } from "./helpers/cli.ts";
import { DENO, hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { openTeamDb, parseTeamUrl } from "../lib/team/mod.ts";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "../lib/cli/mod.ts";
import { ENV_VARS_READ, resolveConfig } from "../lib/config.ts";
import { lockedCommand } from "../lib/relaunch.ts";
import { pathToFileURL } from "node:url";

/** Runs intendant with `input` on stdin (runIntendant gives none). */
async function runWithStdin(root: string, args: string[], input: string): Promise<CliResult> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: root,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...hermeticEnv(root) },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  await w.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function ok(r: CliResult, what: string): void {
  assert.equal(r.code, EXIT_OK, `${what}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
}

/** One line + one hint on stderr, exit 1, and `secret` nowhere. */
function failedCleanly(r: CliResult, secret: string, message: RegExp, hint: RegExp): void {
  assert.equal(r.code, EXIT_FAILURE, `exit ${r.code}\n${r.stderr}`);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, `one line and a hint:\n${r.stderr}`);
  assert.match(lines[0]!, /^intendant: /);
  assert.match(lines[0]!, message);
  assert.match(lines[1]!, /^hint: /);
  assert.match(lines[1]!, hint);
  assert.ok(!r.stderr.includes(secret) && !r.stdout.includes(secret), "the password leaked");
}

Deno.test("intendant team: init, add-machine, status, retention and its errors on a real PostgreSQL", async (t) => {
  await withTempDir(async (root) => {
    await Deno.mkdir(join(root, "home"), { recursive: true });
    await withPgCluster(async (pg) => {
      const url = `${pg.url}?sslmode=disable`;
      const team = (...args: string[]) => runIntendant(root, ["team", ...args, "--team", url]);

      await t.step("status before init says to run team init (exit 1)", async () => {
        const r = await team("status");
        failedCleanly(r, pg.password, /no intendant schema yet/, /intendant team init/);
      });

      await t.step(
        "init on a fresh database creates schema 0 → 2 and the publisher role",
        async () => {
          const r = await team("init");
          ok(r, "init");
          assert.match(
            r.stdout,
            /^team database postgres:\/\/intendant_test:\*\*\*@127\.0\.0\.1:/m,
          );
          assert.match(r.stdout, /^server: PostgreSQL 1[5-9]/m);
          assert.match(r.stdout, /^schema: version 0 → 2 \(applied migrations 1, 2\)$/m);
          assert.match(r.stdout, /^publisher role "intendant_publisher": created/m);
          assert.ok(!r.stdout.includes(pg.password));
        },
      );

      await t.step("init again has nothing to do (text and --json)", async () => {
        const r = await team("init");
        ok(r, "init again");
        assert.match(r.stdout, /^schema: version 2, current \(nothing to do\)$/m);
        assert.match(r.stdout, /"intendant_publisher": exists/);
        const j = await team("init", "--json");
        ok(j, "init --json");
        const o = JSON.parse(j.stdout);
        assert.deepEqual(
          { from: o.from, to: o.to, applied: o.applied, publisherRole: o.publisherRole },
          { from: 2, to: 2, applied: [], publisherRole: "exists" },
        );
        assert.match(o.server_version, /^1[5-9]/);
        assert.equal(typeof o.server_version_num, "number");
        assert.ok(!j.stdout.includes(pg.password));
      });

      await t.step("status with no machines says so and how to publish", async () => {
        const r = await team("status");
        ok(r, "status");
        assert.match(r.stdout, /no machines yet: publish .*`intendant index --team URL`/);
        assert.match(r.stdout, /retention: keep everything/);
        const j = JSON.parse((await team("status", "--json")).stdout);
        assert.deepEqual(j.machines, []);
        assert.equal(j.records_total, 0);
        assert.equal(j.disk_to_prose, null);
      });

      let machineUrl = "";
      await t.step(
        "add-machine prints a URL and a pgpass line that really connect as the role",
        async () => {
          const r = await team("add-machine", "laptop-a");
          ok(r, "add-machine");
          assert.match(r.stdout, /^machine laptop-a: role intendant_m_laptop-a created$/m);
          const m = /^ {2}(postgres:\/\/intendant_m_laptop-a:[0-9a-f]{40}@\S+)$/m.exec(r.stdout);
          assert.ok(m, r.stdout);
          machineUrl = m[1]!;
          assert.match(r.stdout, /shown only now: store it safely/);
          const db = await openTeamDb(parseTeamUrl(machineUrl));
          try {
            const [me] = await db.sql`SELECT current_user AS u`;
            assert.equal(me!.u, "intendant_m_laptop-a");
          } finally {
            await db.close();
          }
          // The pgpass line, used as ~/.pgpass, lets a password-less URL in.
          const line = /^ {2}(127\.0\.0\.1:\d+:postgres:intendant_m_laptop-a:[0-9a-f]{40})$/m
            .exec(r.stdout);
          assert.ok(line, r.stdout);
          const pgpass = join(root, "home", ".pgpass");
          await Deno.writeTextFile(pgpass, line[1]! + "\n", { mode: 0o600 });
          const bare = machineUrl.replace(/:[0-9a-f]{40}@/, "@");
          const s = await runIntendant(root, ["team", "status"], {
            env: { INTENDANT_TEAM_URL: bare },
          });
          ok(s, "status as the machine role via ~/.pgpass");
          await Deno.remove(pgpass);
          // A name whose plain role name PostgreSQL would truncate (63 bytes) gets a hashed
          // one that fits, and the printed URL really connects as it.
          const long = await team("add-machine", "M".repeat(64));
          ok(long, "add-machine with a 64-character name");
          const longUrl = /^ {2}(postgres:\/\/\S+)$/m.exec(long.stdout)?.[1];
          assert.ok(longUrl, long.stdout);
          const asLong = await openTeamDb(parseTeamUrl(longUrl!));
          await asLong.close();
          const gone = await openTeamDb(parseTeamUrl(url));
          await gone.sql`DELETE FROM intendant.machines WHERE name = ${"M".repeat(64)}`;
          await gone.close();
        },
      );

      await t.step(
        "add-machine --password-stdin sets the chosen password and never echoes it",
        async () => {
          const chosen = "Chosen pw: with @ / ? and spaces";
          const r = await runWithStdin(
            root,
            ["team", "add-machine", "ci.runner_b", "--password-stdin", "--team", url],
            chosen + "\n",
          );
          ok(r, "add-machine --password-stdin");
          assert.ok(!r.stdout.includes(chosen) && !r.stderr.includes(chosen));
          assert.match(r.stdout, /INTENDANT_TEAM_URL='postgres:\/\/intendant_m_ci\.runner_b@/);
          const db = await openTeamDb(
            parseTeamUrl(
              `postgres://intendant_m_ci.runner_b:${
                encodeURIComponent(chosen)
              }@127.0.0.1:${pg.port}/postgres?sslmode=disable`,
            ),
          );
          await db.close();
          const none = await runWithStdin(
            root,
            ["team", "add-machine", "x", "--password-stdin", "--team", url],
            "",
          );
          assert.equal(none.code, EXIT_USAGE);
          assert.match(none.stderr, /no password on standard input/);
        },
      );

      await t.step("status --json and the table after a machine has published", async () => {
        const admin = await openTeamDb(parseTeamUrl(url));
        try {
          await admin.sql`UPDATE intendant.team_state SET revision = 7`;
          await admin.sql`UPDATE intendant.machines
            SET last_publish_at = now() - interval '90 seconds', last_publish_rev = 3,
                sessions = 1, records = 2, binary_version = ${"0.1.0\x1b[31m"}
            WHERE name = 'laptop-a'`;
          await admin.sql`INSERT INTO intendant.sessions (machine, session_key, source,
              session_id, newest_ts_ms, oldest_ts_ms, records, sig, rev_added, rev_changed)
            VALUES ('laptop-a', 'codex:s1', 'codex', 's1', 2, 1, 2, 'g', 3, 3)`;
          for (const [id, text] of [["r1", "héllo"], ["r2", "世界 world"]]) {
            await admin.sql`INSERT INTO intendant.records (machine, session_key, record_id, ord,
                source, role, ts_ms, truncated, subagent, superseded, has_marks, text, folded,
                locator, rev_added)
              VALUES ('laptop-a', 'codex:s1', ${id!}, 0, 'codex', 1, 1, false, false, false,
                false, ${text!}, ${text!}, 'l', 3)`;
          }
        } finally {
          await admin.close();
        }
        const j = await team("status", "--json");
        ok(j, "status --json");
        const s = JSON.parse(j.stdout);
        assert.equal(s.revision, 7);
        assert.equal(s.records_total, 2);
        assert.equal(s.sessions_total, 1);
        const prose = new TextEncoder().encode("héllo世界 world").length;
        assert.equal(s.prose_bytes, prose);
        assert.ok(s.disk_bytes.total > 0 && s.disk_bytes.records > 0 && s.disk_bytes.sessions > 0);
        assert.equal(s.disk_bytes.total, s.disk_bytes.records + s.disk_bytes.sessions);
        assert.equal(s.disk_to_prose, s.disk_bytes.total / prose);
        assert.equal(s.retention_days, null);
        assert.deepEqual(s.machines.map((m: { name: string }) => m.name), [
          "ci.runner_b",
          "laptop-a",
        ]);
        const a = s.machines[1];
        assert.ok(a.lag_ms >= 90_000 && a.lag_ms < 150_000, `lag ${a.lag_ms}`);
        assert.equal(a.revisions_behind, 4);
        assert.equal(a.last_publish_rev, 3);
        assert.equal(a.role, "intendant_m_laptop-a");
        assert.deepEqual([a.sessions, a.records], [1, 2]);
        assert.ok(!j.stdout.includes("\x1b"), "the server's text is escaped in JSON");
        const b = s.machines[0];
        assert.deepEqual([b.last_publish_at, b.lag_ms, b.revisions_behind], [null, null, null]);

        const r = await team("status");
        ok(r, "status");
        assert.ok(!r.stdout.includes("\x1b"), "no raw escape reaches the terminal");
        const rows = r.stdout.split("\n");
        const head = rows.findIndex((l) => l.startsWith("machine "));
        assert.ok(head >= 0, r.stdout);
        const lineA = rows.find((l) => l.startsWith("laptop-a "))!;
        const lineB = rows.find((l) => l.startsWith("ci.runner_b "))!;
        assert.match(
          lineA,
          /intendant_m_laptop-a\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+1 min\s+4\s+1\s+2\s+3\s+0\.1\.0/,
        );
        assert.match(lineB, /never\s+-\s+-\s+0\s+0\s+-\s+-$/);
        // Aligned: the "records" column ends at the same offset on every row.
        const end = (l: string, re: RegExp) => {
          const m = re.exec(l)!;
          return m.index + m[0].length;
        };
        assert.equal(end(rows[head]!, /records/), end(lineA, /(?<=\s)2(?=\s+3\s)/));
        assert.match(r.stdout, /2 records in 1 sessions from 2 machines \(1 never published/);
        assert.match(r.stdout, /of prose \(\d+\.\d×\)/);
      });

      await t.step(
        "retention: set, shown, unset; refused to a machine role; bad value is usage",
        async () => {
          const set = await team("retention", "30");
          ok(set, "retention 30");
          assert.match(set.stdout, /^team retention: 30 days \(was: keep everything\)$/m);
          assert.equal(JSON.parse((await team("status", "--json")).stdout).retention_days, 30);
          assert.match((await team("status")).stdout, /retention: 30 days/);
          const off = await team("retention", "off", "--json");
          ok(off, "retention off");
          assert.deepEqual(JSON.parse(off.stdout), { retention_days: null, previous: 30 });
          assert.equal(JSON.parse((await team("status", "--json")).stdout).retention_days, null);
          const asMachine = await runIntendant(root, [
            "team",
            "retention",
            "7",
            "--team",
            machineUrl,
          ]);
          failedCleanly(
            asMachine,
            machineUrl.split(":")[2]!.split("@")[0]!,
            /Cannot change the team retention: role "intendant_m_laptop-a"/,
            /ran `intendant team init`/,
          );
          const bad = await team("retention", "soon");
          assert.equal(bad.code, EXIT_USAGE);
          assert.match(bad.stderr, /Invalid retention "soon"/);
        },
      );

      await t.step("a wrong password is one line + hint, exit 1, password nowhere", async () => {
        const wrong = "not-the-Password-42";
        const r = await runIntendant(root, [
          "team",
          "status",
          "--team",
          `postgres://${pg.superuser}:${wrong}@127.0.0.1:${pg.port}/postgres?sslmode=disable`,
        ]);
        failedCleanly(r, wrong, /authentication failed for role "intendant_test"/, /password/);
        // PGPASSWORD: same, and that password is not printed either.
        const env = await runIntendant(root, ["team", "status"], {
          env: {
            INTENDANT_TEAM_URL: `postgres://${pg.superuser}@127.0.0.1:${pg.port}/postgres`,
            PGPASSWORD: wrong,
          },
        });
        failedCleanly(env, wrong, /authentication failed/, /PGPASSWORD/);
      });

      await t.step("a C-locale database is the ctype error with the fix", async () => {
        const admin = await openTeamDb(parseTeamUrl(url));
        try {
          await admin.sql`CREATE DATABASE c_locale ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'
                          TEMPLATE template0`;
        } finally {
          await admin.close();
        }
        const r = await runIntendant(root, [
          "team",
          "init",
          "--team",
          url.replace("/postgres?", "/c_locale?"),
        ]);
        failedCleanly(
          r,
          pg.password,
          /LC_CTYPE is "C", not UTF-8.*CREATE DATABASE/,
          /UTF-8 database/,
        );
      });

      await t.step(
        "--locked: the team profile runs the real client with net to the team host:port only",
        async () => {
          const r = await runIntendant(root, [
            "team",
            "status",
            "--json",
            "--team",
            url,
            "--locked",
          ]);
          ok(r, "locked status");
          assert.equal(JSON.parse(r.stdout).revision, 7);
          // Controls: the same child command line with the team grants taken away fails, so
          // each grant is needed (and the real client reads exactly these env names).
          const cfg = resolveConfig(hermeticEnv(root), { cwd: root, team: url });
          const cmd = lockedCommand({
            cfg,
            args: ["team", "status", "--team", url],
            mainModule: pathToFileURL(MAIN).href,
            denoPath: DENO,
            os: Deno.build.os,
            projectRoot: root,
          });
          assert.ok(cmd.includes("-P=team"), cmd.join(" "));
          // The URL (and its password) reaches the child through its environment, never its
          // argv, which every user can read in `ps` (relaunchLocked sets INTENDANT_TEAM_URL).
          assert.ok(!cmd.some((a) => a.includes(pg.password)), cmd.join(" "));
          assert.ok(cmd.includes(`--allow-net=127.0.0.1:${pg.port}`), cmd.join(" "));
          const runChild = async (args: string[]) => {
            const o = await new Deno.Command(DENO, {
              args,
              cwd: root,
              clearEnv: true,
              env: {
                PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
                NO_COLOR: "1",
                ...hermeticEnv(root),
                INTENDANT_TEAM_URL: url,
              },
              stdout: "piped",
              stderr: "piped",
            }).output();
            return { code: o.code, stderr: new TextDecoder().decode(o.stderr) };
          };
          assert.equal((await runChild(cmd)).code, EXIT_OK, "the locked child itself connects");
          const otherPort = cmd.map((a) =>
            a.startsWith("--allow-net=") ? `--allow-net=127.0.0.1:${pg.port + 1}` : a
          );
          const noNet = await runChild(otherPort);
          assert.notEqual(noNet.code, EXIT_OK);
          assert.match(noNet.stderr, /Requires net access to "127\.0\.0\.1:\d+"/);
          const fewerEnv = [
            ...cmd.slice(0, cmd.indexOf("-P=team") + 1),
            `--allow-env=${ENV_VARS_READ.join(",")}`,
            ...cmd.slice(cmd.indexOf("-P=team") + 1),
          ];
          const noEnv = await runChild(fewerEnv);
          assert.notEqual(noEnv.code, EXIT_OK);
          assert.match(noEnv.stderr, /Requires env access to "PG[A-Z_]+"/);
        },
      );
    });
  });
});
