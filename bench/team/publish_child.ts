/**
 * One simulated machine publishing its store into the team database (bench:team):
 *   deno run -A bench/team/publish_child.ts <store-root> <machine> <team-url>
 * Prints one JSON line: records inserted, batches, wall ms, peak RSS. The production
 * publisher (lib/team createPublisher) over a real store; nothing here is bench-specific
 * but the timing.
 */
import { openStore, PARSER_VERSION } from "../../lib/message_search/mod.ts";
import { createPublisher, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { memory } from "../harness.ts";

const [root, machine, url] = Deno.args;
if (!root || !machine || !url) {
  throw new RangeError("Usage: publish_child.ts <store> <machine> <url>");
}
const store = await openStore({ root, parserVersion: PARSER_VERSION, windowDays: null });
const db = await openTeamDb(parseTeamUrl(url));
try {
  const publisher = createPublisher({ db, store, machine, binaryVersion: "bench" });
  const t = performance.now();
  const r = await publisher.publish();
  const ms = performance.now() - t;
  console.log(JSON.stringify({ machine, ms, report: r, peakRss: memory().peak }));
} finally {
  await db.close();
}
