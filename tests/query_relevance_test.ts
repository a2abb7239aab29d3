/**
 * The relevance order (issue 27) over a real store: sessions published through
 * store.publish, searched by the real engine with `sort: "relevance"`. Covered: a
 * natural-language question finds the session whose messages hold its words spread over
 * a user and an assistant turn, ahead of newer sessions holding only some of them; exact
 * sessions rank before related ones and related ones say how they matched (k of n,
 * spread, loose); a question of only common words searches nothing and says so; `cafe`
 * finds `café` only as related; a quoted phrase stays exact; rank cursors page without a
 * repeat or a gap; and the newest order is untouched (no `relevance`, same groups).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  hash16Of,
  type MessageRecord,
  openStore,
  type ShardUpdate,
  type Store,
} from "../lib/message_search/mod.ts";
import { createSearchEngine, type SearchResponse } from "../lib/message_search/query/mod.ts";
import { withTempDir } from "./helpers/temp.ts";

const NOW = Date.now();
const DAY = 86_400_000;

/** A session: [role, text] pairs, its newest message `ageDays` old. */
interface S {
  id: string;
  ageDays: number;
  msgs: ["user" | "assistant", string][];
}

async function publish(store: Store, sessions: S[]): Promise<void> {
  const batch: ShardUpdate[] = sessions.map((s) => {
    const newest = NOW - s.ageDays * DAY;
    const recs: MessageRecord[] = s.msgs.map(([role, text], i) => ({
      id: `${s.id}-${i}`,
      source: "claude-code",
      session_id: s.id,
      role,
      ts_ms: newest - (s.msgs.length - 1 - i) * 60_000,
      text,
      truncated: false,
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: `${s.id}-${i}`,
        file: `${s.id}.jsonl`,
        hash: hash16Of(text),
      },
      order: i,
      generation: 0,
      subagent: false,
    }));
    return {
      kind: "replace",
      key: `claude-code:${s.id}`,
      source: "claude-code",
      session_id: s.id,
      base: null,
      segment: { records: recs, marks: [] },
      cursors: {},
      source_watermark: recs.length,
      source_fingerprint: "fp",
      meta: {
        project: "/w",
        title: s.msgs[0]![1].slice(0, 60),
        parent_session_id: null,
        files: [],
      },
    };
  });
  await store.publish(batch);
}

const CORPUS: S[] = [
  {
    id: "target",
    ageDays: 20,
    msgs: [
      ["user", "The operator hangs forever when two reconcilers run at once."],
      ["assistant", "It is a deadlock: both reconcilers take the lease lock in Kubernetes."],
      ["user", "Great, the fix with a single lock order works."],
    ],
  },
  {
    id: "ingress",
    ageDays: 1,
    msgs: [["user", "Kubernetes ingress needs a TLS secret"], ["assistant", "Add the secret."]],
  },
  {
    id: "pydeadlock",
    ageDays: 2,
    msgs: [["user", "A deadlock in python threading"], ["assistant", "Use a timeout."]],
  },
  {
    id: "exact",
    ageDays: 40,
    msgs: [["user", "kubernetes deadlock fix: the lease lock order"], ["assistant", "Done."]],
  },
  {
    id: "cafe",
    ageDays: 3,
    msgs: [["user", "The café menu renders twice"], ["assistant", "StrictMode double render."]],
  },
  {
    id: "resume",
    ageDays: 4,
    msgs: [["user", "Upload my résumé to Zürich"], ["assistant", "Uploaded."]],
  },
  {
    id: "marmot-exact",
    ageDays: 5,
    msgs: [["user", "the marmot lantern glows"], ["assistant", "ok"]],
  },
  {
    id: "marmot-loose",
    ageDays: 6,
    msgs: [["user", "a lántern for the mármot"], ["assistant", "ok"]],
  },
  ...Array.from({ length: 30 }, (_, i): S => ({
    id: `noise-${i}`,
    ageDays: i % 10,
    msgs: [
      ["user", `Please fix the failing build number ${i} and the lint error`],
      ["assistant", `Fixed the build ${i}: a missing import.`],
    ],
  })),
];

async function withEngine(
  fn: (search: (q: string, o?: object) => Promise<SearchResponse>) => Promise<void>,
) {
  await withTempDir(async (root) => {
    const store = await openStore({ root: join(root, "v1"), parserVersion: 1, windowDays: null });
    await publish(store, CORPUS);
    const engine = createSearchEngine({
      store,
      windowDays: null,
      cursorKey: crypto.getRandomValues(new Uint8Array(32)),
      timeBudgetMs: 60_000,
    });
    await fn((q, o = {}) => engine.search({ q, sort: "relevance", ...o }));
  });
}

const keys = (r: SearchResponse) => r.groups.map((g) => g.session_key.slice("claude-code:".length));

Deno.test("relevance: a question finds the session that answers it, exact before related", async () => {
  await withEngine(async (search) => {
    const r = await search("how did we fix the deadlock in kubernetes?");
    assert.equal(r.state, "ready");
    assert.deepEqual(r.query_terms?.kept, ["fix", "deadlock", "kubernetes"]);
    assert.ok(r.query_terms?.dropped.includes("how"));
    // "exact" holds all three in one message; "target" holds them across messages.
    assert.deepEqual(keys(r).slice(0, 2), ["exact", "target"]);
    assert.equal(r.groups[0]!.relevance?.tier, "exact");
    const target = r.groups[1]!.relevance!;
    assert.deepEqual(
      { tier: target.tier, spread: target.spread, m: target.terms_matched, n: target.terms_total },
      { tier: "related", spread: true, m: 3, n: 3 },
    );
    // Newer sessions with one word rank below the one that answers the question.
    assert.ok(keys(r).indexOf("ingress") > 1 && keys(r).indexOf("pydeadlock") > 1);
    for (const g of r.groups.slice(2)) assert.equal(g.relevance?.tier, "related");
    // The best message comes first among the hits, its matched words highlighted.
    const hit = r.groups[1]!.hits[0]!;
    assert.ok(hit.ranges.length >= 2, JSON.stringify(hit));
    assert.ok(r.total_sessions! >= r.groups.length);
  });
});

Deno.test("relevance: only common words, accents, phrases and paging", async () => {
  await withEngine(async (search) => {
    const common = await search("how did we do that");
    assert.equal(common.query_terms?.only_common, true);
    assert.deepEqual(common.groups, []);
    assert.equal(common.state, "ready");

    const cafe = await search("cafe");
    assert.deepEqual(keys(cafe), ["cafe"]);
    assert.deepEqual(
      { tier: cafe.groups[0]!.relevance!.tier, loose: cafe.groups[0]!.relevance!.loose },
      { tier: "related", loose: true },
    );
    const zurich = await search("zurich resume");
    assert.deepEqual(keys(zurich), ["resume"]);
    assert.equal(zurich.groups[0]!.relevance!.loose, true);
    // A word with an accent inside it, beside an exact match of the same word elsewhere.
    const marmot = await search("marmot lantern");
    assert.deepEqual(keys(marmot).sort(), ["marmot-exact", "marmot-loose"]);
    const loose = marmot.groups.find((g) => g.session_key.endsWith("marmot-loose"))!.relevance!;
    assert.deepEqual({ tier: loose.tier, loose: loose.loose, spread: loose.spread }, {
      tier: "related",
      loose: true,
      spread: false,
    });
    assert.equal(cafe.groups[0]!.relevance!.spread, false, "one message holds the one word");
    // The accented words are highlighted too: every range covers a whole original word.
    const lh = marmot.groups.find((g) => g.session_key.endsWith("marmot-loose"))!.hits[0]!;
    const bytes = new TextEncoder().encode("a lántern for the mármot");
    assert.deepEqual(
      lh.ranges.map(([a, b]) => new TextDecoder().decode(bytes.subarray(a, b))),
      ["lántern", "mármot"],
    );
    const accented = await search("café");
    assert.equal(accented.groups[0]!.relevance!.tier, "exact");

    const phrase = await search('"lease lock order"');
    assert.deepEqual(keys(phrase), ["exact"]);

    // Rank cursors: one group a page, every ranked session once.
    const all = await search("build fix", { limit: 50 });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 60; i++) {
      const p: SearchResponse = await search("build fix", { limit: 7, cursor });
      seen.push(...keys(p));
      cursor = p.cursor;
      if (!cursor) break;
    }
    assert.deepEqual(seen, keys(all));
    assert.equal(new Set(seen).size, seen.length);
  });
});

Deno.test("relevance leaves the newest order exactly as it was", async () => {
  await withEngine(async (search) => {
    const newest = await search("deadlock", { sort: "newest" });
    assert.deepEqual(keys(newest), ["pydeadlock", "target", "exact"]);
    assert.ok(newest.groups.every((g) => g.relevance === undefined));
    assert.equal(newest.query_terms, undefined);
    const dflt = await search("deadlock", { sort: undefined });
    assert.deepEqual(keys(dflt), keys(newest));
  });
});
