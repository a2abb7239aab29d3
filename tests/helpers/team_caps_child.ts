/**
 * The reader side of reliability-plan H6, in a process of its own so its memory is its
 * own: opens the team database at argv[0], then (after a warm-up search of another word,
 * which pays for module loading and compilation, and a forced GC: run with
 * --v8-flags=--expose-gc) runs team search for the oversized record's word and loads the
 * remote session, and prints one JSON line: the RSS growth of those two reads, their
 * response bytes, and the facts the test checks (cut title, truncated hit and record).
 */
import {
  createTeamSearch,
  loadRemoteSession,
  openTeamDb,
  parseTeamUrl,
} from "../../lib/team/mod.ts";
import { RECORD_TEXT_CAP_BYTES } from "../../lib/message_search/mod.ts";

const gc = (globalThis as { gc?: () => void }).gc;
const db = await openTeamDb(parseTeamUrl(Deno.args[0]!));
try {
  const search = createTeamSearch({ db, cursorKey: new Uint8Array(32), windowDays: null });
  await search.search({ q: "normal", complete: true });
  gc?.();
  const rss0 = Deno.memoryUsage().rss;
  const page = await search.search({ q: "hostilebigword", complete: true });
  const remote = await loadRemoteSession(db, { machine: "hostile", sessionKey: "codex:huge" });
  const rss1 = Deno.memoryUsage().rss;
  const g = page.groups[0];
  const big = remote.records.find((r) => r.record_id === "huge-r0");
  const enc = new TextEncoder();
  console.log(JSON.stringify({
    gc: gc !== undefined,
    rssDeltaMb: (rss1 - rss0) / (1024 * 1024),
    responseBytes: enc.encode(JSON.stringify(page)).length +
      enc.encode(JSON.stringify(remote)).length,
    groups: page.groups.length,
    titleCut: !!g && g.title!.length <= 201 && g.title!.endsWith("…"),
    hitTruncated: g?.hits[0]?.truncated === true,
    recordCapped: !!big && enc.encode(big.text).length <= RECORD_TEXT_CAP_BYTES && big.truncated,
    remoteTitleCut: remote.meta.title?.endsWith("…") === true,
  }));
} finally {
  await db.close();
}
