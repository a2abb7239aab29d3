/**
 * Smoke test of the throwaway PostgreSQL harness (tests/helpers/pg_cluster.ts) and of the
 * `postgres` npm client under Deno: a real cluster on loopback, a real client connection,
 * pg_trgm on a UTF-8 database finding CJK text through a GIN trigram index, the issue-19 trap
 * shown side by side (a LC_CTYPE=C database extracts zero trigrams from CJK), and no leak:
 * after the helper returns the port is closed and the dir is gone. Skips with a printed reason
 * outside CI when PostgreSQL is missing; fails under CI=true.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { withPgCluster } from "./helpers/pg_cluster.ts";

Deno.test("pg cluster: real server, UTF-8 trigrams find CJK, C locale does not, no leak", async () => {
  let seen: { port: number; dataDir: string; url: string } | null = null;
  const ran = await withPgCluster(async (pg) => {
    seen = { port: pg.port, dataDir: pg.dataDir, url: pg.url };
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const [v] = await sql<{ server_version_num: string }[]>`SHOW server_version_num`;
      assert.ok(Number(v!.server_version_num) >= 150000, `server ${v!.server_version_num} < 15`);

      const [db] = await sql<{ datctype: string }[]>`
        SELECT datctype FROM pg_database WHERE datname = current_database()`;
      assert.ok(/utf-?8/i.test(db!.datctype), `LC_CTYPE is "${db!.datctype}", not UTF-8`);

      await sql`CREATE EXTENSION pg_trgm`;
      const [t] = await sql<{ t: string[] }[]>`SELECT show_trgm('東京駅') AS t`;
      assert.ok(t!.t.length > 0, "UTF-8 database extracted no trigrams from CJK");

      await sql`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)`;
      await sql`CREATE INDEX notes_trgm ON notes USING gin (body gin_trgm_ops)`;
      const rows = [
        { id: 1, body: "明日は東京駅で会いましょう" },
        { id: 2, body: "大阪城の桜" },
        { id: 3, body: "京都駅から東京へ" },
        { id: 4, body: "plain ascii text" },
      ];
      await sql`INSERT INTO notes ${sql(rows)}`;
      await sql`ANALYZE notes`;
      // Force the index so the result proves the trigram path, not a sequential scan.
      await sql`SET enable_seqscan = off`;
      for (const [pattern, want] of [["%東京駅%", [1]], ["%東京%", [1, 3]]] as const) {
        const plan = await sql<{ "QUERY PLAN": string }[]>`
          EXPLAIN SELECT id FROM notes WHERE body LIKE ${pattern}`;
        const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
        assert.ok(
          text.includes("notes_trgm"),
          `LIKE ${pattern} did not use the trgm index:\n${text}`,
        );
        const hits = await sql<{ id: number }[]>`
          SELECT id FROM notes WHERE body LIKE ${pattern} ORDER BY id`;
        assert.deepEqual(hits.map((h) => h.id), [...want]);
      }
      const [like] = await sql<{ ok: boolean }[]>`SELECT '東京駅' LIKE '%東京%' AS ok`;
      assert.deepEqual(like!.ok, true);

      // The trap, reproduced: the same extension on a LC_CTYPE=C database sees no trigrams.
      await sql`CREATE DATABASE c_ctype ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`;
      const cUrl = new URL(pg.url);
      cUrl.pathname = "/c_ctype";
      const csql = postgres(cUrl.href, { max: 1, onnotice: () => {} });
      try {
        const [cdb] = await csql<{ datctype: string }[]>`
          SELECT datctype FROM pg_database WHERE datname = current_database()`;
        assert.deepEqual(cdb!.datctype, "C");
        await csql`CREATE EXTENSION pg_trgm`;
        const [ct] = await csql<{ t: string[] }[]>`SELECT show_trgm('東京駅') AS t`;
        assert.deepEqual(ct!.t, [], "a C-locale database unexpectedly extracted CJK trigrams");
        const [ascii] = await csql<{ t: string[] }[]>`SELECT show_trgm('tokyo') AS t`;
        assert.ok(ascii!.t.length > 0, "C-locale control should still index ASCII");
      } finally {
        await csql.end();
      }

      // Host auth is real: a wrong password is refused.
      const bad = new URL(pg.url);
      bad.password = "wrong";
      const bsql = postgres(bad.href, { max: 1, connect_timeout: 5, onnotice: () => {} });
      try {
        await assert.rejects(() => bsql`SELECT 1`);
      } finally {
        await bsql.end();
      }
    } finally {
      await sql.end();
    }
    return true;
  });
  if (ran === null) {
    console.error("pg_cluster_test: skipped, PostgreSQL unavailable (reason printed above)");
    return;
  }
  const s = seen as { port: number; dataDir: string; url: string } | null;
  assert.ok(s, "the helper never called the test body");
  // No leak: nothing listens on the port and the data dir is gone.
  await assert.rejects(() => Deno.connect({ hostname: "127.0.0.1", port: s.port }));
  await assert.rejects(() => Deno.stat(s.dataDir), Deno.errors.NotFound);
});
