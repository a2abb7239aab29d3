/**
 * The message search query engine over real stores: every source's fixture home indexed
 * by the real indexer, native sessions written by the real SessionLog writer, and a
 * synthetic multi-source corpus published through store.publish. Results are compared
 * with an independent oracle (naive fold + regex boundary rule over every stored record,
 * deriveActive for supersession) across queries, filters and pages; then cursors,
 * budgets, corruption, eviction and the window. The last test builds a 50,000-record
 * corpus and prints cold and warm latency figures (no timing assertions).
 * One file on purpose: the oracle and corpus builders are shared by every section.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  decodeLocator,
  decodeRecords,
  deriveActive,
  hash16Of,
  type ManifestEntry,
  type MessageRecord,
  openStore,
  type ShardUpdate,
  type Source,
  SOURCES,
  type Store,
  type SupersessionMark,
} from "../lib/message_search/mod.ts";
import {
  createSearchEngine,
  CursorExpiredError,
  fold,
  InvalidCursorError,
  parseQuery,
  type SearchEngineOptions,
  type SearchGroup,
  type SearchRequest,
  type SearchResponse,
} from "../lib/message_search/query/mod.ts";
import { buildAllFixtures } from "./fixtures/all.ts";
import { prng } from "./helpers/store_fixtures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const DAY = 86_400_000;
const enc = new TextEncoder();
const dec = new TextDecoder();

// ---------------------------------------------------------------- oracle

interface Snap {
  key: string;
  entry: ManifestEntry;
  recs: MessageRecord[];
  active: boolean[];
}

async function snapshot(store: Store): Promise<Snap[]> {
  const m = await store.readManifest();
  const out: Snap[] = [];
  for (const [key, entry] of Object.entries(m.sessions)) {
    const recs: MessageRecord[] = [];
    const marks: SupersessionMark[] = [];
    for (const g of entry.generations) {
      const s = await store.loadSegment(g);
      recs.push(...decodeRecords(s));
      marks.push(...s.marks);
    }
    out.push({ key, entry, recs, active: deriveActive(recs, marks) });
  }
  return out;
}

/** Independent boundary rule: the folded unit after a match is no mark / medial-final jamo. */
function oracleHas(text: string, needle: string): boolean {
  const f = fold(text);
  for (let p = f.indexOf(needle); p >= 0; p = f.indexOf(needle, p + 1)) {
    const next = f.codePointAt(p + needle.length);
    if (next === undefined) return true;
    if (/\p{M}/u.test(String.fromCodePoint(next)) || (next >= 0x1160 && next <= 0x11ff)) continue;
    return true;
  }
  return false;
}

interface Expected {
  key: string;
  best: number;
  total: number;
  ids: string[];
}

function oracle(snaps: Snap[], req: SearchRequest, cutoff: number | null = null): Expected[] {
  const { needles } = parseQuery(req.q);
  const project = req.project?.trim() ? fold(req.project.trim()) : null;
  const out: Expected[] = [];
  for (const s of snaps) {
    if (req.source?.length && !req.source.includes(s.entry.source)) continue;
    if (project && !fold(s.entry.meta.project ?? "\u0000").includes(project)) continue;
    const hits: { ts: number; at: number; id: string }[] = [];
    s.recs.forEach((r, at) => {
      if (req.role?.length && !req.role.includes(r.role)) return;
      if (!s.active[at] && !req.include_superseded) return;
      if (req.since !== undefined && r.ts_ms < req.since) return;
      if (req.until !== undefined && r.ts_ms > req.until) return;
      if (cutoff !== null && r.ts_ms < cutoff) return;
      if (needles.every((n) => oracleHas(r.text, n))) hits.push({ ts: r.ts_ms, at, id: r.id });
    });
    if (hits.length === 0) continue;
    hits.sort((a, b) => b.ts - a.ts || b.at - a.at);
    out.push({
      key: s.key,
      best: hits[0]!.ts,
      total: hits.length,
      ids: hits.slice(0, 3).map((h) => h.id),
    });
  }
  return out.sort((a, b) => b.best - a.best || (a.key < b.key ? -1 : 1));
}

function summary(groups: SearchGroup[]): Expected[] {
  return groups.map((g) => ({
    key: g.session_key,
    best: g.best_ts_ms,
    total: g.total_hits,
    ids: g.hits.map((h) => h.record_id),
  }));
}

/** Follows cursors to the end; every page must be ready or budget-partial. */
async function allPages(
  search: (r: SearchRequest) => Promise<SearchResponse>,
  req: SearchRequest,
): Promise<{ groups: SearchGroup[]; pages: SearchResponse[] }> {
  const pages: SearchResponse[] = [];
  let cursor: string | null = null;
  do {
    const page: SearchResponse = await search({ ...req, cursor });
    assert.notEqual(page.partial_reason, "timeout");
    pages.push(page);
    cursor = page.cursor;
    assert.ok(pages.length < 500, "paging terminates");
  } while (cursor !== null);
  return { groups: pages.flatMap((p) => p.groups), pages };
}

function key32(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

// ---------------------------------------------------------------- corpora

async function indexFixtures(root: string): Promise<Store> {
  const env = hermeticEnv(root, (await buildAllFixtures(root)).env);
  const { store, indexer } = await createMessageIndex(resolveConfig(env, { cwd: root }));
  await indexer.sweep();
  return store;
}

const COMMON =
  "the of and to a in is it that for on with as this be are was at by from or an not we you"
    .split(" ");
const TECH = ("error build test file function return value config session cookie login parser " +
  "module server request response cache index query search token branch commit merge deploy " +
  "handler router schema migration database timeout retry buffer stream socket worker thread " +
  "lock queue event listener promise async await import export type interface class method").split(
    " ",
  );

/** Realistic-ish prose: Zipf-skewed common, technical and long-tail words, some Unicode. */
function corpusText(rnd: () => number, tail: string[]): string {
  const r = rnd();
  const n = r < 0.6
    ? 5 + Math.floor(rnd() * 40)
    : r < 0.97
    ? 40 + Math.floor(rnd() * 200)
    : 500 + Math.floor(rnd() * 2500);
  const w: string[] = [];
  for (let i = 0; i < n; i++) {
    const x = rnd();
    if (x < 0.35) w.push(COMMON[Math.floor(rnd() * rnd() * COMMON.length)]!);
    else if (x < 0.75) w.push(TECH[Math.floor(rnd() * rnd() * TECH.length)]!);
    else if (x < 0.751) w.push("deadline");
    else if (x < 0.752) w.push("résumé");
    else if (x < 0.7522) w.push("東京");
    else w.push(tail[Math.floor(rnd() ** 3 * tail.length)]!);
  }
  if (rnd() < 0.01) w.splice(Math.floor(rnd() * w.length), 0, "the", "session", "cookie");
  if (rnd() < 0.0002) w.push("zanzibarquux");
  const s = w.join(" ");
  return s[0]!.toUpperCase() + s.slice(1) + ".";
}

/**
 * Publishes a synthetic corpus of about `records` records over every source: newest
 * records spread over `days`, 15% of sessions split into two segments (an append), 10%
 * with a supersession mark in the last segment. Returns the session count.
 */
async function writeCorpus(
  store: Store,
  o: { records: number; now: number; days: number; seed?: number },
): Promise<number> {
  const rnd = prng(o.seed ?? 42);
  const syl = "ka lo mi ne ru sa te vo xi za pe di fu go ha ju ko li mo nu".split(" ");
  const tail = Array.from({ length: 3000 }, () => {
    let w = "";
    for (let j = 0; j < 2 + Math.floor(rnd() * 3); j++) w += syl[Math.floor(rnd() * syl.length)];
    return w;
  });
  let total = 0;
  let sessions = 0;
  let batch: ShardUpdate[] = [];
  const appends: { u: ShardUpdate; recs: MessageRecord[]; marks: SupersessionMark[] }[] = [];
  while (total < o.records) {
    const sid = `sess-${String(sessions).padStart(5, "0")}`;
    const source = SOURCES[sessions % SOURCES.length]!;
    const r = rnd();
    // Small corpora still get many sessions: one session holds at most 5% of the records.
    const big = Math.max(40, Math.floor(o.records / 20));
    const n = Math.min(
      o.records - total,
      r < 0.7
        ? 5 + Math.floor(rnd() * 40)
        : r < 0.97
        ? 40 + Math.floor(rnd() * 300)
        : Math.min(big, 1000 + Math.floor(rnd() * 1500)),
    );
    const newest = o.now - Math.floor(rnd() * o.days * DAY);
    const recs: MessageRecord[] = Array.from({ length: n }, (_, i) => {
      const text = corpusText(rnd, tail);
      return {
        id: `${sid}-${i}`,
        source,
        session_id: sid,
        role: i % 2 ? "assistant" : "user",
        ts_ms: newest - (n - 1 - i) * 30_000,
        text,
        truncated: false,
        locator: {
          v: 1,
          kind: "external_record_id",
          record_id: `${sid}-${i}`,
          file: `${sid}.jsonl`,
          hash: hash16Of(text),
        },
        order: i,
        generation: 0,
        subagent: rnd() < 0.05,
      };
    });
    total += n;
    sessions++;
    const split = n > 10 && rnd() < 0.15 ? Math.floor(n * 0.8) : n;
    const marks: SupersessionMark[] = n > 4 && rnd() < 0.1
      ? [{ kind: "record_ids", after_order: n, ids: [recs[n - 2]!.id, recs[n - 3]!.id] }]
      : [];
    const u: ShardUpdate = {
      kind: "replace",
      key: `${source}:${sid}`,
      source,
      session_id: sid,
      base: null,
      segment: { records: recs.slice(0, split), marks: split === n ? marks : [] },
      cursors: {},
      source_watermark: split,
      source_fingerprint: "fp",
      meta: {
        project: `/home/dev/proj-${sessions % 37}`,
        title: recs[0]!.text.slice(0, 60),
        parent_session_id: null,
        files: [],
      },
    };
    batch.push(u);
    if (split < n) appends.push({ u, recs: recs.slice(split), marks });
    if (batch.length >= 200) {
      await store.publish(batch);
      batch = [];
    }
  }
  if (batch.length) await store.publish(batch);
  const m = await store.readManifest();
  const more = appends.map(({ u, recs, marks }): ShardUpdate => ({
    kind: "append",
    key: u.key,
    source: u.source,
    session_id: u.session_id,
    base: m.sessions[u.key]!.generations,
    segment: { records: recs, marks },
    source_watermark: 1_000_000,
  }));
  for (let i = 0; i < more.length; i += 200) await store.publish(more.slice(i, i + 200));
  return sessions;
}

async function withCorpus(
  records: number,
  fn: (store: Store, now: number, root: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    const store = await openStore({ root: join(root, "v1"), parserVersion: 1, windowDays: null });
    const now = Date.now();
    await writeCorpus(store, { records, now, days: 10 });
    await fn(store, now, root);
  });
}

// ---------------------------------------------------------------- fixtures

Deno.test("search over every source's fixture home", async (t) => {
  await withTempDir(async (root) => {
    const store = await indexFixtures(root);
    const snaps = await snapshot(store);
    const byId = new Map<string, MessageRecord>();
    for (const s of snaps) for (const r of s.recs) byId.set(`${s.key} ${r.id}`, r);
    const recordOf = (g: SearchGroup, id: string) => byId.get(`${g.session_key} ${id}`)!;
    const engine = createSearchEngine({
      store,
      windowDays: 14,
      cursorKey: key32(),
      timeBudgetMs: 60_000,
    });
    const search = (r: SearchRequest) => engine.search(r);
    const allTs = snaps.flatMap((s) => s.recs.map((r) => r.ts_ms)).sort((a, b) => a - b);
    const midTs = allTs[Math.floor(allTs.length / 2)]!;

    await t.step("every query, filter and page agrees with the oracle", async () => {
      const queries = [
        "café",
        "cafe\u0301",
        "CAFÉ",
        "cookie",
        "the cookie",
        '"the cookie"',
        "cookie redirect",
        "東京",
        '"登录 🍪"',
        "修复登录",
        "naïve",
        "login bug",
        "readme",
        "parser",
        "ça marche",
        "👍🏽",
        "the",
        "cafe",
        "가나",
        '"login handler"',
        "recursive descent",
      ];
      const filters: Partial<SearchRequest>[] = [
        {},
        { include_superseded: true },
        { source: ["pi", "kimi"] },
        { role: ["user"] },
        { role: ["assistant"], include_superseded: true },
        { project: "SHOP" },
        { since: midTs },
        { until: midTs },
        { source: ["codex"], since: midTs - DAY, until: midTs + DAY },
      ];
      let nonEmpty = 0;
      for (const q of queries) {
        for (const f of filters) {
          const req = { q, limit: 2, ...f };
          const { groups, pages } = await allPages(search, req);
          assert.deepEqual(summary(groups), oracle(snaps, req), JSON.stringify(req));
          for (const p of pages) assert.equal(p.state, "ready");
          if (groups.length > 0) nonEmpty++;
        }
      }
      assert.ok(nonEmpty > 80, `most combinations find something (${nonEmpty})`);
    });

    await t.step(
      "every page states the query's exact session total; empty pages suggest only what finds something",
      async () => {
        // "東": one CJK character is a word of its own (issue 25).
        const queries = ["café", "cookie", "the", "東京", "東", "cookie redirect", "zzznothing"];
        // Text said only in rewound (superseded) records: found only with them included.
        const rewoundOnly = snaps.flatMap((s) => s.recs.filter((_, i) => !s.active[i]))
          .flatMap((r) => r.text.split(/\s+/)).filter((w) => /^[a-z]{6,}$/.test(w))
          .find((w) => oracle(snaps, { q: w }).length === 0);
        assert.ok(rewoundOnly, "the fixtures hold a word said only in rewound messages");
        queries.push(rewoundOnly);
        // Words some filter rules out entirely: said in other sources only, or by one role.
        const words = [...new Set(snaps.flatMap((s) => s.recs.flatMap((r) => r.text.split(/\s+/))))]
          .filter((w) => /^[a-z]{6,}$/.test(w) && oracle(snaps, { q: w }).length > 0);
        const ruledOut = (f: Partial<SearchRequest>) =>
          words.find((w) => oracle(snaps, { q: w, ...f }).length === 0);
        for (const f of [{ source: ["pi", "kimi"] as Source[] }, { role: ["user" as const] }]) {
          const w = ruledOut(f);
          assert.ok(w, `a word ${JSON.stringify(f)} rules out`);
          queries.push(w);
        }
        const suggested = new Set<string>();
        const filters: Partial<SearchRequest>[] = [
          {},
          { include_superseded: true },
          { source: ["pi", "kimi"] },
          { role: ["user"] },
        ];
        for (const q of queries) {
          for (const f of filters) {
            const req = { q, limit: 2, ...f };
            const want = oracle(snaps, req).length;
            // A one-shot caller's count budget finishes on a store this small: every page
            // carries the total, the later pages included (the cursor carries what was shown).
            const complete = await allPages(search, { ...req, complete: true });
            for (const p of complete.pages) {
              assert.equal(p.total_sessions, want, JSON.stringify(req));
            }
            // A keystroke's smaller budget may stop short: then the total is absent, never wrong.
            const quick = await allPages(search, req);
            for (const p of quick.pages) {
              if (p.total_sessions !== undefined) assert.equal(p.total_sessions, want);
            }
            const first = complete.pages[0]!;
            if (want > 0) {
              assert.equal(first.suggestions, undefined, "a page with results suggests nothing");
              continue;
            }
            // Each suggestion names a widening that really finds sessions, with their count.
            const widened: [string, Partial<SearchRequest>][] = [
              ["include_superseded", { include_superseded: true }],
              ["all_sources", { source: undefined }],
              ["all_roles", { role: undefined }],
            ];
            for (const [name, w] of widened) {
              const applies = name === "include_superseded"
                ? !req.include_superseded
                : name === "all_sources"
                ? (req.source?.length ?? 0) > 0
                : (req.role?.length ?? 0) > 0;
              const n = applies ? oracle(snaps, { ...req, ...w }).length : 0;
              const got = first.suggestions?.[name as "all_roles"];
              if (n === 0) assert.equal(got, undefined, `${name} for ${JSON.stringify(req)}`);
              else {
                assert.deepEqual(
                  got,
                  { sessions: n, more: false },
                  `${name} ${JSON.stringify(req)}`,
                );
                suggested.add(name);
              }
            }
          }
        }
        // Every kind of suggestion was met, each against the oracle.
        assert.deepEqual([...suggested].sort(), ["all_roles", "all_sources", "include_superseded"]);
        assert.ok(oracle(snaps, { q: "東" }).length > 0, "the one-character query finds something");
      },
    );

    await t.step("highlight ranges decode to exactly the matched original text", async () => {
      const single = [
        "café",
        "cafe\u0301",
        "東京",
        '"登录 🍪"',
        "naïve",
        "修复登录",
        "👍🏽",
        "ça marche",
        "the cookie",
      ];
      for (const q of [...single, "cookie redirect", "café cookie 修复"]) {
        const { needles } = parseQuery(q);
        const r = await search({ q, include_superseded: true, limit: 100 });
        assert.ok(r.groups.length > 0, q);
        for (const g of r.groups) {
          for (const h of g.hits) {
            const rec = recordOf(g, h.record_id);
            const bytes = enc.encode(rec.text);
            assert.ok(h.ranges.length >= needles.length || h.ranges.length > 0);
            for (const [a, b] of h.ranges) {
              const piece = dec.decode(bytes.subarray(a, b));
              assert.equal(enc.encode(piece).length, b - a, "ranges cut whole characters");
              if (needles.length === 1) assert.equal(fold(piece), needles[0], `${q} → ${piece}`);
              else assert.ok(needles.some((n) => fold(piece).includes(n)));
            }
            for (const n of needles) {
              assert.ok(
                h.ranges.some(([a, b]) => fold(dec.decode(bytes.subarray(a, b))).includes(n)),
              );
            }
            const sb = enc.encode(h.snippet);
            assert.ok(sb.length <= 280);
            assert.equal(
              dec.decode(
                bytes.subarray(h.snippet_offset_bytes, h.snippet_offset_bytes + sb.length),
              ),
              h.snippet,
            );
            const [a0] = h.ranges[0]!;
            assert.ok(a0 >= h.snippet_offset_bytes && a0 < h.snippet_offset_bytes + sb.length);
            assert.deepEqual(decodeLocator(h.locator), rec.locator);
            assert.equal(h.role, rec.role);
            assert.equal(h.ts_ms, rec.ts_ms);
            assert.equal(h.seq, rec.seq ?? null);
            assert.equal(h.truncated, rec.truncated);
            assert.equal(h.subagent, rec.subagent);
          }
        }
      }
    });

    await t.step(
      '"cafe" never matches café; café matches NFC and NFD originals alike',
      async () => {
        const naive = snaps.flatMap((s) => s.recs).filter((r) => fold(r.text).includes("cafe"));
        assert.ok(naive.length > 5, "a plain folded substring would match café");
        assert.equal((await search({ q: "cafe", include_superseded: true })).groups.length, 0);
        const nfc = await search({ q: "café", include_superseded: true, limit: 100 });
        const nfd = await search({ q: "cafe\u0301", include_superseded: true, limit: 100 });
        assert.deepEqual(summary(nfd.groups), summary(nfc.groups));
        const texts = nfc.groups.flatMap((g) => g.hits.map((h) => recordOf(g, h.record_id).text));
        assert.ok(texts.some((x) => x.includes("e\u0301")), "an NFD original is found");
        assert.ok(texts.some((x) => x.includes("\u00e9")), "an NFC original is found");
      },
    );

    await t.step("words AND within one message; a quoted phrase is one needle", async () => {
      const and = await search({ q: "cookie redirect", include_superseded: true, limit: 100 });
      const cookie = await search({ q: "cookie", include_superseded: true, limit: 100 });
      const sum = (r: SearchResponse) => r.groups.reduce((n, g) => n + g.total_hits, 0);
      assert.ok(sum(and) > 0 && sum(and) < sum(cookie));
      for (const g of and.groups) {
        for (const h of g.hits) {
          const f = fold(recordOf(g, h.record_id).text);
          assert.ok(f.includes("cookie") && f.includes("redirect"));
        }
      }
      const words = await search({ q: "the cookie", include_superseded: true, source: ["codex"] });
      const phrase = await search({
        q: '"the cookie"',
        include_superseded: true,
        source: ["codex"],
      });
      const codex = "codex:019e3010-6b78-7ed1-a3dd-53e32ce86b89";
      const w = words.groups.find((g) => g.session_key === codex)!;
      const p = phrase.groups.find((g) => g.session_key === codex)!;
      // "Found it: the session cookie is set…" has both words but not the phrase.
      assert.equal(w.total_hits, p.total_hits + 1);
      for (const h of p.hits) assert.ok(fold(recordOf(p, h.record_id).text).includes("the cookie"));
    });

    await t.step(
      "superseded records are excluded by default and flagged when included",
      async () => {
        assert.equal((await search({ q: "Pratt parser" })).groups.length, 0);
        const inc = await search({ q: "Pratt parser", include_superseded: true });
        assert.equal(inc.groups.length, 1);
        assert.equal(inc.groups[0]!.total_hits, 2);
        assert.ok(inc.groups[0]!.hits.every((h) => h.superseded));
        const act = await search({ q: "recursive descent" });
        assert.deepEqual(act.groups.map((g) => [g.total_hits, g.hits.map((h) => h.superseded)]), [[
          1,
          [false],
        ]]);
        const both = await search({ q: "recursive descent", include_superseded: true });
        assert.deepEqual(both.groups[0]!.hits.map((h) => h.superseded), [false, true]);
        // Superseded flags agree with what every fixture says about its records.
        const all = await search({ q: "the", include_superseded: true, limit: 100 });
        let flagged = 0;
        for (const g of all.groups) {
          for (const h of g.hits) {
            const s = snaps.find((x) => x.key === g.session_key)!;
            const at = s.recs.findIndex((r) => r.id === h.record_id);
            assert.equal(h.superseded, !s.active[at]);
            if (h.superseded) flagged++;
          }
        }
        assert.ok(flagged > 0);
      },
    );

    await t.step("groups are ordered by best hit; at most 3 newest hits each", async () => {
      const r = await search({ q: "the", include_superseded: true, limit: 100 });
      assert.ok(r.groups.length >= 10);
      for (let i = 0; i < r.groups.length; i++) {
        const g = r.groups[i]!;
        assert.ok(g.hits.length >= 1 && g.hits.length <= 3);
        assert.ok(g.total_hits >= g.hits.length);
        assert.equal(g.best_ts_ms, g.hits[0]!.ts_ms);
        for (let j = 1; j < g.hits.length; j++) assert.ok(g.hits[j - 1]!.ts_ms >= g.hits[j]!.ts_ms);
        const prev = r.groups[i - 1];
        if (prev) {
          assert.ok(
            prev.best_ts_ms > g.best_ts_ms ||
              (prev.best_ts_ms === g.best_ts_ms && prev.session_key < g.session_key),
          );
        }
        const meta = snaps.find((s) => s.key === g.session_key)!.entry;
        assert.deepEqual([g.source, g.session_id, g.title, g.project, g.source_gone], [
          meta.source,
          meta.session_id,
          meta.meta.title,
          meta.meta.project,
          meta.source_gone,
        ]);
      }
      assert.ok(r.groups.some((g) => g.total_hits > 3));
    });

    await t.step(
      "forged, truncated, oversized and foreign cursors are InvalidCursorError",
      async () => {
        const req = { q: "the", limit: 2 };
        const p1 = await search(req);
        const c = p1.cursor!;
        assert.ok(c);
        const flip = (s: string, i: number) =>
          s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
        const other = createSearchEngine({ store, windowDays: 14, cursorKey: key32() });
        const bad: [SearchRequest, typeof search][] = [
          [{ ...req, cursor: flip(c, c.length - 4) }, search],
          [{ ...req, cursor: flip(c, 2) }, search],
          [{ ...req, cursor: c.slice(0, -3) }, search],
          [{ ...req, cursor: c.slice(0, c.indexOf(".")) }, search],
          [{ ...req, cursor: c + "A".repeat(2100) }, search],
          [{ ...req, cursor: "%%%" }, search],
          [{ q: "login", limit: 2, cursor: c }, search],
          [{ q: "the", limit: 3, cursor: c }, search],
          [{ ...req, role: ["user"], cursor: c }, search],
          [{ ...req, include_superseded: true, cursor: c }, search],
          [{ ...req, cursor: c }, (r) => other.search(r)],
        ];
        for (const [r, s] of bad) {
          await assert.rejects(s(r), InvalidCursorError, JSON.stringify(r).slice(0, 80));
        }
        const p2 = await search({ ...req, cursor: c });
        assert.equal(p2.state, "ready");
        assert.ok(
          !p2.groups.some((g) => p1.groups.some((x) => x.session_key === g.session_key)),
        );
      },
    );
  });
});

// ---------------------------------------------------------------- native sessions

Deno.test("pages cover every native session exactly once; a publish between pages expires the cursor", () =>
  withTempDir(async (root) => {
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    const base = Date.now() - 5 * 3_600_000;
    for (let i = 0; i < 12; i++) {
      await writeNativeSession(cfg.logsDir, {
        turns: 3,
        task: `Investigate flaky build ${i}`,
        project: i % 2 ? "/home/dev/api" : "/home/dev/web",
        now: () => base + i * 60_000,
      });
    }
    const { store, indexer } = await createMessageIndex(cfg);
    await indexer.sweep();
    const engine = createSearchEngine({
      store,
      windowDays: 14,
      cursorKey: key32(),
      timeBudgetMs: 60_000,
    });
    const search = (r: SearchRequest) => engine.search(r);
    const req = { q: "the logs", limit: 5 };
    const { groups, pages } = await allPages(search, req);
    assert.deepEqual(pages.map((p) => p.groups.length), [5, 5, 2]);
    assert.equal(new Set(groups.map((g) => g.session_key)).size, 12);
    assert.deepEqual(summary(groups), oracle(await snapshot(store), req));
    assert.ok(groups.every((g) => g.source === "intendant" && g.hits.every((h) => h.seq !== null)));
    const web = await allPages(search, { ...req, project: "dev/WEB" });
    assert.equal(web.groups.length, 6);
    assert.ok(web.groups.every((g) => g.project === "/home/dev/web"));

    const p1 = await search(req);
    await writeNativeSession(cfg.logsDir, { turns: 1, now: () => base + 30 * 60_000 });
    await indexer.sweep();
    await assert.rejects(search({ ...req, cursor: p1.cursor }), CursorExpiredError);
    assert.equal(
      (await allPages(search, req)).groups.length,
      13,
      "restarting sees the new session",
    );
  }));

// ---------------------------------------------------------------- synthetic corpus

const FAST = { windowDays: 14, timeBudgetMs: 60_000 } as const;

Deno.test("budgets: timeout carries no cursor; response and fresh-load budgets continue exactly", () =>
  withCorpus(4000, async (store) => {
    const snaps = await snapshot(store);
    const cursorKey = key32();
    const req = { q: "deadline", limit: 5 };
    const want = oracle(snaps, req);
    assert.ok(want.length > 20, `${want.length} sessions match`);

    const slow = createSearchEngine({ store, windowDays: 14, cursorKey, timeBudgetMs: 0 });
    const t = await slow.search(req);
    assert.equal(t.state, "partial");
    assert.equal(t.partial_reason, "timeout");
    assert.equal(t.cursor, null);
    assert.ok(t.groups.length <= 1, "one session matched before the budget check");

    const tight = createSearchEngine({ store, ...FAST, cursorKey, responseBudgetBytes: 4000 });
    const r = await allPages((x) => tight.search(x), req);
    assert.ok(r.pages.some((p) => p.partial_reason === "budget" && p.cursor !== null));
    for (const p of r.pages) {
      assert.ok(p.groups.length >= 1);
      if (p.groups.length > 1) assert.ok(enc.encode(JSON.stringify(p)).length <= 4000);
    }
    assert.deepEqual(summary(r.groups), want);

    const frugal = createSearchEngine({ store, ...FAST, cursorKey, freshLoadBudgetBytes: 1 });
    const f = await allPages((x) => frugal.search(x), req);
    assert.equal(f.pages[0]!.partial_reason, "budget");
    assert.ok(f.pages[0]!.cursor);
    assert.deepEqual(summary(f.groups), want);
    assert.equal(f.pages.at(-1)!.cursor, null);
    assert.ok(f.pages.every((p) => p.groups.length >= 1), "every budget page advances");
    // Even when the arena cannot keep what the previous page loaded, paging terminates.
    const starved = createSearchEngine({
      store,
      ...FAST,
      cursorKey,
      freshLoadBudgetBytes: 1,
      arenaBytes: 64 * 1024,
    });
    const z = await allPages((x) => starved.search(x), req);
    assert.deepEqual(summary(z.groups), want);
    assert.ok(starved.stats().evictions > 0);
  }));

Deno.test("a corrupt or missing generation skips its session without failing the query", () =>
  withCorpus(2000, async (store) => {
    const snaps = await snapshot(store);
    const req = { q: "the", limit: 100, include_superseded: true };
    const want = oracle(snaps, req);
    const [bad, gone] = [want[3]!.key, want[7]!.key];
    const gensOf = (k: string) => snaps.find((s) => s.key === k)!.entry.generations;
    const dir = join(store.root, "generations");
    await Deno.writeTextFile(join(dir, gensOf(bad)[0]!), '{"schema":1,"truncated');
    await Deno.remove(join(dir, gensOf(gone)[0]!));
    const engine = createSearchEngine({ store, ...FAST, cursorKey: key32() });
    const { groups } = await allPages((x) => engine.search(x), req);
    assert.deepEqual(summary(groups), want.filter((w) => w.key !== bad && w.key !== gone));
    const st = engine.stats();
    assert.ok(st.failedLoads >= 2);
    assert.ok(st.failedGenerations.includes(gensOf(bad)[0]!));
    assert.ok(st.failedGenerations.includes(gensOf(gone)[0]!));
  }));

Deno.test("a small arena evicts least recently used shards and still answers exactly", () =>
  withCorpus(4000, async (store) => {
    const snaps = await snapshot(store);
    const cursorKey = key32();
    const big = createSearchEngine({ store, ...FAST, cursorKey });
    const cap = 256 * 1024;
    const small = createSearchEngine({ store, ...FAST, cursorKey, arenaBytes: cap });
    for (const q of ["deadline", "parser timeout", '"the session cookie"', "résumé", "東京"]) {
      const req = { q, limit: 7 };
      const want = oracle(snaps, req);
      assert.deepEqual(summary((await allPages((x) => small.search(x), req)).groups), want, q);
      assert.deepEqual(summary((await allPages((x) => big.search(x), req)).groups), want, q);
      const st = small.stats();
      assert.ok(st.bytes <= cap, `${st.bytes} <= ${cap}`);
    }
    assert.ok(small.stats().evictions > 10);
    assert.equal(big.stats().evictions, 0);
    assert.ok(big.stats().bytes > 4 * cap);
  }));

Deno.test("only sessions and records inside the retention window are searched", () =>
  withCorpus(3000, async (store, now) => {
    const snaps = await snapshot(store);
    const cursorKey = key32();
    const req = { q: "the", limit: 100 };
    const w3 = createSearchEngine({ store, ...FAST, windowDays: 3, now: () => now, cursorKey });
    const r3 = await w3.search(req);
    assert.equal(r3.window_days, 3);
    assert.deepEqual(summary(r3.groups), oracle(snaps, req, now - 3 * DAY));
    assert.ok(r3.groups.every((g) => g.hits.every((h) => h.ts_ms >= now - 3 * DAY)));
    const all = createSearchEngine({ store, ...FAST, windowDays: null, cursorKey });
    const rAll = await all.search(req);
    assert.deepEqual(summary(rAll.groups), oracle(snaps, req));
    assert.ok(rAll.groups.length > r3.groups.length);
  }));

Deno.test("an append loads only the new segment and re-derives supersession", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root: join(root, "v1"), parserVersion: 1, windowDays: null });
    const now = Date.now();
    const mk = (i: number, text: string): MessageRecord => ({
      id: `m${i}`,
      source: "kimi",
      session_id: "s1",
      role: "user",
      ts_ms: now - 100_000 + i,
      text,
      truncated: false,
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: `m${i}`,
        file: "wire.jsonl",
        hash: hash16Of(text),
      },
      order: i,
      generation: 0,
      subagent: false,
    });
    const upd = (
      kind: "replace" | "append",
      recs: MessageRecord[],
      marks: SupersessionMark[],
      base: string[] | null,
    ): ShardUpdate => ({
      kind,
      key: "kimi:s1",
      source: "kimi",
      session_id: "s1",
      base,
      segment: { records: recs, marks },
      cursors: {},
      source_watermark: recs.length + (base ? 100 : 0),
      source_fingerprint: "fp",
      meta: { project: "/p", title: "t", parent_session_id: null, files: [] },
    });
    await store.publish([
      upd("replace", Array.from({ length: 30 }, (_, i) => mk(i, `alpha note ${i}`)), [], null),
    ]);
    const engine = createSearchEngine({ store, ...FAST, cursorKey: key32() });
    assert.equal((await engine.search({ q: "alpha" })).groups[0]!.total_hits, 30);
    assert.equal(engine.stats().misses, 1);
    const base = (await store.readManifest()).sessions["kimi:s1"]!.generations;
    const undo: SupersessionMark = { kind: "record_ids", after_order: 31, ids: ["m29", "m28"] };
    await store.publish([upd("append", [mk(30, "alpha omega")], [undo], base)]);
    const r = await engine.search({ q: "alpha" });
    assert.equal(engine.stats().misses, 2, "only the appended segment was loaded");
    assert.equal(r.groups[0]!.total_hits, 29);
    assert.deepEqual(r.groups[0]!.hits.map((h) => h.record_id), ["m30", "m27", "m26"]);
    const inc = await engine.search({ q: "alpha", include_superseded: true });
    assert.deepEqual(inc.groups[0]!.hits.map((h) => [h.record_id, h.superseded]), [
      ["m30", false],
      ["m29", true],
      ["m28", true],
    ]);
  }));

Deno.test("an empty store answers building until the indexer is ready; bad requests are RangeErrors", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root: join(root, "v1"), parserVersion: 1, windowDays: null });
    let ready = false;
    const o: SearchEngineOptions = {
      store,
      windowDays: 14,
      cursorKey: key32(),
      isReady: () => ready,
    };
    const engine = createSearchEngine(o);
    const r = await engine.search({ q: "anything" });
    assert.deepEqual([r.state, r.groups, r.cursor, r.window_days], ["building", [], null, 14]);
    ready = true;
    assert.equal((await engine.search({ q: "anything" })).state, "ready");
    for (const q of ["", "  ", "a", "x y"]) await assert.rejects(engine.search({ q }), RangeError);
    await assert.rejects(engine.search({ q: "ok", limit: 0 }), RangeError);
    await assert.rejects(engine.search({ q: "ok", limit: 101 }), RangeError);
    assert.throws(() => createSearchEngine({ ...o, cursorKey: new Uint8Array(4) }), RangeError);
    assert.throws(() => createSearchEngine({ ...o, arenaBytes: 0 }), RangeError);
  }));

// ---------------------------------------------------------------- figures

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

Deno.test("figures: cold and warm latency over a 50,000-record corpus", () =>
  withCorpus(50_000, async (store) => {
    const m = await store.readManifest();
    // One engine, two manifest sources: the store's full read, or an injected cached one.
    let cached = false;
    const engine = createSearchEngine({
      store,
      windowDays: 14,
      cursorKey: key32(),
      readManifest: () => cached ? Promise.resolve(m) : store.readManifest(),
    });
    const t0 = performance.now();
    let cold = await engine.search({ q: "zanzibarquux" });
    const first = { state: cold.state, reason: cold.partial_reason, ms: performance.now() - t0 };
    let retries = 0;
    while (cold.state === "partial") {
      cold = await engine.search({ q: "zanzibarquux" });
      retries++;
    }
    const coldMs = performance.now() - t0;
    const st = engine.stats();
    const manifestMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = performance.now();
      await store.readManifest();
      manifestMs.push(performance.now() - s);
    }
    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    const lines = [
      `corpus: ${Object.keys(m.sessions).length} sessions, ${
        Object.values(m.sessions).reduce((n, e) => n + e.records, 0)
      } records, ${mib(st.loadedBytes)} MiB of generations; store.readManifest p50 ${
        pct(manifestMs, 0.5).toFixed(2)
      } ms`,
      `cold: first query ${first.state}/${first.reason ?? "-"} in ${first.ms.toFixed(0)} ms; ` +
      `complete after ${retries} retries, ${coldMs.toFixed(0)} ms in all ` +
      `(${(st.loadedBytes / 2 ** 20 / (coldMs / 1000)).toFixed(0)} MiB/s, ` +
      `${(coldMs / st.misses).toFixed(2)} ms per shard); arena ${
        mib(st.bytes)
      } MiB, ${st.shards} shards`,
      `${"query".padEnd(42)} ${"store manifest".padEnd(24)} cached manifest`,
    ];
    const queries: [string, string][] = [
      ["rare word", "zanzibarquux"],
      ["mid-frequency word", "deadline"],
      ["stopword", "the"],
      ["phrase", '"the session cookie"'],
      ["two-word AND", "parser timeout"],
      ["non-ASCII word", "résumé"],
    ];
    let partials = 0;
    for (const [label, q] of queries) {
      const cols: string[] = [];
      let r: SearchResponse | null = null;
      for (const mode of [false, true]) {
        cached = mode;
        const wall: number[] = [];
        for (let i = 0; i < 5; i++) await engine.search({ q });
        for (let i = 0; i < 40; i++) {
          const s = performance.now();
          r = await engine.search({ q });
          wall.push(performance.now() - s);
          // Counted, not asserted: a loaded CI box may push a warm query past the budget.
          if (r.state !== "ready") partials++;
        }
        const [p50, p95] = [pct(wall, 0.5), pct(wall, 0.95)];
        cols.push(`p50 ${p50.toFixed(2).padStart(5)} p95 ${p95.toFixed(2).padStart(6)}`);
      }
      const hits = r!.groups.reduce((n, g) => n + g.total_hits, 0);
      lines.push(
        `${label.padEnd(19)} ${q.padEnd(22)} ${cols[0]!.padEnd(24)} ${cols[1]}  ` +
          `(ms; ${r!.groups.length} groups, ${hits} hits)`,
      );
    }
    lines.push(`warm runs cut short by a budget: ${partials} of ${queries.length * 80}`);
    const broad = await engine.search({ q: "the" });
    const s2 = performance.now();
    const page2 = await engine.search({ q: "the", cursor: broad.cursor });
    lines.push(
      `page 2 of "the": ${(performance.now() - s2).toFixed(2)} ms, ${page2.groups.length} groups`,
    );
    lines.push(`rss ${(Deno.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
    console.log(`\n${lines.join("\n")}`);
  }));
