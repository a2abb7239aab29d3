/**
 * Reliability-plan H5: what one machine's database role can do to the team. Against a
 * real PostgreSQL at the current schema, as machine B's own LOGIN role: UPDATE, DELETE and
 * INSERT on every shared table (team state, batches, machines, settings), another
 * machine's rows (sessions, records, tombstones, its machine row), registering an unused
 * machine name or a case variant of A's, renaming its own row, and committing a batch in
 * A's name through the one function that may write the shared state. Counted: statements
 * that changed another machine's or the shared state. Then A publishes through the real
 * publisher and team search finds A's new message. Negative control: the same statements
 * against a database at schema version 1, where several of them succeed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../lib/message_search/mod.ts";
import {
  addMachine,
  createPublisher,
  createTeamSearch,
  ensureMachine,
  migrateTeamDb,
  openTeamDb,
  parseTeamUrl,
  type TeamDb,
} from "../lib/team/mod.ts";
import { figure } from "./helpers/figures.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { PV, record, update } from "./helpers/store_fixtures.ts";
import { withTempDir } from "./helpers/temp.ts";

/** The hostile statements, as B against A's machine and the shared tables. */
function attacks(a: string, b: string): [string, string][] {
  return [
    ["team_state to 0", `UPDATE intendant.team_state SET revision = 0`],
    ["team_state to max", `UPDATE intendant.team_state SET revision = 9223372036854775807`],
    ["delete team_state", `DELETE FROM intendant.team_state`],
    [
      "register an unused name",
      `INSERT INTO intendant.machines (name, role_name) VALUES ('ghost', current_user)`,
    ],
    [
      "register a case variant",
      `INSERT INTO intendant.machines (name, role_name) VALUES ('${a.toUpperCase()}', current_user)`,
    ],
    ["rename own machine", `UPDATE intendant.machines SET name = 'renamed-b' WHERE name = '${b}'`],
    [
      "hand own row to another role",
      `UPDATE intendant.machines SET role_name = 'postgres' WHERE name = '${b}'`,
    ],
    [
      "rewrite A's machine row",
      `UPDATE intendant.machines SET publish_seq = 0, destructive_rev = 99 WHERE name = '${a}'`,
    ],
    ["delete A's machine row", `DELETE FROM intendant.machines WHERE name = '${a}'`],
    [
      "forge a batch row",
      `INSERT INTO intendant.batches (team_rev, machine, machine_rev) VALUES (900000, '${b}', 1)`,
    ],
    [
      "forge A's batch row",
      `INSERT INTO intendant.batches (team_rev, machine, machine_rev) VALUES (900001, '${a}', 1)`,
    ],
    ["delete A's batches", `DELETE FROM intendant.batches WHERE machine = '${a}'`],
    [
      "commit in A's name",
      `SELECT intendant.commit_batch('${a}', (SELECT revision FROM intendant.machines WHERE name = '${a}'))`,
    ],
    ["change retention", `UPDATE intendant.settings SET value = '1' WHERE key = 'retention_days'`],
    ["insert a setting", `INSERT INTO intendant.settings (key, value) VALUES ('x', 'y')`],
    [
      "insert A's session",
      `INSERT INTO intendant.sessions (machine, session_key, source, session_id, newest_ts_ms, oldest_ts_ms, records, sig, rev_added, rev_changed) VALUES ('${a}', 'codex:forged', 'codex', 'forged', 1, 1, 1, 'g', 1, 1)`,
    ],
    [
      "rewrite A's records",
      `UPDATE intendant.records SET text = 'forged', folded = 'forged' WHERE machine = '${a}'`,
    ],
    ["delete A's records", `DELETE FROM intendant.records WHERE machine = '${a}'`],
    ["delete A's sessions", `DELETE FROM intendant.sessions WHERE machine = '${a}'`],
    [
      "tombstone A's session",
      `INSERT INTO intendant.tombstones (machine, session_key, rev) VALUES ('${a}', 'pi:s1', 1)`,
    ],
  ];
}

/** Shared state and A's rows, to tell whether a statement changed anything. */
async function snapshot(db: TeamDb, a: string): Promise<string> {
  const q = async (t: string) => JSON.stringify(await db.sql.unsafe(t));
  return [
    await q(`SELECT * FROM intendant.team_state`),
    await q(
      `SELECT name, role_name, publish_seq, revision, destructive_rev FROM intendant.machines ORDER BY name`,
    ),
    await q(`SELECT * FROM intendant.batches ORDER BY team_rev`),
    await q(`SELECT * FROM intendant.settings ORDER BY key`),
    await q(`SELECT session_key, title FROM intendant.sessions WHERE machine = '${a}' ORDER BY 1`),
    await q(`SELECT record_id, text FROM intendant.records WHERE machine = '${a}' ORDER BY 1`),
    await q(`SELECT * FROM intendant.tombstones ORDER BY 1, 2`),
  ].join("\n");
}

/** Runs every attack as `asB`, each in its own transaction; how many changed `admin`'s view. */
async function runAttacks(admin: TeamDb, asB: TeamDb, a: string, b: string) {
  let changed = 0;
  const which: string[] = [];
  for (const [name, sql] of attacks(a, b)) {
    const before = await snapshot(admin, a);
    try {
      await asB.sql.unsafe(sql);
    } catch (err) {
      // Refused by a grant, a policy or the function's check: what must happen.
      if (!(err instanceof Error)) throw err;
    }
    if ((await snapshot(admin, a)) !== before) {
      changed++;
      which.push(name);
    }
  }
  return { changed, which, total: attacks(a, b).length };
}

async function setup(root: string, url: string, o: { v1Only: boolean }) {
  const admin = await openTeamDb(parseTeamUrl(url));
  // The control: a database as version 1 left it (its migration and its grants).
  await migrateTeamDb(admin, { binaryVersion: "test", upTo: o.v1Only ? 1 : undefined });
  const ma = await addMachineRaw(admin, "laptop-a");
  const mb = await addMachineRaw(admin, "laptop-b");
  const port = parseTeamUrl(url).port;
  const as = (m: { role: string; password: string }) =>
    openTeamDb(
      parseTeamUrl(`postgres://${m.role}:${m.password}@127.0.0.1:${port}/postgres?sslmode=disable`),
    );
  const dbA = await as(ma);
  const dbB = await as(mb);
  const store = await openStore({
    root: join(root, o.v1Only ? "s1" : "s2"),
    parserVersion: PV,
    windowDays: null,
    lock: "none",
  });
  await store.publish([
    update("replace", "s1", { recs: Array.from({ length: 4 }, (_, i) => record("s1", i)) }),
  ]);
  return { admin, dbA, dbB, store };
}

/** add-machine, on either schema (the v1 control has no case check to pass). */
async function addMachineRaw(admin: TeamDb, name: string) {
  return await addMachine(admin.sql, name);
}

Deno.test("H5: a machine's role changes nothing of another machine or the shared state; the team keeps working", async () => {
  let v2: Awaited<ReturnType<typeof runAttacks>> | null = null;
  let v1: Awaited<ReturnType<typeof runAttacks>> | null = null;
  await withTempDir(async (root) => {
    await withPgCluster(async (pg) => {
      const w = await setup(root, pg.url, { v1Only: false });
      try {
        const pubA = createPublisher({
          db: w.dbA,
          store: w.store,
          machine: "laptop-a",
          binaryVersion: "t",
        });
        await pubA.publish();
        v2 = await runAttacks(w.admin, w.dbB, "laptop-a", "laptop-b");
        assert.deepEqual(v2.which, [], "statements that changed shared state or A's rows");
        // A registered name cannot be taken by its case variant through the CLI path either.
        await assert.rejects(ensureMachine(w.dbB.sql, "LAPTOP-A"), /only in case|not registered/);
        // The team still works: A publishes a new message, and B's search finds it.
        const recs = Array.from({ length: 4 }, (_, i) => record("s1", i));
        recs.push(record("s1", 4, { text: "zanzibar after the attacks" }));
        await w.store.publish([
          update("replace", "s1", { recs, fingerprint: "fp-2", watermark: 200 }),
        ]);
        const r = await pubA.publish();
        assert.ok(r.records_inserted >= 1);
        const search = createTeamSearch({
          db: w.dbB,
          cursorKey: new Uint8Array(32),
          windowDays: null,
        });
        const found = await search.search({ q: "zanzibar", complete: true });
        assert.equal(found.state, "ready");
        assert.equal(found.groups.length, 1);
      } finally {
        await w.dbA.close();
        await w.dbB.close();
        await w.admin.close();
      }
    });
    await withPgCluster(async (pg) => {
      const w = await setup(root, pg.url, { v1Only: true });
      try {
        v1 = await runAttacks(w.admin, w.dbB, "laptop-a", "laptop-b");
        assert.ok(v1.changed > 0, "version 1 lets a machine role change shared state");
      } finally {
        await w.dbA.close();
        await w.dbB.close();
        await w.admin.close();
      }
    });
  });
  figure(
    "H5",
    `statements that change another machine's or the shared state: ${v2!.changed}/${v2!.total} ` +
      `(team state, batches, machines incl. an unused name and a case variant, settings, ` +
      `another machine's sessions/records/tombstones, commit_batch in its name); team search ` +
      `after them: working; control (schema version 1): ${v1!.changed}/${v1!.total} changed ` +
      `(${v1!.which.join(", ")})`,
  );
});
