/**
 * Reliability-plan H6: one member's oversized rows must not balloon the others. A machine
 * of the team publishes a record of 60 MB (16 MB at the CI N) and a 1 MB title, written
 * server-side into a real PostgreSQL; another machine's readers — team search for a word
 * of that record, the remote session view (/api/team/session's reader), the MCP's remote
 * read — take only the local caps (256 KiB a message, titles as locally), say they cut
 * (`truncated`, "…"), and stay within a bounded memory delta. Negative control: the same
 * columns SELECTed whole bring the whole 60 MB.
 */
import assert from "node:assert/strict";
import { migrateTeamDb, openTeamDb, parseTeamUrl } from "../lib/team/mod.ts";
import { DENO } from "./helpers/temp.ts";
import { RECORD_TEXT_CAP_BYTES } from "../lib/message_search/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { loadTeamRows, textRecords } from "./helpers/team_rows.ts";

const MB = 1024 * 1024;
const CHILD = new URL("./helpers/team_caps_child.ts", import.meta.url).pathname;

Deno.test("H6: readers take at most the local caps of another machine's oversized rows", async () => {
  const recordMb = STRESS ? 60 : 16;
  await withPgCluster(async (pg) => {
    const db = await openTeamDb(parseTeamUrl(pg.url));
    try {
      await migrateTeamDb(db, { binaryVersion: "test" });
      const recs = textRecords({
        source: "codex",
        id: "huge",
        texts: ["hostilebigword placeholder", "a normal answer"],
        endMs: Date.now(),
      });
      await loadTeamRows(db, [{
        machine: "hostile",
        key: "codex:huge",
        source: "codex",
        id: "huge",
        title: "t",
        project: "/p",
        recs,
      }], 1);
      // The oversized row and title, made on the server: nothing this big passes the client.
      await db.sql.unsafe(
        `UPDATE intendant.records SET
           text = 'hostilebigword ' || repeat('lorem ipsum ', ${Math.floor((recordMb * MB) / 12)}),
           folded = 'hostilebigword ' || repeat('lorem ipsum ', ${Math.floor((recordMb * MB) / 12)})
         WHERE record_id = 'huge-r0'`,
      );
      await db.sql.unsafe(
        `UPDATE intendant.sessions SET title = repeat('T', ${MB}) WHERE session_key = 'codex:huge'`,
      );
      const [raw] = await db.sql.unsafe<{ n: number }[]>(
        `SELECT octet_length(text) + (SELECT octet_length(title) FROM intendant.sessions
           WHERE session_key = 'codex:huge') AS n FROM intendant.records WHERE record_id = 'huge-r0'`,
      );

      // The readers run in a child process of their own (its memory is only theirs, and
      // it can force a GC before measuring): the suite's process holds every other
      // test's garbage, which made an in-process RSS delta noise (±100 MiB).
      const out = await new Deno.Command(DENO, {
        args: ["run", "-A", "--quiet", "--v8-flags=--expose-gc", CHILD, pg.url],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, err);
      const r = JSON.parse(new TextDecoder().decode(out.stdout).trim());
      assert.equal(r.gc, true, "the child could force a GC");
      assert.equal(r.groups, 1);
      assert.ok(r.titleCut, "the title is cut and says so");
      assert.ok(r.hitTruncated, "the hit says its message was cut");
      assert.ok(r.recordCapped, "the remote record is capped and marked");
      assert.ok(r.remoteTitleCut, "the remote title is cut and says so");
      const rssDeltaMb: number = r.rssDeltaMb;
      const responseBytes: number = r.responseBytes;
      const overCap = responseBytes > 2 * RECORD_TEXT_CAP_BYTES + 64 * 1024 ? 1 : 0;
      assert.equal(overCap, 0, `responses: ${responseBytes} bytes`);
      assert.ok(rssDeltaMb < recordMb, `reader RSS grew ${rssDeltaMb.toFixed(1)} MiB`);
      // Negative control: the columns whole.
      assert.ok(Number(raw!.n) > recordMb * MB, "the rows really are that big");
      figure(
        "H6",
        `reader RSS delta: ${rssDeltaMb.toFixed(1)} MiB (search + remote session over a ` +
          `${recordMb} MB record and a 1 MB title), response bytes over cap: ${overCap} ` +
          `(search page + session page: ${(responseBytes / 1024).toFixed(0)} KiB), control ` +
          `(the columns whole): ${(Number(raw!.n) / MB).toFixed(0)} MB on the wire`,
      );
    } finally {
      await db.close();
    }
  });
});
