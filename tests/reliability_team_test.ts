/**
 * Team replica reliability (reliability plan G1, G2; issue 19) on a real PostgreSQL with
 * real publisher processes:
 *  - G1: a machine's publisher is killed with SIGKILL at random points of its publishes
 *    (transactions of 40 records, so kills land between staging, the revision bump, the
 *    inserts and the commit) while the local index keeps changing — new sessions,
 *    appends, a supersession mark, a deleted session — then one clean publish: the replica
 *    must equal the local index exactly. Negative control: the classic local-watermark
 *    publisher (watermark first, rows after, no transaction) killed once after its
 *    watermark: its restart skips the revision and loses rows.
 *  - G2: a reader pages a stopword query (limits 1–3, cursors) to the end, again and
 *    again, while 10 publisher processes append concurrently: every session of the
 *    snapshot its first page pinned comes back exactly once, and no cursor expires.
 *    Negative control: OFFSET paging over the live tables during the same publishes.
 * CI runs a moderate N; INTENDANT_STRESS=1 the plan's full N (50 kill points).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore, type Store } from "../lib/message_search/mod.ts";
import {
  createPublisher,
  createTeamSearch,
  migrateTeamDb,
  openTeamDb,
  parseTeamUrl,
  type TeamSql,
} from "../lib/team/mod.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { prng, PV, record, update, withTempDir } from "./helpers/store_fixtures.ts";
import { localView } from "./helpers/team_mirror.ts";

const CHILD = new URL("./helpers/team_publish_child.ts", import.meta.url).pathname;
const WORDS = "the flaky migration pool timeout café 東京 kubernetes deploy cache".split(" ");

function child(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function finish(p: Deno.ChildProcess): Promise<void> {
  const o = await p.output();
  if (!o.success) throw new Error(`child failed: ${new TextDecoder().decode(o.stderr)}`);
}

/** Adds `n` sessions of `len` records to `store`, with prose from WORDS. */
async function addSessions(
  store: Store,
  o: { from: number; n: number; len: number; rnd: () => number },
) {
  const ups = [];
  for (let s = o.from; s < o.from + o.n; s++) {
    const id = `s${s}`;
    const recs = Array.from({ length: o.len }, (_, i) =>
      record(id, i, {
        ts: 1_700_000_000_000 + s * 100_000 + i,
        text: Array.from({ length: 6 + (i % 7) }, () => WORDS[Math.floor(o.rnd() * WORDS.length)])
          .join(" "),
      }));
    ups.push(update("replace", id, { recs }));
  }
  const r = await store.publish(ups);
  assert.deepEqual(r.rejected, []);
}

/** Mirror figures: what the server holds of `machine` against the local index. */
async function mirrorCounts(sql: TeamSql, machine: string, store: Store) {
  const local = await localView(store);
  const rows = await sql<{ session_key: string; record_id: string; superseded: boolean }[]>`
    SELECT session_key, record_id, superseded FROM intendant.records WHERE machine = ${machine}`;
  const seen = new Set<string>();
  let duplicates = 0, wrongFlags = 0, orphans = 0;
  for (const r of rows) {
    const k = `${r.session_key}\u0000${r.record_id}`;
    if (seen.has(k)) duplicates++;
    seen.add(k);
    const l = local.get(r.session_key)?.get(r.record_id);
    if (!l) orphans++;
    else if (l[0] !== r.superseded) wrongFlags++;
  }
  let lost = 0;
  for (const [key, recs] of local) {
    for (const id of recs.keys()) if (!seen.has(`${key}\u0000${id}`)) lost++;
  }
  return { duplicates, lost, wrongFlags, orphans, rows: rows.length };
}

Deno.test("G1: publishers killed at random points lose nothing and duplicate nothing", async () => {
  const killsWanted = STRESS ? 50 : 6;
  await withPgCluster(async (pg) => {
    const db = await openTeamDb(parseTeamUrl(pg.url));
    try {
      await migrateTeamDb(db, { binaryVersion: "test" });
      await withTempDir(async (dir) => {
        const root = join(dir, "a");
        const store = await openStore({ root, parserVersion: PV, windowDays: null, lock: "none" });
        const rnd = prng(1906);
        let next = 0;
        await addSessions(store, { from: next, n: 20, len: 40, rnd });
        next += 20;
        // A complete publish first: its duration spreads the kill points.
        let t = performance.now();
        await finish(child(["once", root, "a", pg.url, "40"]));
        const fullMs = performance.now() - t;
        let kills = 0, attempts = 0;
        while (kills < killsWanted && attempts < killsWanted * 4) {
          attempts++;
          // The local index moves on between kills: new sessions, appends, a supersession
          // mark, now and then a deletion (what the next publish must carry).
          await addSessions(store, { from: next, n: 4, len: 40, rnd });
          next += 4;
          const m = await store.readManifest();
          const keys = Object.keys(m.sessions);
          const victim = keys[Math.floor(rnd() * keys.length)]!;
          const e = m.sessions[victim]!;
          const id = victim.slice(6);
          const u = update("append", id, {
            base: e.generations,
            recs: [record(id, e.records, { ts: Date.now(), text: "the appended one" })],
          });
          if (attempts % 3 === 0) {
            u.segment!.marks = [{ kind: "record_ids", after_order: e.records, ids: [`${id}-r0`] }];
          }
          assert.deepEqual((await store.publish([u])).rejected, []);
          if (attempts % 4 === 0) await store.deleteSession(keys[0]!);
          const p = child(["once", root, "a", pg.url, "40"]);
          await new Promise((r) => setTimeout(r, rnd() * fullMs));
          try {
            p.kill("SIGKILL");
          } catch (err) {
            if (!(err instanceof TypeError)) throw err; // already exited
          }
          const st = await p.status;
          if (st.signal === "SIGKILL") kills++;
          await p.stdout.cancel().catch(() => {});
          await p.stderr.cancel().catch(() => {});
        }
        t = performance.now();
        await finish(child(["once", root, "a", pg.url, "40"]));
        const c = await mirrorCounts(db.sql, "a", store);
        assert.ok(kills >= killsWanted, `only ${kills} kills landed in ${attempts} attempts`);
        assert.deepEqual(
          { duplicates: c.duplicates, lost: c.lost, wrongFlags: c.wrongFlags, orphans: c.orphans },
          { duplicates: 0, lost: 0, wrongFlags: 0, orphans: 0 },
        );
        // Tombstones for the deleted sessions, and no session the local index lacks.
        const tomb = await db.sql`SELECT count(*)::int AS n FROM intendant.tombstones
                                  WHERE machine = 'a'`;
        assert.ok(tomb[0]!.n >= 1);

        // Negative control: watermark first, rows after, killed right after the watermark.
        await db.sql`INSERT INTO intendant.machines (name) VALUES ('naive')`;
        const nroot = join(dir, "naive");
        const naive = await openStore({
          root: nroot,
          parserVersion: PV,
          windowDays: null,
          lock: "none",
        });
        await addSessions(naive, { from: 0, n: 5, len: 40, rnd });
        const wm = join(dir, "naive.watermark");
        const p = child(["naive", nroot, "naive", pg.url, wm]);
        const reader = p.stdout.getReader();
        const { value } = await reader.read();
        assert.match(new TextDecoder().decode(value), /W/);
        p.kill("SIGKILL");
        await p.status;
        reader.releaseLock();
        await p.stdout.cancel().catch(() => {});
        await p.stderr.cancel().catch(() => {});
        await finish(child(["naive", nroot, "naive", pg.url, wm]));
        const nc = await mirrorCounts(db.sql, "naive", naive);
        assert.ok(nc.lost > 0, "the control must lose rows");
        figure(
          "G1",
          `kill points: ${kills} (of ${attempts} publishes, ${c.rows} rows), duplicates: ${c.duplicates}, ` +
            `lost: ${c.lost}, wrong flags: ${c.wrongFlags}, orphan rows: ${c.orphans} ` +
            `(control, a local watermark written before the rows, killed once: lost ${nc.lost}/${
              nc.lost + nc.rows
            })`,
        );
      });
    } finally {
      await db.close();
    }
  });
});

Deno.test("G2: a paging reader during 10 concurrent publishers skips and repeats nothing", async () => {
  const rounds = STRESS ? 60 : 12;
  await withPgCluster(async (pg) => {
    const db = await openTeamDb(parseTeamUrl(pg.url), { max: 4 });
    try {
      await migrateTeamDb(db, { binaryVersion: "test" });
      await withTempDir(async (dir) => {
        const rnd = prng(2026);
        const roots: string[] = [];
        for (let m = 0; m < 10; m++) {
          const root = join(dir, `m${m}`);
          roots.push(root);
          const store = await openStore({
            root,
            parserVersion: PV,
            windowDays: null,
            lock: "none",
          });
          await addSessions(store, { from: m * 100, n: 4, len: 6, rnd });
          await createPublisher({ db, store, machine: `m${m}`, binaryVersion: "t" }).publish();
        }
        const team = createTeamSearch({
          db,
          cursorKey: new Uint8Array(32).fill(5),
          windowDays: null,
        });
        const kids = roots.map((root, m) =>
          child(["loop", root, `m${m}`, pg.url, String(rounds), String(m + 1)])
        );
        const done = Promise.all(kids.map(finish));
        let running = true;
        void done.finally(() => (running = false));
        let pages = 0, passes = 0, skipped = 0, repeated = 0, expired = 0;
        let ctlRepeated = 0, ctlSkipped = 0;
        while (running || passes < 3) {
          const limit = 1 + (passes % 3);
          const seen: string[] = [];
          let cursor: string | null = null;
          let rev = -1;
          do {
            let r;
            try {
              r = await team.search({ q: "the", limit, cursor, complete: true });
            } catch (err) {
              if ((err as Error).name === "CursorExpiredError") {
                expired++;
                break;
              }
              throw err;
            }
            if (rev < 0) rev = r.revision;
            for (const g of r.groups) seen.push(`${g.machine}/${g.session_key}`);
            cursor = r.cursor;
            pages++;
          } while (cursor !== null);
          // What the first page's revision held: per machine, the rows of its batches up
          // to that team revision (the definition of "as of", schema_v1.ts).
          const want = await db.sql<{ k: string }[]>`
            SELECT DISTINCT r.machine || '/' || r.session_key AS k FROM intendant.records r
            JOIN (SELECT machine, max(machine_rev) AS mrev FROM intendant.batches
                  WHERE team_rev <= ${rev} GROUP BY machine) v ON v.machine = r.machine
            WHERE r.rev_added <= v.mrev AND NOT r.superseded AND r.folded LIKE '%the%'`;
          const got = new Set(seen);
          repeated += seen.length - got.size;
          for (const w of want) if (!got.has(w.k)) skipped++;
          // Control: OFFSET paging over the live tables, same order, same limit.
          const ctl: string[] = [];
          for (let off = 0;; off += limit) {
            const page = await db.sql<{ k: string }[]>`
              SELECT machine || '/' || session_key AS k FROM intendant.records
              WHERE NOT superseded AND folded LIKE '%the%'
              GROUP BY machine, session_key
              ORDER BY max(ts_ms) DESC, machine COLLATE "C", session_key COLLATE "C"
              LIMIT ${limit} OFFSET ${off}`;
            for (const p of page) ctl.push(p.k);
            if (page.length < limit) break;
            await new Promise((r) => setTimeout(r, 5));
          }
          const ctlSet = new Set(ctl);
          ctlRepeated += ctl.length - ctlSet.size;
          for (const w of want) if (!ctlSet.has(w.k)) ctlSkipped++;
          passes++;
        }
        await done;
        assert.deepEqual({ skipped, repeated, expired }, { skipped: 0, repeated: 0, expired: 0 });
        assert.ok(pages > passes, "the reader must have paged");
        assert.ok(ctlRepeated + ctlSkipped > 0, "OFFSET paging must trip over the publishes");
        figure(
          "G2",
          `pages: ${pages} over ${passes} passes (limits 1–3) during 10 publishers × ${rounds} publishes, ` +
            `skipped sessions: ${skipped}, repeated sessions: ${repeated}, expired cursors: ${expired} ` +
            `(control, OFFSET paging over the live tables: ${ctlRepeated} repeated, ${ctlSkipped} skipped)`,
        );
      });
    } finally {
      await db.close();
    }
  });
});
