/**
 * Team schema migrations and write isolation against a real throwaway PostgreSQL: a fresh
 * database migrates to the current version, a re-run changes nothing, two concurrent inits
 * apply each migration once, a newer schema is refused before anything is written; a
 * machine role writes its own rows and is refused (a real RLS error) on another machine's,
 * while it reads everything — and its reads still use the trigram index (no read policy
 * turning a lookup into a seqscan).
 */
import assert from "node:assert/strict";
import { withPgCluster } from "../../tests/helpers/pg_cluster.ts";
import { openTeamDb, TeamDbError } from "./connect.ts";
import { addMachine, ensureMachine, machineRoleName } from "./machine_role.ts";
import {
  migrateTeamDb,
  readSchemaVersion,
  requireCurrentSchema,
  TEAM_SCHEMA_VERSION,
} from "./migrate.ts";
import { parseTeamUrl } from "./team_url.ts";

Deno.test("team migrate: fresh, idempotent, concurrent, newer refused; RLS on writes only", async () => {
  await withPgCluster(async (pg) => {
    const admin = await openTeamDb(parseTeamUrl(pg.url));
    try {
      await assert.rejects(requireCurrentSchema(admin), /no intendant schema yet/);
      // Two inits racing: each migration lands once.
      const [a, b] = await Promise.all([
        migrateTeamDb(admin, { binaryVersion: "test" }),
        migrateTeamDb(admin, { binaryVersion: "test" }),
      ]);
      assert.equal(a.to, TEAM_SCHEMA_VERSION);
      assert.equal(b.to, TEAM_SCHEMA_VERSION);
      assert.deepEqual([...a.applied, ...b.applied].sort(), [1, 2]);
      const rows = await admin.sql`SELECT version FROM intendant.schema_version`;
      assert.equal(rows.length, TEAM_SCHEMA_VERSION);
      await requireCurrentSchema(admin);
      const again = await migrateTeamDb(admin, { binaryVersion: "test" });
      assert.deepEqual(again.applied, []);
      assert.equal(again.publisherRole, "exists");

      // Machine roles: each writes only its own rows.
      const ma = await addMachine(admin.sql, "laptop-a");
      const mb = await addMachine(admin.sql, "ci.runner_b");
      assert.equal(ma.role, machineRoleName("laptop-a"));
      assert.equal(ma.password.length, 40);
      const asRole = (m: typeof ma) =>
        openTeamDb(
          parseTeamUrl(
            `postgres://${m.role}:${m.password}@127.0.0.1:${pg.port}/postgres?sslmode=disable`,
          ),
        );
      const dbA = await asRole(ma);
      const dbB = await asRole(mb);
      try {
        await ensureMachine(dbA.sql, "laptop-a");
        const session = (machine: string) =>
          dbA.sql`INSERT INTO intendant.sessions (machine, session_key, source, session_id,
                    newest_ts_ms, oldest_ts_ms, records, sig, rev_added, rev_changed)
                  VALUES (${machine}, 'codex:s1', 'codex', 's1', 1, 1, 1, 'g', 1, 1)`;
        await session("laptop-a");
        await assert.rejects(session("ci.runner_b"), /row-level security/);
        // B cannot delete or rewrite A's session, silently or otherwise.
        const del = await dbB.sql`DELETE FROM intendant.sessions WHERE machine = 'laptop-a'`;
        assert.equal(del.count, 0);
        const upd = await dbB.sql`UPDATE intendant.sessions SET title = 'x'
                                  WHERE machine = 'laptop-a'`;
        assert.equal(upd.count, 0);
        // ...and cannot take over A's machine row or claim A's name.
        await assert.rejects(ensureMachine(dbB.sql, "laptop-a"), (e: unknown) => {
          assert.ok(e instanceof TeamDbError);
          assert.equal(e.kind, "privilege");
          return true;
        });
        // B reads everything A wrote.
        const seen = await dbB.sql`SELECT machine FROM intendant.sessions`;
        assert.deepEqual(seen.map((r) => r.machine), ["laptop-a"]);
        // Reads by a machine role use the trigram index (no read policy in the way).
        await dbB.sql`SET enable_seqscan = off`;
        const plan = await dbB.sql.unsafe(
          `EXPLAIN SELECT record_id FROM intendant.records WHERE folded LIKE '%needle%'`,
        );
        const text = plan.map((r) => Object.values(r)[0]).join("\n");
        assert.match(text, /records_folded_trgm/);
        assert.doesNotMatch(text, /owns_machine/);
      } finally {
        await dbA.close();
        await dbB.close();
      }

      // A newer schema is refused, before anything is written.
      await admin.sql`INSERT INTO intendant.schema_version (version, name, binary_version)
                      VALUES (${TEAM_SCHEMA_VERSION + 1}, 'future', 'x')`;
      await assert.rejects(migrateTeamDb(admin, { binaryVersion: "test" }), /upgrade intendant/);
      await assert.rejects(requireCurrentSchema(admin), /newer than this intendant knows/);
      assert.equal(await readSchemaVersion(admin.sql), TEAM_SCHEMA_VERSION + 1);
    } finally {
      await admin.close();
    }
  });
});

Deno.test("team migrate: a version-1 database moves to version 2, and its machines publish through commit_batch", async () => {
  await withPgCluster(async (pg) => {
    const admin = await openTeamDb(parseTeamUrl(pg.url));
    try {
      // Version 1 as an older intendant left it: its migration, its version row, a machine.
      await migrateTeamDb(admin, { binaryVersion: "old", upTo: 1 });
      assert.equal(await readSchemaVersion(admin.sql), 1);
      const m = await addMachine(admin.sql, "laptop-a");
      const r = await migrateTeamDb(admin, { binaryVersion: "new" });
      assert.deepEqual([r.from, r.to, r.applied], [1, 2, [2]]);
      const db = await openTeamDb(parseTeamUrl(
        `postgres://${m.role}:${m.password}@127.0.0.1:${pg.port}/postgres?sslmode=disable`,
      ));
      try {
        await db.sql.begin(async (tx) => {
          const [c] = await tx<{ revision: string }[]>`UPDATE intendant.machines
            SET publish_seq = publish_seq + 1, revision = revision + 1
            WHERE name = 'laptop-a' RETURNING revision`;
          const [t] = await tx<{ rev: string }[]>`
            SELECT intendant.commit_batch('laptop-a', ${c!.revision}::bigint) AS rev`;
          assert.equal(Number(t!.rev), 1);
        });
        await assert.rejects(
          db.sql`UPDATE intendant.team_state SET revision = 0`,
          /permission denied/,
        );
      } finally {
        await db.close();
      }
    } finally {
      await admin.close();
    }
  });
});
