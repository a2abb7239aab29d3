/**
 * Exact search with the store's lexicon (lexicon_filter.ts) answers exactly what it
 * answers without one — on random texts, for needles cut anywhere from them (parts of
 * tokens, runs over separators, accents, CJK) and for absent ones, with some sessions
 * appended after the lexicon was built (generations it does not cover) — and a rare word
 * opens only the generations that hold it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore, type Store } from "../store/mod.ts";
import { createSearchEngine } from "./engine.ts";
import { rec } from "./_test_support.ts";
import type { SearchResponse } from "./types.ts";

const WORDS = (
  "the deadlock kubernetes anemometer anemometers café cafe\u0301 Zürich 東京都 fix prefix " +
  "node.js e2e-test naïve ß İstanbul 😀 pool timeout connection flaky migration"
).split(" ");

/** A small deterministic generator (the test must replay). */
function lcg(seed: number) {
  let x = seed >>> 0;
  return (n: number) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

function sentence(r: (n: number) => number): string {
  const out: string[] = [];
  const n = 3 + r(12);
  for (let i = 0; i < n; i++) {
    const w = r(3) === 0 ? `w${r(400)}` : WORDS[r(WORDS.length)]!;
    out.push(w + [" ", " ", ", ", ". ", "/", "、"][r(6)]);
  }
  return out.join("");
}

async function withWorld(
  fn: (o: { store: Store; bare: Store; loads: { n: number }; texts: string[] }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "intendant-lexq-" });
  try {
    const real = await openStore({ root: join(dir, "v2"), parserVersion: 1, windowDays: null });
    const r = lcg(7);
    const texts: string[] = [];
    const publish = async (s: number, kind: "replace" | "append", base: string[] | null) => {
      const sid = `s${s}`;
      const records = Array.from({ length: 1 + r(4) }, (_, i) => {
        const t = s === 3 && kind === "replace" && i === 0
          ? "the zephyrquartz sensor"
          : sentence(r);
        texts.push(t);
        return rec(i + (kind === "append" ? 10 : 0), t, {
          session_id: sid,
          ts_ms: 100_000 * s + i + (kind === "append" ? 50 : 0),
        });
      });
      const res = await real.publish([{
        kind,
        key: `pi:${sid}`,
        source: "pi",
        session_id: sid,
        base,
        segment: { records, marks: [] },
        source_watermark: 1,
        source_fingerprint: "fp",
        cursors: {},
        meta: { project: null, title: null, parent_session_id: null, files: [] },
      }]);
      assert.deepEqual(res.rejected, []);
    };
    for (let s = 0; s < 40; s++) await publish(s, "replace", null);
    assert.equal((await real.refreshLexicon()).covered, 40);
    // Appended after the build: these sessions hold a generation the lexicon does not cover.
    const m = await real.readManifest();
    for (const s of [5, 17, 30]) await publish(s, "append", m.sessions[`pi:s${s}`]!.generations);
    const loads = { n: 0 };
    const wrap = (o: Partial<Store>) =>
      new Proxy(real, {
        get(t, p) {
          if (p in o) return o[p as keyof Store];
          const v = Reflect.get(t, p);
          return typeof v === "function" ? v.bind(t) : v;
        },
      });
    const store = wrap({
      loadSegment: (name, o) => {
        loads.n++;
        return real.loadSegment(name, o);
      },
    });
    const bare = wrap({ loadLexicon: () => Promise.resolve(null) });
    await fn({ store, bare, loads, texts });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const engine = (store: Store) =>
  createSearchEngine({
    store,
    windowDays: null,
    cursorKey: new Uint8Array(32).fill(9),
    timeBudgetMs: 60_000,
  });

function shape(r: SearchResponse) {
  return {
    state: r.state,
    total: r.total_sessions,
    groups: r.groups.map((
      g,
    ) => [g.session_key, g.total_hits, g.hits.map((h) => [h.record_id, h.snippet])]),
  };
}

Deno.test("exact search answers the same with and without the lexicon", () =>
  withWorld(async ({ store, bare, texts }) => {
    const withLex = engine(store);
    const without = engine(bare);
    const r = lcg(11);
    const needles = ["anemometer", "nemometer", "qqxjvzzk", "w17", "w3", "東京", "café", "js e2e"];
    for (let i = 0; i < 150; i++) {
      const t = texts[r(texts.length)]!;
      const a = r(Math.max(1, t.length));
      needles.push(t.slice(a, a + 1 + r(14)));
    }
    let narrowed = 0;
    for (const q of needles) {
      if (q.trim() === "" || /["\\]/.test(q)) continue;
      const req = { q: `"${q}"`, complete: true, limit: 100 } as const;
      // A needle the parser refuses (one Latin letter) is refused by both.
      const refused = await without.search(req).then(() => false, (e) => e instanceof RangeError);
      if (refused) continue;
      const a = await withLex.search(req);
      const b = await without.search(req);
      assert.deepEqual(shape(a), shape(b), `needle ${JSON.stringify(q)}`);
      if (a.groups.length < 40) narrowed++;
    }
    assert.ok(narrowed > 50, "most needles are selective (the test exercises skipping)");
  }));

function rankShape(r: SearchResponse) {
  return {
    state: r.state,
    total: r.total_sessions,
    groups: r.groups.map((g) => [
      g.session_key,
      g.relevance?.tier,
      g.relevance?.score,
      g.relevance?.terms_matched,
      g.relevance?.loose,
      g.hits.map((h) => h.record_id),
    ]),
  };
}

Deno.test("relevance answers the same with and without the lexicon, accents and suffixes too", () =>
  withWorld(async ({ store, bare }) => {
    const withLex = engine(store);
    const without = engine(bare);
    const r = lcg(5);
    const questions = [
      "how did we fix the deadlock in kubernetes",
      "cafe zurich",
      "zurich",
      "istanbul",
      "deadlocks",
      "anemometers",
      "qqxjvzzk nothing",
      "connection timeouts",
      "東京",
      "prefixes node.js",
    ];
    for (let i = 0; i < 30; i++) {
      questions.push(`w${r(400)} ${WORDS[r(WORDS.length)]} ${r(2) ? `w${r(400)}` : ""}`.trim());
    }
    for (const q of questions) {
      const req = { q, sort: "relevance", complete: true, limit: 50 } as const;
      const a = await withLex.search(req);
      const b = await without.search(req);
      assert.deepEqual(rankShape(a), rankShape(b), `question ${JSON.stringify(q)}`);
    }
    // The accent-insensitive fallback still finds what only it can find.
    const z = await withLex.search({ q: "zurich", sort: "relevance", complete: true });
    assert.ok(z.groups.length > 0 && z.groups.every((g) => g.relevance?.loose === true));
  }));

Deno.test("a rare word opens only the generations that can hold it", () =>
  withWorld(async ({ store, loads }) => {
    const e = engine(store);
    const res = await e.search({ q: "zephyrquartz", complete: true });
    assert.equal(res.state, "ready");
    assert.deepEqual(res.groups.map((g) => g.session_key), ["pi:s3"]);
    assert.equal(res.total_sessions, 1);
    // s3's own generation, plus the three appended generations the lexicon does not cover
    // (their sessions fall back to summaries, which may or may not rule them out).
    assert.ok(loads.n >= 1 && loads.n <= 1 + 3 * 2, `opened ${loads.n} generations`);
    assert.ok((e.stats().lexicon_bytes ?? 0) > 0);
  }));
