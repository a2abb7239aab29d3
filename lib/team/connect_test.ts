/**
 * openTeamDb against a real throwaway PostgreSQL (tests/helpers/pg_cluster.ts): the happy path
 * (plan_cache_mode and application_name on two distinct pooled backends, with a control: a
 * plain client gets the server default "auto"), and each check's error — wrong password,
 * nothing listening (fast), unknown database, sslmode=require on a server without TLS, a
 * LC_CTYPE=C database — with no message ever carrying a password.
 * Not exercised here: a server < 15 (the harness only starts ≥ 15) and pg_trgm missing from
 * pg_available_extensions (that view reads the server's installed control files, which a test
 * cannot remove without touching the system install); both installed and available-only
 * branches of pg_trgm are checked.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { withPgCluster } from "../../tests/helpers/pg_cluster.ts";
import { openTeamDb, PLAN_CACHE_MODE, TeamDbError } from "./connect.ts";
import { parseTeamUrl } from "./team_url.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function openError(raw: string, o = {}): Promise<TeamDbError> {
  try {
    const db = await openTeamDb(parseTeamUrl(raw), o);
    await db.close();
  } catch (e) {
    assert.ok(e instanceof TeamDbError, `not a TeamDbError: ${e}`);
    return e;
  }
  throw new Error(`opening ${raw.replace(/:[^:@/]*@/, ":***@")} unexpectedly succeeded`);
}

Deno.test("team connect: checks in order against a real server, no password in messages", async () => {
  const ran = await withPgCluster(async (pg) => {
    const user = encodeURIComponent(pg.superuser);
    const pass = encodeURIComponent(pg.password);
    const base = `postgres://${user}:${pass}@127.0.0.1:${pg.port}`;
    const secrets = [pg.password, "Wr0ngSecretXYZ"];
    const noSecret = (e: TeamDbError) => {
      for (const s of secrets) {
        assert.ok(!e.message.includes(s), `message carries a password: ${e.message}`);
      }
      assert.ok(!JSON.stringify(e).includes(pg.password));
      assert.ok(!Deno.inspect(e, { depth: 10 }).includes(pg.password));
    };

    // Happy path: pg_trgm available but not installed yet.
    const db = await openTeamDb(parseTeamUrl(`${base}/postgres?sslmode=disable`));
    try {
      assert.ok(db.serverVersionNum >= 150000);
      assert.match(db.serverVersion, /^\d+/);
      assert.equal(db.pgTrgm, "available");
      // Two distinct pooled backends both carry the startup settings.
      const a = await db.sql.reserve();
      const b = await db.sql.reserve();
      try {
        const seen = [];
        for (const c of [a, b]) {
          const [pcm] = await c`SHOW plan_cache_mode`;
          const [app] = await c`SHOW application_name`;
          const [pid] = await c`SELECT pg_backend_pid() AS pid`;
          seen.push({ pcm: pcm!.plan_cache_mode, app: app!.application_name, pid: pid!.pid });
        }
        assert.notEqual(seen[0]!.pid, seen[1]!.pid, "the two reservations shared a backend");
        for (const s of seen) {
          assert.equal(s.pcm, PLAN_CACHE_MODE);
          assert.equal(s.app, "intendant");
        }
      } finally {
        a.release();
        b.release();
      }
      // Control: a client without the startup parameter gets the server default.
      const plain = postgres(`${pg.url}?sslmode=disable`, { max: 1, onnotice: () => {} });
      try {
        const [r] = await plain`SHOW plan_cache_mode`;
        assert.equal(r!.plan_cache_mode, "auto", "control: the server default should be auto");
      } finally {
        await plain.end();
      }
      await db.sql`CREATE EXTENSION pg_trgm`;
      await db
        .sql`CREATE DATABASE c_ctype ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`;
    } finally {
      await db.close();
      await db.close(); // idempotent
    }
    await assert.rejects(() => db.sql`SELECT 1`);

    // pg_trgm installed branch.
    const db2 = await openTeamDb(parseTeamUrl(`${base}/postgres`), { applicationName: "x" });
    try {
      assert.equal(db2.pgTrgm, "installed");
      const [app] = await db2.sql`SHOW application_name`;
      assert.equal(app!.application_name, "x");
    } finally {
      await db2.close();
    }

    // LC_CTYPE=C: refused with how to create a UTF-8 one.
    const ctype = await openError(`${base}/c_ctype`);
    assert.equal(ctype.kind, "ctype");
    assert.match(ctype.message, /LC_CTYPE is "C", not UTF-8/);
    assert.match(
      ctype.message,
      /CREATE DATABASE "c_ctype" ENCODING 'UTF8' .*LC_CTYPE 'C\.UTF-8' TEMPLATE template0/,
    );
    noSecret(ctype);

    // Wrong password.
    const auth = await openError(`postgres://${user}:Wr0ngSecretXYZ@127.0.0.1:${pg.port}/postgres`);
    assert.equal(auth.kind, "auth");
    assert.match(auth.message, new RegExp(`authentication failed for role "${pg.superuser}"`));
    assert.match(auth.message, /postgres:\/\/[^:]+:\*\*\*@127\.0\.0\.1/);
    noSecret(auth);

    // Unknown database.
    const nodb = await openError(`${base}/no_such_db`);
    assert.equal(nodb.kind, "database");
    assert.match(nodb.message, /database "no_such_db" does not exist/);
    noSecret(nodb);

    // sslmode=require on a server without TLS (the harness enables none).
    const tls = await openError(`${base}/postgres?sslmode=require`, { connectTimeoutMs: 3000 });
    assert.equal(tls.kind, "tls", tls.message);
    assert.match(tls.message, /sslmode=require/);
    noSecret(tls);

    // Nothing listening: fast.
    const t0 = performance.now();
    const refused = await openError(`postgres://${user}:${pass}@127.0.0.1:${freePort()}/postgres`);
    const ms = performance.now() - t0;
    assert.equal(refused.kind, "connect");
    assert.match(refused.message, /connection refused by 127\.0\.0\.1:\d+/);
    assert.ok(ms < 2000, `refused took ${ms.toFixed(0)} ms`);
    noSecret(refused);
    return true;
  });
  if (ran === null) console.error("team connect test: skipped, PostgreSQL unavailable");
});
