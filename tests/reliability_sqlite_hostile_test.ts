/**
 * Reliability-plan H1: hostile and stray SQLite files in the agents' data dirs. After a
 * clean index of every fixture home, these are planted:
 *  - `opencode-evil.db`: OpenCode's tables, with `session` a view over an unbounded
 *    `WITH RECURSIVE` (a query on it never returns);
 *  - Goose's `sessions.db` replaced by the same trap (its `sessions` a recursive view);
 *  - `opencode-empty.db`: 0 bytes (what `sqlite3 new.db` leaves);
 *  - `opencode-backup.db`: a copy of the live `opencode.db` taken before a new message was
 *    written to the live one, made newer by mtime and sorting first by name.
 * Then the real program: `intendant index` (and a second one on a fresh state root: no
 * earlier list), `intendant search` for the new message, `intendant sessions --json`, the
 * MCP server's search_messages, and the daemon's first sweep with /api/coverage asked every
 * 100 ms (latency measured: a stall is > 1 s) — each under a deadline (a hang is a
 * failure, not a stuck suite). Pass: nothing hangs; every bad file is skipped and named; OpenCode's other
 * sessions and every Goose session stay indexed and none is reported gone; the new message
 * of the live database is found (the backup shadows nothing). Negative controls: the
 * recursive view queried by plain node:sqlite in a child is still running at its
 * deadline; choosing copies by file name (the rule before H1) picks the backup.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { buildAllFixtures } from "./fixtures/all.ts";
import { openCodeDataDir } from "./fixtures/opencode_fixture.ts";
import { gooseDataDir } from "./fixtures/goose_fixture.ts";
import { OPENCODE_DDL } from "./helpers/fixtures/opencode.ts";
import { runIntendant, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { figure } from "./helpers/figures.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { DENO, hermeticEnv, withTempDir } from "./helpers/temp.ts";

const DEADLINE_MS = 90_000;
const WORD = "zanzibarquokka";
const FOREVER = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)";

/** OpenCode's schema with `session` replaced by a view that never ends. */
function evilOpenCode(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(OPENCODE_DDL);
  db.exec("DROP TABLE session");
  db.exec(
    `CREATE VIEW session AS ${FOREVER} SELECT 'ses_' || n AS id, NULL AS parent_id,
       '/w' AS directory, 'trap' AS title, NULL AS revert, n AS time_updated FROM c`,
  );
  db.close();
}

/** Goose's two tables, `sessions` a view that never ends. */
function evilGoose(path: string): void {
  for (const x of ["", "-wal", "-shm"]) {
    try {
      Deno.removeSync(path + x);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  const db = new DatabaseSync(path);
  db.exec(
    `CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,
       content_json TEXT, created_timestamp INTEGER);
     CREATE VIEW sessions AS ${FOREVER} SELECT 'g' || n AS id, 'user' AS session_type,
       n AS updated_at, 'x' AS name, '/w' AS working_dir FROM c`,
  );
  db.close();
}

Deno.test("H1: hostile, empty and shadowing SQLite files never hang, disable or shadow a source", async () => {
  await withTempDir(async (root) => {
    const fx = await buildAllFixtures(root, { sources: "all" });
    const env = fx.env;
    const first = await runIntendant(root, ["index"], { env, timeoutMs: DEADLINE_MS });
    assert.equal(first.code, 0, first.stderr);
    const before = await listed(root, env);
    const ocBefore = before.filter((s) => s.source === "opencode").length;
    const gooseBefore = before.filter((s) => s.source === "goose").length;
    assert.ok(ocBefore >= 3 && gooseBefore >= 2, `${ocBefore} OpenCode, ${gooseBefore} Goose`);

    const oc = openCodeDataDir(fx.dirs.opencode!);
    const live = join(oc, "opencode.db");
    // The backup: the live database as it is now (its WAL folded into the copy).
    const src = new DatabaseSync(live);
    src.exec(`VACUUM INTO '${join(oc, "opencode-backup.db")}'`);
    src.close();
    const target = fx.homes.opencode!.appendTarget;
    assert.equal(target.kind, "db");
    if (target.kind === "db") target.insertUser(`${WORD} written after the backup`, 1);
    const later = new Date(Date.now() + 60_000);
    Deno.utimeSync(join(oc, "opencode-backup.db"), later, later);
    evilOpenCode(join(oc, "opencode-evil.db"));
    Deno.writeFileSync(join(oc, "opencode-empty.db"), new Uint8Array());
    evilGoose(join(gooseDataDir(fx.dirs.goose!), "sessions", "sessions.db"));

    const hangs: string[] = [];
    const index = await runIntendant(root, ["index"], { env, timeoutMs: DEADLINE_MS });
    if (index.timedOut) hangs.push("index");
    assert.equal(index.code, 0, index.stderr + index.stdout);
    const out = index.stdout + index.stderr;
    const named = ["opencode-evil.db", "opencode-empty.db", "sessions.db"].filter((f) =>
      new RegExp(`skipped \\w+ database "[^"]*${f.replace(".", "\\.")}"`).test(out)
    );
    assert.deepEqual(named.length, 3, `each bad file named:\n${out}`);

    const found = await runIntendant(root, ["search", WORD, "--json"], {
      env,
      timeoutMs: DEADLINE_MS,
    });
    if (found.timedOut) hangs.push("search");
    assert.equal(found.code, 0, found.stderr);
    const groups: { session_key: string }[] = JSON.parse(found.stdout).groups;
    const newFound = groups.filter((g) => g.session_key === fx.homes.opencode!.appendTarget.key)
      .length;
    assert.equal(newFound, 1, `the live database's new message: ${found.stdout.slice(0, 600)}`);

    const after = await listed(root, env);
    const ocAfter = after.filter((s) => s.source === "opencode" && !s.source_gone).length;
    const gooseAfter = after.filter((s) => s.source === "goose" && !s.source_gone).length;
    assert.equal(ocAfter, ocBefore, "OpenCode's sessions all still indexed, none gone");
    assert.equal(gooseAfter, gooseBefore, "Goose's sessions held, not reported gone");

    // A fresh state root: no earlier list in any process, no published sessions.
    const freshEnv = { ...env, INTENDANT_HOME: join(root, "state2") };
    const fresh = await runIntendant(root, ["index"], { env: freshEnv, timeoutMs: DEADLINE_MS });
    if (fresh.timedOut) hangs.push("index (fresh state root)");
    assert.equal(fresh.code, 0, fresh.stderr);
    const freshOc = (await listed(root, freshEnv)).filter((s) => s.source === "opencode").length;
    assert.equal(freshOc, ocBefore, "a fresh index still reads the good databases");

    // The MCP server answers (its sweep meets the same files).
    const { client, stderr } = await connectMcp({
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...hermeticEnv(root, env),
    });
    try {
      const r = await Promise.race([
        callTool(client, "search_messages", { query: WORD }),
        new Promise<null>((res) => setTimeout(() => res(null), DEADLINE_MS)),
      ]);
      if (r === null) hangs.push("mcp search_messages");
      else assert.match(r.text, new RegExp(WORD), stderr());
    } finally {
      await client.close();
    }
    // The daemon's first sweep over the same homes (a fresh state root), asked every 100 ms
    // while it sweeps: HTTP keeps answering, coverage names the skipped files.
    const daemonEnv = { ...env, INTENDANT_HOME: join(root, "state3") };
    const run = spawnIntendant(root, ["serve", "--port", "0"], { env: daemonEnv });
    let worst = 0;
    let stalls = 0;
    let asked = 0;
    let coverageNames = 0;
    try {
      const daemonJson = join(root, "state3", "daemon.json");
      await waitFor(() => exists(daemonJson), 30_000, "daemon.json");
      const info = JSON.parse(Deno.readTextFileSync(daemonJson));
      const headers = { authorization: `Bearer ${info.token}` };
      let readyAt: number | null = null;
      const until = Date.now() + DEADLINE_MS;
      while (Date.now() < until && (readyAt === null || Date.now() - readyAt < 2_000)) {
        const t0 = performance.now();
        const c = await fetch(`http://127.0.0.1:${info.port}/api/coverage`, {
          headers,
          signal: AbortSignal.timeout(DEADLINE_MS),
        });
        const j = await c.json();
        const took = performance.now() - t0;
        asked++;
        worst = Math.max(worst, took);
        if (took > 1_000) stalls++;
        if (j.state === "ready" && readyAt === null) readyAt = Date.now();
        const errs = JSON.stringify([j.sources?.opencode?.errors, j.sources?.goose?.errors]);
        coverageNames = ["opencode-evil.db", "opencode-empty.db", "sessions.db"]
          .filter((f) => errs.includes(f)).length;
        await new Promise((r) => setTimeout(r, 100));
      }
      if (readyAt === null) hangs.push("daemon's first sweep");
    } finally {
      run.child.kill("SIGTERM");
      await run.done;
    }
    assert.deepEqual(hangs, []);
    assert.equal(coverageNames, 3, "the daemon's coverage names each skipped file");
    assert.ok(worst < 10_000, `HTTP answered within 10 s at worst: ${worst} ms`);

    // Control 1: the recursive view, queried bare, is still running at a 3 s deadline.
    const probe = new Deno.Command(DENO, {
      args: [
        "eval",
        `import { DatabaseSync } from "node:sqlite";
         new DatabaseSync(${JSON.stringify(join(oc, "opencode-evil.db"))}, { readOnly: true })
           .prepare("SELECT count(*) FROM session").get();`,
      ],
      signal: AbortSignal.timeout(3_000),
      stdout: "null",
      stderr: "null",
    });
    const t0 = Date.now();
    const bare = await probe.output();
    const controlHung = bare.signal !== null && Date.now() - t0 >= 2_900;
    assert.ok(controlHung, `the bare query ended: code ${bare.code}`);
    // Control 2: by file name, the backup (sorting first) would own the shared sessions.
    const byName = ["opencode.db", "opencode-backup.db"].sort()[0];
    assert.equal(byName, "opencode-backup.db");
    figure(
      "H1",
      `hangs: ${hangs.length} of 5 runs (index, index on a fresh root, search, MCP search, the ` +
        `daemon's first sweep: HTTP stalls > 1 s ${stalls} of ${asked} requests, worst ` +
        `${Math.round(worst)} ms) over ` +
        `a recursive-view OpenCode db, a recursive-view Goose db, a 0-byte db and a newer backup ` +
        `copy; bad files named: ${named.length}/3; OpenCode sessions kept ${ocAfter}/${ocBefore}, ` +
        `Goose kept ${gooseAfter}/${gooseBefore} (0 reported gone); the live db's new message ` +
        `found ${newFound}/1; control: a bare query on the view still running at 3 s, name ` +
        `order picks ${byName}`,
    );
  });
});

function exists(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}

/** `intendant sessions --json`: source and source_gone of every session. */
async function listed(
  root: string,
  env: Record<string, string>,
): Promise<{ source: string; source_gone: boolean }[]> {
  const r = await runIntendant(root, ["sessions", "--json", "--limit", "500"], {
    env,
    timeoutMs: DEADLINE_MS,
  });
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  return (Array.isArray(j) ? j : j.sessions) as { source: string; source_gone: boolean }[];
}
