/**
 * Append → team-searchable through the REAL daemon (bench:team): a machine runs
 * `intendant serve --team URL` over agent homes (the test fixtures' exact formats), and a
 * line is appended to one of its Codex transcripts; a reader on another pool (another
 * machine's view) polls team search every 20 ms until the line's fresh word is found. The
 * whole path a user waits on: the daemon's file watch and scoped sweep, its publish (woken
 * by that sweep), the replica's commit, the team query — against the replica the other
 * machines filled (the 530k-message bench replica). The same-run baseline: the same
 * daemon's LOCAL search over HTTP (fresh by the same watch), for an append of its own.
 *   deno run -A bench/team/daemon_append_child.ts <team-url> <appends>
 * Prints one JSON line.
 */
import { join } from "node:path";
import { createTeamSearch, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { buildAllFixtures } from "../../tests/fixtures/all.ts";
import { stats } from "../harness.ts";

const [url, n] = Deno.args;
if (!url) throw new RangeError("Usage: daemon_append_child.ts <url> <appends>");
const appends = Number(n ?? 20);
const root = await Deno.makeTempDir({ prefix: "intendant-team-daemon-" });
const fixtures = await buildAllFixtures(root);
const target = fixtures.homes.codex!.appendTarget;
const main = new URL("../../main.ts", import.meta.url).pathname;
const env: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  NO_COLOR: "1",
  HOME: join(root, "home"),
  TMPDIR: root,
  ...fixtures.env,
  INTENDANT_MACHINE: "live",
  INTENDANT_TEAM_URL: url,
};
const daemon = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--quiet", main, "serve", "--port", "0"],
  env,
  clearEnv: true,
  stdout: "null",
  stderr: "null",
}).spawn();
const reader = await openTeamDb(parseTeamUrl(url), { max: 2 });
const team = createTeamSearch({
  db: reader,
  cursorKey: new Uint8Array(32).fill(4),
  windowDays: null,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(found: () => Promise<boolean>, limitMs: number): Promise<void> {
  const t0 = performance.now();
  while (!(await found())) {
    if (performance.now() - t0 > limitMs) throw new Error("append never became searchable");
    await sleep(20);
  }
}

try {
  const djPath = join(fixtures.env.INTENDANT_HOME!, "daemon.json");
  await until(() => Deno.stat(djPath).then(() => true, () => false), 60_000);
  const dj = JSON.parse(await Deno.readTextFile(djPath));
  const local = async (q: string) => {
    const r = await fetch(
      `http://127.0.0.1:${dj.port}/api/sessions/message-search?q=${
        encodeURIComponent(q)
      }&complete=true`,
      { headers: { authorization: `Bearer ${dj.token}` } },
    );
    return (await r.json()).groups?.length > 0;
  };
  // The daemon's first sweep is published once its machine row names a local revision.
  await until(async () => {
    const [r] = await reader.sql<{ v: string | null }[]>`
      SELECT local_revision::text AS v FROM intendant.machines WHERE name = 'live'`;
    return r?.v !== null && r?.v !== undefined;
  }, 60_000);
  await sleep(2000);
  const teamMs: number[] = [];
  const localMs: number[] = [];
  for (let i = 0; i < appends; i++) {
    const a = `daemonappendl${i}x${crypto.randomUUID().slice(0, 8)}`;
    let t0 = performance.now();
    Deno.writeTextFileSync(target.path, target.userLine(`${a} local`, 900 + 2 * i), {
      append: true,
    });
    await until(() => local(a), 30_000);
    localMs.push(performance.now() - t0);
    const b = `daemonappendt${i}x${crypto.randomUUID().slice(0, 8)}`;
    t0 = performance.now();
    Deno.writeTextFileSync(target.path, target.userLine(`${b} team`, 901 + 2 * i), {
      append: true,
    });
    await until(async () => (await team.search({ q: b })).groups.length > 0, 30_000);
    teamMs.push(performance.now() - t0);
    await sleep(200 + Math.random() * 800);
  }
  console.log(JSON.stringify({ team: stats(teamMs), local: stats(localMs) }));
} finally {
  daemon.kill("SIGTERM");
  await daemon.status;
  await reader.close();
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
