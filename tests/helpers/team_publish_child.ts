/**
 * A machine's publisher in its own process, for the team reliability suite (G1, G2): the
 * production publisher (lib/team createPublisher) over a real local store, killable with
 * SIGKILL at any point.
 *   deno run -A tests/helpers/team_publish_child.ts once <store> <machine> <url> <batch>
 *     publishes everything the store holds that the server lacks, in transactions of at
 *     most <batch> records, then exits 0;
 *   deno run -A tests/helpers/team_publish_child.ts loop <store> <machine> <url> <rounds> <seed>
 *     <rounds> times: appends a record carrying "the" to one of its sessions (a new
 *     session one time in five), publishes, prints the team revision — non-destructive
 *     changes only (G2's paging reader must never see a 410);
 *   deno run -A tests/helpers/team_publish_child.ts naive <store> <machine> <url> <watermark-file>
 *     G1's NEGATIVE CONTROL, not our publisher: the classic local-watermark design — it
 *     records "published up to revision N" in a local file FIRST, prints "W", then inserts
 *     the rows in autocommit statements; a revision equal to the file's is skipped.
 */
import { openStore } from "../../lib/message_search/mod.ts";
import { createPublisher, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { prng, PV, record, update } from "./store_fixtures.ts";

const [mode, root, machine, url, a, b] = Deno.args;
if (!mode || !root || !machine || !url) throw new RangeError("Usage: see the header");
const store = await openStore({ root, parserVersion: PV, windowDays: null, lock: "none" });
const db = await openTeamDb(parseTeamUrl(url), { max: 2 });
try {
  if (mode === "once") {
    const p = createPublisher({ db, store, machine, binaryVersion: "g1", batchRecords: Number(a) });
    await p.publish();
  } else if (mode === "loop") {
    const p = createPublisher({ db, store, machine, binaryVersion: "g2" });
    const rnd = prng(Number(b));
    for (let i = 0; i < Number(a); i++) {
      const m = await store.readManifest();
      const keys = Object.keys(m.sessions);
      const fresh = keys.length === 0 || rnd() < 0.2;
      const id = fresh ? `${machine}-n${i}` : keys[Math.floor(rnd() * keys.length)]!.slice(6);
      const e = m.sessions[`codex:${id}`];
      const order = e ? e.records : 0;
      const rec = record(id, order, {
        ts: Date.now(),
        text: `the appended message ${i} of ${machine}`,
      });
      const r = await store.publish([
        update(fresh ? "replace" : "append", id, { base: e?.generations ?? null, recs: [rec] }),
      ]);
      if (r.rejected.length > 0) throw new Error(`Local append rejected: ${r.rejected[0]!.reason}`);
      const rep = await p.publish();
      console.log(JSON.stringify({ round: i, revision: rep.revision }));
    }
  } else if (mode === "naive") {
    const m = await store.readManifest();
    const mark = await Deno.readTextFile(a!).catch(() => "");
    if (mark !== String(m.revision)) {
      await Deno.writeTextFile(a!, String(m.revision));
      console.log("W");
      await new Promise((r) => setTimeout(r, 200));
      const { decodeRecords } = await import("../../lib/message_search/mod.ts");
      const { toRecordRow } = await import("../../lib/team/mod.ts");
      for (const [key, e] of Object.entries(m.sessions)) {
        await db.sql`INSERT INTO intendant.sessions (machine, session_key, source, session_id,
            newest_ts_ms, oldest_ts_ms, records, sig, rev_added, rev_changed)
          VALUES (${machine}, ${key}, ${e.source}, ${e.session_id}, ${e.newest_ts_ms},
            ${e.oldest_ts_ms}, ${e.records}, 'naive', 1, 1)
          ON CONFLICT DO NOTHING`;
        for (const g of e.generations) {
          for (const rec of decodeRecords(await store.loadSegment(g))) {
            const row = toRecordRow(rec, { machine, sessionKey: key, superseded: false, rev: 1 });
            await db.sql`INSERT INTO intendant.records ${db.sql(row)} ON CONFLICT DO NOTHING`;
          }
        }
      }
    }
  } else throw new RangeError(`Unknown mode "${mode}"`);
} finally {
  await db.close();
}
