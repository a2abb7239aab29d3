/**
 * The publisher against a real throwaway PostgreSQL (tests/helpers/pg_cluster.ts) and real
 * local stores: two machines publish into one migrated database; an append publishes only
 * its new rows; a supersession mark flips flags and bumps destructive_rev; a deleted local
 * session is tombstoned on the server; a crash inside the transaction leaves nothing and
 * the republish lands exactly once; two publishers of one machine race and the stale one
 * retries; a machine role publishes under RLS and cannot publish as another machine;
 * U+0000 round-trips. After every step the server must MIRROR the local store exactly
 * (same ids, flags, ord per session; no duplicates, nothing lost).
 */
import assert from "node:assert/strict";
import { withPgCluster } from "../../tests/helpers/pg_cluster.ts";
import { PV, record, update, withTempDir } from "../../tests/helpers/store_fixtures.ts";
import { assertMirror } from "../../tests/helpers/team_mirror.ts";
import { StalePublishError } from "../errors.ts";
import {
  type MessageRecord,
  openStore,
  type Store,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { openTeamDb, TeamDbError, type TeamSql } from "./connect.ts";
import { addMachine } from "./machine_role.ts";
import { migrateTeamDb } from "./migrate.ts";
import { createPublisher, type PublisherOptions } from "./publish.ts";
import { applyBatch, emptyBatchPlan } from "./publish_batch.ts";
import { restoreText } from "./record_row.ts";
import { parseTeamUrl } from "./team_url.ts";

async function localStore(dir: string): Promise<Store> {
  return await openStore({ root: dir, parserVersion: PV, windowDays: null, lock: "none" });
}

/** A migrated team database on a fresh cluster and one local store (machine "a"). */
async function withTeamAndStore(
  fn: (db: Awaited<ReturnType<typeof openTeamDb>>, store: Store) => Promise<void>,
): Promise<void> {
  await withPgCluster(async (pg) => {
    const db = await openTeamDb(parseTeamUrl(pg.url));
    try {
      await migrateTeamDb(db, { binaryVersion: "test" });
      await withTempDir(async (dir) => await fn(db, await localStore(`${dir}/a`)));
    } finally {
      await db.close();
    }
  });
}

async function machineRow(sql: TeamSql, name: string) {
  const [r] = await sql<{ publish_seq: string; destructive_rev: string; local_revision: string }[]>`
    SELECT publish_seq, destructive_rev, local_revision FROM intendant.machines
    WHERE name = ${name}`;
  return {
    seq: Number(r!.publish_seq),
    destructive: Number(r!.destructive_rev),
    local: Number(r!.local_revision),
  };
}

async function teamRevision(sql: TeamSql): Promise<number> {
  const [r] = await sql<{ revision: string }[]>`SELECT revision FROM intendant.team_state`;
  return Number(r!.revision);
}

async function append(
  store: Store,
  id: string,
  recs: MessageRecord[],
  marks: SupersessionMark[] = [],
) {
  const m = await store.readManifest();
  const u = update("append", id, { base: m.sessions[`codex:${id}`]!.generations, recs });
  u.segment!.marks = marks;
  const r = await store.publish([u]);
  assert.deepEqual(r.rejected, []);
}

Deno.test("team publish: two machines, append, marks, tombstone, crash, race, RLS, U+0000", async () => {
  await withPgCluster(async (pg) => {
    const admin = await openTeamDb(parseTeamUrl(pg.url));
    const other = await openTeamDb(parseTeamUrl(pg.url));
    try {
      await migrateTeamDb(admin, { binaryVersion: "test" });
      await withTempDir(async (dir) => {
        const a = await localStore(`${dir}/a`);
        const b = await localStore(`${dir}/b`);
        const pub = (store: Store, machine: string, o: Partial<PublisherOptions> = {}) =>
          createPublisher({ db: admin, store, machine, binaryVersion: "t1", ...o });
        // --- Two machines, one of them with the SAME session key, and U+0000 text.
        const nulText = "before\u0000after \u0000 end";
        const s1 = Array.from({ length: 10 }, (_, i) => record("s1", i));
        s1[3] = record("s1", 3, { text: nulText });
        // Text that would need escaping in any text wire format (tab, newline, CR, backslash,
        // a literal \N) and U+0000.
        const hostile = "tab\there\nnew\r\\N back\\slash \u0000 ü e\u0301";
        s1[4] = record("s1", 4, { text: hostile });
        await a.publish([
          update("replace", "s1", { recs: s1 }),
          update("replace", "s2", { recs: Array.from({ length: 5 }, (_, i) => record("s2", i)) }),
        ]);
        await b.publish([
          update("replace", "s1", {
            recs: Array.from(
              { length: 7 },
              (_, i) => record("s1", i, i === 2 ? { text: hostile } : {}),
            ),
          }),
        ]);
        const pa = pub(a, "laptop-a", { batchRecords: 4 });
        const ra = await pa.publish();
        assert.equal(ra.records_inserted, 15);
        assert.equal(ra.sessions_changed, 2);
        assert.ok(ra.batches >= 4, `15 rows in batches of 4: ${ra.batches}`);
        const rb = await pub(b, "laptop-b").publish();
        assert.equal(rb.records_inserted, 7);
        await assertMirror(admin.sql, "laptop-a", a);
        await assertMirror(admin.sql, "laptop-b", b);
        const [nul] = await admin.sql<{ text: string; nul_at: number[] }[]>`
          SELECT text, nul_at FROM intendant.records
          WHERE machine = 'laptop-a' AND record_id = ${s1[3]!.id}`;
        assert.ok(!nul!.text.includes("\u0000"));
        assert.equal(restoreText(nul!.text, nul!.nul_at), nulText);
        const sigs = await admin.sql`SELECT sig FROM intendant.sessions WHERE sig = ''`;
        assert.equal(sigs.length, 0, "every session complete");
        assert.equal(
          (await machineRow(admin.sql, "laptop-a")).local,
          (await a.readManifest()).revision,
        );

        // --- A no-op publish writes nothing.
        const rev0 = await teamRevision(admin.sql);
        const seq0 = (await machineRow(admin.sql, "laptop-a")).seq;
        // The publisher's SQL calls are counted: a no-op is ONE small query (no sig reload).
        let queries = 0;
        const counted = {
          ...admin,
          sql: new Proxy(admin.sql, {
            apply(target, self, args) {
              queries++;
              return Reflect.apply(target, self, args);
            },
          }),
        };
        const pc = pub(a, "laptop-a", { db: counted });
        await pc.publish(); // first publish of this publisher: loads the sigs, writes nothing
        queries = 0;
        const noop = await pc.publish();
        assert.equal(queries, 1, "a no-op publish costs one query");
        assert.equal(noop.batches, 0);
        assert.equal(noop.revision, null);
        assert.equal(await teamRevision(admin.sql), rev0);
        assert.equal((await machineRow(admin.sql, "laptop-a")).seq, seq0);

        // --- An append publishes only the new rows, non-destructively.
        const d0 = (await machineRow(admin.sql, "laptop-a")).destructive;
        await append(a, "s1", [10, 11, 12].map((i) => record("s1", i)));
        const rApp = await pa.publish();
        assert.equal(rApp.records_inserted, 3);
        assert.equal(rApp.records_deleted + rApp.flags_flipped, 0);
        assert.equal(rApp.sessions_changed, 1);
        assert.equal((await machineRow(admin.sql, "laptop-a")).destructive, d0);
        const [fresh] = await admin.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM intendant.records
          WHERE machine = 'laptop-a' AND rev_added = (SELECT machine_rev FROM intendant.batches
            WHERE team_rev = ${rApp.revision!} AND machine = 'laptop-a')`;
        assert.equal(fresh!.n, 3);
        await assertMirror(admin.sql, "laptop-a", a);

        // --- An abandon mark flips superseded and bumps destructive_rev.
        const mark: SupersessionMark = {
          kind: "record_ids",
          after_order: 14,
          ids: [s1[1]!.id, s1[2]!.id],
        };
        await append(a, "s1", [record("s1", 13)], [mark]);
        const rMark = await pa.publish();
        assert.equal(rMark.flags_flipped, 2);
        assert.equal(rMark.records_inserted, 1);
        assert.equal((await machineRow(admin.sql, "laptop-a")).destructive, rMark.revision);
        await assertMirror(admin.sql, "laptop-a", a);

        // --- A deleted local session is deleted and tombstoned on the server.
        await a.deleteSession("codex:s2");
        const rDel = await pa.publish();
        assert.equal(rDel.sessions_deleted, 1);
        assert.equal(rDel.records_deleted, 5);
        const tomb = await admin.sql`SELECT rev FROM intendant.tombstones
                                     WHERE machine = 'laptop-a' AND session_key = 'codex:s2'`;
        assert.equal(Number(tomb[0]?.rev), rDel.revision);
        assert.equal((await machineRow(admin.sql, "laptop-a")).destructive, rDel.revision);
        await assertMirror(admin.sql, "laptop-a", a);
        await assertMirror(admin.sql, "laptop-b", b);

        // --- A crash inside the transaction (after staging) leaves nothing visible...
        await append(a, "s1", [14, 15, 16, 17].map((i) => record("s1", i)));
        const before = {
          rev: await teamRevision(admin.sql),
          m: await machineRow(admin.sql, "laptop-a"),
        };
        const crashing = pub(a, "laptop-a", {
          afterStage: () => {
            throw new Error("simulated crash before commit");
          },
        });
        await assert.rejects(crashing.publish(), /simulated crash/);
        assert.equal(await teamRevision(admin.sql), before.rev);
        assert.deepEqual(await machineRow(admin.sql, "laptop-a"), before.m);
        const [n1] = await admin.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM intendant.records WHERE machine = 'laptop-a'`;
        // ...and the republish (a fresh process: a new publisher) lands exactly once.
        const rRe = await pub(a, "laptop-a").publish();
        assert.equal(rRe.records_inserted, 4);
        const [n2] = await admin.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM intendant.records WHERE machine = 'laptop-a'`;
        assert.equal(n2!.n, n1!.n + 4);
        await assertMirror(admin.sql, "laptop-a", a);

        // --- A crash between the transactions of a session split across batches: the first
        // committed, its sig says "incomplete", and the same publisher's next publish heals
        // it by re-diffing (the rest lands once, nothing is lost).
        await append(a, "s1", [20, 21, 22, 23, 24].map((i) => record("s1", i)));
        let calls = 0;
        const split = pub(a, "laptop-a", {
          batchRecords: 2,
          afterStage: () => {
            if (++calls === 2) throw new Error("simulated crash in batch 2");
          },
        });
        await assert.rejects(split.publish(), /batch 2/);
        const [half] = await admin.sql<{ n: number; sig: string }[]>`
          SELECT (SELECT count(*)::int FROM intendant.records
                  WHERE machine = 'laptop-a' AND session_key = 'codex:s1') AS n, sig
          FROM intendant.sessions WHERE machine = 'laptop-a' AND session_key = 'codex:s1'`;
        assert.equal(half!.sig, "", "a partly published session has no sig");
        const rHeal = await split.publish();
        assert.equal(rHeal.records_inserted, 3);
        const [whole] = await admin.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM intendant.records
          WHERE machine = 'laptop-a' AND session_key = 'codex:s1'`;
        assert.equal(whole!.n, half!.n + 3);
        await assertMirror(admin.sql, "laptop-a", a);

        // --- A stale writer is refused by the CAS (nothing written)...
        const m0 = await machineRow(admin.sql, "laptop-a");
        await assert.rejects(
          applyBatch(admin.sql, {
            ...emptyBatchPlan({ machine: "laptop-a", seenSeq: m0.seq - 1, binaryVersion: "t" }),
            sessionDeletes: [{ key: "codex:s1", tombstone: true, reason: "gone" }],
            destructive: true,
          }),
          StalePublishError,
        );
        await assertMirror(admin.sql, "laptop-a", a);
        // ...and two publishers of one machine racing: the one that loses the CAS retries.
        await append(a, "s1", [18, 19].map((i) => record("s1", i)));
        const racer = createPublisher({
          db: other,
          store: a,
          machine: "laptop-a",
          binaryVersion: "t",
        });
        let racing: Promise<unknown> | null = null;
        const leader = pub(a, "laptop-a", {
          afterStage: async () => {
            if (racing) return;
            racing = racer.publish();
            // Hold our transaction (it owns the machine row) until the racer is blocked on
            // its CAS: it has then read the old publish_seq and diffed the same change.
            for (let i = 0; i < 400; i++) {
              const w = await admin.sql`
                SELECT 1 FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%publish_seq = publish_seq + 1%'`;
              if (w.length > 0) return;
              await new Promise((r) => setTimeout(r, 25));
            }
            throw new Error("the racing publisher never reached its CAS");
          },
        });
        const rLead = await leader.publish();
        const rRace = (await racing!) as Awaited<ReturnType<typeof racer.publish>>;
        assert.equal(rLead.records_inserted, 2);
        assert.equal(rRace.stale_retries, 1);
        assert.equal(rRace.records_inserted, 0);
        await assertMirror(admin.sql, "laptop-a", a);

        // --- A machine role publishes its own machine under RLS, never another's.
        const mc = await addMachine(admin.sql, "laptop-c");
        const asC = await openTeamDb(parseTeamUrl(
          `postgres://${mc.role}:${mc.password}@127.0.0.1:${pg.port}/postgres?sslmode=disable`,
        ));
        try {
          const c = await localStore(`${dir}/c`);
          await c.publish([update("replace", "s9", { recs: [record("s9", 0), record("s9", 1)] })]);
          const rc = await createPublisher({
            db: asC,
            store: c,
            machine: "laptop-c",
            binaryVersion: "t",
          })
            .publish();
          assert.equal(rc.records_inserted, 2);
          await assertMirror(admin.sql, "laptop-c", c);
          await assert.rejects(
            createPublisher({ db: asC, store: c, machine: "laptop-a", binaryVersion: "t" })
              .publish(),
            (e: unknown) => e instanceof TeamDbError && e.kind === "privilege",
          );
          // Below the publisher's own check, the server itself refuses: RLS hides A's machine
          // row from C's UPDATE (the CAS matches nothing) and refuses a session row of A.
          const mA = await machineRow(admin.sql, "laptop-a");
          await assert.rejects(
            applyBatch(asC.sql, {
              ...emptyBatchPlan({ machine: "laptop-a", seenSeq: mA.seq, binaryVersion: "t" }),
              sessionDeletes: [{ key: "codex:s1", tombstone: true, reason: "gone" }],
              destructive: true,
            }),
            StalePublishError,
          );
          await assert.rejects(
            asC.sql`INSERT INTO intendant.sessions (machine, session_key, source, session_id,
                      newest_ts_ms, oldest_ts_ms, records, sig, rev_added, rev_changed)
                    VALUES ('laptop-a', 'codex:evil', 'codex', 'evil', 1, 1, 0, 'x', 1, 1)`,
            /row-level security/,
          );
          await assertMirror(admin.sql, "laptop-a", a);
        } finally {
          await asC.close();
        }
      });
    } finally {
      await admin.close();
      await other.close();
    }
  });
});

Deno.test("team publish: a local change that touches nothing published costs no team revision", async () => {
  // A touch (new file cursors, same records and meta) moves the local manifest revision but
  // not what is published: the publisher records the new local revision under its
  // compare-and-set and takes no team revision (no reader's cursor is disturbed).
  await withTeamAndStore(async (db, store) => {
    await store.publish([
      update("replace", "s1", { recs: [record("s1", 0), record("s1", 1)] }),
    ]);
    const p = createPublisher({ db, store, machine: "a", binaryVersion: "t" });
    await p.publish();
    const rev0 = await teamRevision(db.sql);
    const m0 = await machineRow(db.sql, "a");
    const gens = (await store.readManifest()).sessions["codex:s1"]!.generations;
    const t = await store.publish([update("touch", "s1", { base: gens, watermark: 900 })]);
    assert.deepEqual(t.rejected, []);
    const r = await p.publish();
    assert.equal(r.revision, null);
    assert.equal(r.records_inserted + r.records_deleted + r.flags_flipped, 0);
    assert.equal(await teamRevision(db.sql), rev0, "no team revision taken");
    const m1 = await machineRow(db.sql, "a");
    assert.equal(m1.seq, m0.seq + 1, "the compare-and-set still moved");
    assert.equal(m1.local, (await store.readManifest()).revision);
    await assertMirror(db.sql, "a", store);
  });
});

Deno.test("team publish: an append publishes from its new generations alone; anything else re-diffs", async () => {
  // The fast path (publish.ts header, 7) must give exactly what the full diff gives: after
  // every step the server mirrors the store. Which path a publish took is in its report.
  await withTeamAndStore(async (db, store) => {
    await store.publish([
      update("replace", "s1", { recs: Array.from({ length: 10 }, (_, i) => record("s1", i)) }),
      update("replace", "s2", { recs: [record("s2", 0)] }),
    ]);
    const p = createPublisher({ db, store, machine: "a", binaryVersion: "t", batchRecords: 2 });
    const step = async (what: string, appended: number, inserted: number) => {
      const r = await p.publish();
      assert.equal(r.sessions_appended, appended, `${what}: sessions_appended`);
      assert.equal(r.records_inserted, inserted, `${what}: records_inserted`);
      await assertMirror(db.sql, "a", store);
      return r;
    };
    await step("first publish", 0, 11);

    // A plain append, larger than one transaction: new rows only, no full re-read.
    await append(store, "s1", [10, 11, 12, 13, 14].map((i) => record("s1", i)));
    const r1 = await step("append", 1, 5);
    assert.ok(r1.batches >= 3, `5 rows in batches of 2: ${r1.batches}`);
    assert.equal(r1.records_deleted + r1.flags_flipped, 0);

    // Two sessions appended in one publish.
    await append(store, "s1", [record("s1", 15)]);
    await append(store, "s2", [record("s2", 1), record("s2", 2)]);
    await step("two appends", 2, 3);

    // A mark in the new generation: the full diff (flags of old rows change).
    const mark: SupersessionMark = {
      kind: "record_ids",
      after_order: 17,
      ids: ["s1-r3", "s1-r4"],
    };
    await append(store, "s1", [record("s1", 16)], [mark]);
    const r2 = await step("mark", 0, 1);
    assert.equal(r2.flags_flipped, 2);

    // Past the mark: the fast path again, and the old flags stay as the mark left them.
    await append(store, "s1", [record("s1", 17), record("s1", 18)]);
    await step("after the mark", 1, 2);

    // A record that sorts before the mark's anchor (the mark would apply to it): full.
    await append(store, "s1", [{ ...record("s1", 40), id: "s1-early", order: 16 }]);
    await step("out of order", 0, 1);

    // A new record under an id the server holds: full diff (the first by order stays).
    await append(store, "s1", [{ ...record("s1", 41), id: "s1-r2" }]);
    await step("id clash", 0, 0);

    // A republished session (replace: a new generations list): full diff.
    const m = await store.readManifest();
    const all = Array.from({ length: 8 }, (_, i) => record("s1", i));
    await store.publish([
      update("replace", "s1", { base: m.sessions["codex:s1"]!.generations, recs: all }),
    ]);
    const r3 = await step("rewrite", 0, 0);
    assert.ok(r3.records_deleted > 0);

    // Many small appends: the store compacts a long generations list at some point, and
    // each publish still mirrors; most of them take the fast path.
    let appended = 0;
    for (let i = 0; i < 24; i++) {
      await append(store, "s1", [record("s1", 100 + i)]);
      const r = await p.publish();
      appended += r.sessions_appended;
      assert.equal(r.records_inserted, 1, `small append ${i}`);
      await assertMirror(db.sql, "a", store);
    }
    const gens = (await store.readManifest()).sessions["codex:s1"]!.generations.length;
    assert.ok(gens < 25, `the store compacted (${gens} generations)`);
    assert.ok(appended >= 20 && appended < 24, `fast path ${appended} of 24`);

    // Another publisher of this machine moves publish_seq: this one's tails are void.
    await append(store, "s1", [record("s1", 200), record("s1", 201)]);
    const q = createPublisher({ db, store, machine: "a", binaryVersion: "t" });
    assert.equal((await q.publish()).records_inserted, 2);
    await append(store, "s1", [record("s1", 202)]);
    await step("after another publisher", 0, 1);
    await append(store, "s1", [record("s1", 203)]);
    await step("and then the fast path again", 1, 1);

    // A publish that fails mid-way drops the cache: its retry diffs in full.
    let fail = true;
    const f = createPublisher({
      db,
      store,
      machine: "a",
      binaryVersion: "t",
      afterStage: () => {
        if (fail) {
          fail = false;
          throw new Error("injected");
        }
      },
    });
    assert.equal((await f.publish()).records_inserted, 0, "f starts in step with p");
    await append(store, "s1", [record("s1", 204)]);
    await assert.rejects(f.publish(), /injected/);
    const rf = await f.publish();
    assert.deepEqual([rf.sessions_appended, rf.records_inserted], [0, 1]);
    await assertMirror(db.sql, "a", store);
  });
});
