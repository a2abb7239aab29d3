/**
 * Team queries beside the local engine (bench:team):
 *   deno run -A bench/team/query_child.ts <team-url> <full-store> <rounds>
 * For each needle kind of the local bench plus a 2-character one:
 *  - team: createTeamSearch over the replica every machine published (the interactive
 *    request, time budget on): warm p50/p95/max over `rounds` rounds, the page's state;
 *  - local: the local engine over the full (unsplit) store, same request: the same-run
 *    baseline;
 *  - counts: both engines paged to the end with `complete: true` — groups (sessions) and
 *    total hits summed over every page — must be identical (the union of the machines IS
 *    the full store). Sessions are compared by session key (machine names are the team's
 *    only addition).
 * Prints one JSON line.
 */
import {
  createSearchEngine,
  openStore,
  PARSER_VERSION,
  type SearchRequest,
} from "../../lib/message_search/mod.ts";
import { createTeamSearch, openTeamDb, parseTeamUrl } from "../../lib/team/mod.ts";
import { NEEDLES } from "../corpus/mod.ts";
import { memory, stats } from "../harness.ts";
import { QUERIES } from "../phase_query.ts";

const [url, fullRoot, roundsArg] = Deno.args;
if (!url || !fullRoot) throw new RangeError("Usage: query_child.ts <url> <full-store> [rounds]");
const rounds = Number(roundsArg ?? 25);
/** The 2-character needle kind the issue names (no trigram: the newest-first plan). */
export const TWO_CHAR = "qu";
const kinds: [string, string][] = [...QUERIES, ["2char", TWO_CHAR]];
void NEEDLES;

const key = new Uint8Array(32).fill(9);
const db = await openTeamDb(parseTeamUrl(url), { max: 4 });
const store = await openStore({
  root: fullRoot,
  parserVersion: PARSER_VERSION,
  windowDays: null,
  // As the daemon opens it: one parse per manifest revision, not one per query.
  cacheReads: true,
});
const local = createSearchEngine({ store, windowDays: null, cursorKey: key });
const team = createTeamSearch({ db, cursorKey: key, windowDays: null });

type Engine = {
  search(
    r: SearchRequest,
  ): Promise<
    {
      state: string;
      partial_reason?: string;
      groups: { session_key: string; total_hits: number }[];
      cursor: string | null;
    }
  >;
};

async function timed(e: Engine, q: string) {
  // Warm: the first answers fill caches (the arena locally, shared buffers on the server).
  for (let i = 0; i < 3; i++) await e.search({ q });
  const ms: number[] = [];
  let last = await e.search({ q });
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    last = await e.search({ q });
    ms.push(performance.now() - t);
  }
  return {
    ...stats(ms),
    state: last.state + (last.partial_reason ? `:${last.partial_reason}` : ""),
    groups: last.groups.length,
  };
}

async function census(e: Engine, q: string) {
  const sessions = new Map<string, number>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await e.search({ q, complete: true, limit: 100, cursor });
    for (const g of r.groups) sessions.set(g.session_key, g.total_hits);
    cursor = r.cursor;
    pages++;
  } while (cursor !== null && pages < 1000);
  let hits = 0;
  for (const h of sessions.values()) hits += h;
  return { sessions, hits };
}

const out: Record<string, unknown> = {};
try {
  for (const [name, q] of kinds) {
    const t = await timed(team as Engine, q);
    const l = await timed(local as Engine, q);
    const ct = await census(team as Engine, q);
    const cl = await census(local as Engine, q);
    let same = ct.sessions.size === cl.sessions.size && ct.hits === cl.hits;
    for (const [k, h] of cl.sessions) if (ct.sessions.get(k) !== h) same = false;
    out[name] = {
      team: t,
      local: l,
      counts: {
        teamSessions: ct.sessions.size,
        teamHits: ct.hits,
        localSessions: cl.sessions.size,
        localHits: cl.hits,
        identical: same,
      },
    };
    console.error(
      `bench:team: ${name} team p95 ${t.p95} ms (local ${l.p95}), counts ${
        same ? "identical" : "DIFFER"
      }`,
    );
  }
  console.log(JSON.stringify({ queries: out, peakRss: memory().peak }));
} finally {
  await db.close();
}
