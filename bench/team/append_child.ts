/**
 * Append → team-searchable latency (bench:team):
 *   deno run -A bench/team/append_child.ts <machine-store> <machine> <team-url> <appends>
 * One machine appends a message carrying a fresh word to its largest session (through the
 * store's own append path: what a sweep publishes), its publisher publishes, and a reader
 * on ANOTHER pool (another machine's view of the team database) polls team search every
 * 20 ms until the word is found: the time from the append to that answer. The same-run
 * baseline: the same append found by the local engine of the same store. The publisher's
 * own share is reported apart (publish ms). What this leaves out is the daemon's watch →
 * scoped sweep (serve --team publishes after each sweep that moved the index);
 * daemon_append_child.ts measures the whole path.
 * Prints one JSON line.
 */
import {
  createSearchEngine,
  decodeRecords,
  type MessageRecord,
  openStore,
  PARSER_VERSION,
} from "../../lib/message_search/mod.ts";
import { createPublisher, createTeamSearch, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { stats } from "../harness.ts";

const [root, machine, url, n] = Deno.args;
if (!root || !machine || !url) {
  throw new RangeError("Usage: append_child.ts <store> <machine> <url> <n>");
}
const appends = Number(n ?? 20);
const store = await openStore({
  root,
  parserVersion: PARSER_VERSION,
  windowDays: null,
  cacheReads: true,
});
const writerDb = await openTeamDb(parseTeamUrl(url), { max: 2 });
const readerDb = await openTeamDb(parseTeamUrl(url), { max: 2 });
const key = new Uint8Array(32).fill(3);
const publisher = createPublisher({ db: writerDb, store, machine, binaryVersion: "bench" });
const team = createTeamSearch({ db: readerDb, cursorKey: key, windowDays: null });
const local = createSearchEngine({ store, windowDays: null, cursorKey: key });

async function until(found: () => Promise<boolean>, limitMs: number): Promise<void> {
  const t0 = performance.now();
  while (!(await found())) {
    if (performance.now() - t0 > limitMs) throw new Error("append never became searchable");
    await new Promise((r) => setTimeout(r, 20));
  }
}

try {
  await publisher.publish(); // the machine is current before the first append
  const m0 = await store.readManifest();
  const [skey] = Object.entries(m0.sessions).sort((a, b) => b[1].records - a[1].records)[0]!;
  const teamMs: number[] = [];
  const localMs: number[] = [];
  const publishMs: number[] = [];
  // Each round appends twice: one append timed to the local engine, one to team search, so
  // neither figure carries the other's polling.
  const append = async (i: number, side: string) => {
    const m = await store.readManifest();
    const e = m.sessions[skey]!;
    const last = decodeRecords(await store.loadSegment(e.generations.at(-1)!)).at(-1)!;
    const word = `teamappend${side}${i}x${crypto.randomUUID().slice(0, 8)}`;
    const rec: MessageRecord = {
      ...last,
      id: `${last.id}-bench-${side}${i}`,
      order: last.order + 1,
      ts_ms: Date.now(),
      text: `bench append ${word} lands`,
      truncated: false,
    };
    const t0 = performance.now();
    const r = await store.publish([{
      kind: "append",
      key: skey,
      source: e.source,
      session_id: e.session_id,
      base: e.generations,
      segment: { records: [rec], marks: [] },
    }]);
    if (r.rejected.length > 0) throw new Error(`Append rejected: ${r.rejected[0]!.reason}`);
    return { word, t0 };
  };
  for (let i = 0; i < appends; i++) {
    const a = await append(i, "l");
    await until(
      async () => (await local.search({ q: a.word, complete: true })).groups.length > 0,
      10_000,
    );
    localMs.push(performance.now() - a.t0);
    const b = await append(i, "t");
    const p0 = performance.now();
    await publisher.publish();
    publishMs.push(performance.now() - p0);
    await until(async () => (await team.search({ q: b.word })).groups.length > 0, 30_000);
    teamMs.push(performance.now() - b.t0);
  }
  console.log(
    JSON.stringify({ team: stats(teamMs), local: stats(localMs), publish: stats(publishMs) }),
  );
} finally {
  await writerDb.close();
  await readerDb.close();
}
