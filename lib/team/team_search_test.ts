/**
 * Team search against a real throwaway PostgreSQL, compared with the local engine. ONE
 * local store holds the sessions of two pretend machines; the same records are loaded
 * into a migrated replica (toRecordRow + plain INSERTs, sessions rows included, revision
 * and destructive_rev set by hand — the publisher is not needed), split across machines
 * "a" and "b". For a battery of needles (rare, common, phrase, AND, accented NFC/NFD,
 * the "cafe"/"café" boundary rule, 2-character, 2-character CJK, Hangul jamo, a needle
 * with % _ \, a stopword) under both plans (the default choice, and newest-first forced
 * with small walk batches), the team groups — session, total_hits, and every shown hit
 * (ids, ranges, snippets, flags, locators) — equal the local engine's over the union.
 * Then paging (limit 1..3 covers every group once, in team order), a publish between
 * pages, a destructive change (410, scoped by machine), the machine, project and
 * include_superseded filters, the retention window, the time budget, U+0000 text and
 * the remote session detail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { NotFoundError } from "../errors.ts";
import {
  createSearchEngine,
  CursorExpiredError,
  deriveActive,
  encodeLocator,
  fold,
  hash16Of,
  InvalidCursorError,
  type MessageRecord,
  openStore,
  type SearchGroup,
  type SearchRequest,
  type Source,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { withPgCluster } from "../../tests/helpers/pg_cluster.ts";
import { loadTeamRows } from "../../tests/helpers/team_rows.ts";
import { prng } from "../../tests/helpers/store_fixtures.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { openTeamDb, type TeamDb } from "./connect.ts";
import { migrateTeamDb } from "./migrate.ts";
import { RECORD_COLUMNS, toRecordRow } from "./record_row.ts";
import { loadRemoteSession } from "./remote_session.ts";
import { compareUtf8, timed } from "./team_plan.ts";
import {
  createTeamSearch,
  type TeamSearchGroup,
  type TeamSearchOptions,
  type TeamSearchRequest,
  type TeamSearchResponse,
} from "./team_search.ts";
import { parseTeamUrl } from "./team_url.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15);
const cursorKey = new Uint8Array(32).fill(7);

interface Sess {
  machine: "a" | "b";
  key: string;
  source: Source;
  id: string;
  project: string;
  recs: MessageRecord[];
  marks: SupersessionMark[];
}

const WORDS = [
  "the",
  "and",
  "build",
  "deploy",
  "server",
  "config",
  "error",
  "fix",
  "token",
  "book",
];
const SPECIALS = [
  "zyzzogeton",
  "café",
  "cafe\u0301",
  "cafe",
  "cafeteria",
  "我们说中文吧",
  "日本語の文章",
  "우각",
  "우가나",
  "50%_off\\x",
  "50_off",
  "deploy the server",
  "ok",
  "a\u0000b zyzzogeton\u0000",
  "ÉCOLE",
];

function textOf(rnd: () => number): string {
  const n = 3 + Math.floor(rnd() * 12);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
  if (rnd() < 0.5) {
    out.splice(Math.floor(rnd() * out.length), 0, SPECIALS[Math.floor(rnd() * SPECIALS.length)]!);
  }
  return out.join(" ");
}

/** 40 sessions over two machines; pairs of records share a ts (ord breaks the tie). */
function corpus(): Sess[] {
  const rnd = prng(19);
  const out: Sess[] = [];
  const sources: Source[] = ["codex", "claude-code", "pi"];
  for (let s = 0; s < 40; s++) {
    const machine = s % 2 === 0 ? "a" : "b";
    const source = sources[s % 3]!;
    const id = `${machine}-s${s}`;
    // Sessions 0 and 1 (machines a and b) end at the same ms: the machine breaks the tie.
    const end = NOW - (s <= 1 ? 0 : Math.floor(rnd() * 10 * DAY));
    const n = 10 + Math.floor(rnd() * 60);
    const recs: MessageRecord[] = [];
    for (let i = 0; i < n; i++) {
      // The last records of sessions 0 and 1 both hold "the" at the same ms: a tie.
      const text = s <= 1 && i === n - 1 ? "the tie" : textOf(rnd);
      recs.push({
        id: `${id}-r${i}`,
        source,
        session_id: id,
        role: i % 2 === 0 ? "user" : "assistant",
        ts_ms: end - Math.floor((n - 1 - i) / 2) * 60_000,
        text,
        truncated: rnd() < 0.05,
        locator: {
          v: 1,
          kind: "external_record_id",
          record_id: `${id}-r${i}`,
          file: "f.jsonl",
          hash: hash16Of(text),
        },
        order: i,
        seq: s % 4 === 0 ? i : undefined,
        generation: 0,
        subagent: rnd() < 0.1,
      });
    }
    const marks: SupersessionMark[] = s % 5 === 0
      ? [{ kind: "record_ids", after_order: n, ids: recs.slice(-6).map((r) => r.id) }]
      : [];
    out.push({
      machine,
      key: `${source}:${id}`,
      source,
      id,
      project: `/work/Proj-${s % 3}/é`,
      recs,
      marks,
    });
  }
  return out;
}

async function loadReplica(db: TeamDb, sessions: readonly Sess[], rev: number): Promise<void> {
  await loadTeamRows(
    db,
    sessions.map((s) => ({ ...s, title: `title ${s.id}`, marks: s.marks })),
    rev,
  );
}

/** Every page of a team search (limit as given), asserting no timeouts. */
async function teamPages(
  search: (r: TeamSearchRequest) => Promise<TeamSearchResponse>,
  req: TeamSearchRequest,
): Promise<TeamSearchGroup[]> {
  const out: TeamSearchGroup[] = [];
  let cursor: string | null = req.cursor ?? null;
  for (let i = 0; i < 200; i++) {
    const page: TeamSearchResponse = await search({ ...req, cursor });
    assert.equal(page.state, "ready", `q=${JSON.stringify(req.q)}`);
    out.push(...page.groups);
    cursor = page.cursor;
    if (cursor === null) return out;
  }
  throw new Error("Paging did not end");
}

/** Team groups keyed by the local key, without the machine (for comparison). */
function asLocal(groups: readonly TeamSearchGroup[]): Map<string, SearchGroup> {
  const m = new Map<string, SearchGroup>();
  for (const { machine: _m, ...g } of groups) {
    assert.ok(!m.has(g.session_key), `group ${g.session_key} repeated`);
    m.set(g.session_key, g);
  }
  return m;
}

function assertTeamOrder(groups: readonly TeamSearchGroup[]): void {
  for (let i = 1; i < groups.length; i++) {
    const a = groups[i - 1]!;
    const b = groups[i]!;
    const ok = a.best_ts_ms > b.best_ts_ms ||
      (a.best_ts_ms === b.best_ts_ms &&
        (compareUtf8(a.machine, b.machine) < 0 ||
          (a.machine === b.machine && compareUtf8(a.session_key, b.session_key) < 0)));
    assert.ok(ok, `order broken at ${a.machine}/${a.session_key} → ${b.machine}/${b.session_key}`);
  }
}

const NEEDLES = [
  "zyzzogeton",
  "the",
  '"deploy the server"',
  "deploy error",
  "café",
  "cafe\u0301",
  "cafe",
  "CAFE",
  "école",
  "中文",
  "中",
  "日本語",
  "ok",
  "50%_off\\x",
  "%_",
  "50_",
  "우가",
  "우각",
  "zyzzogeton the",
  "nothingmatchesthis",
];

Deno.test("team search equals the local engine over the union of two machines", async () => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (root) => {
      const sessions = corpus();
      const store = await openStore({ root: join(root, "v1"), parserVersion: 1, windowDays: null });
      await store.publish(sessions.map((s) => ({
        kind: "replace" as const,
        key: s.key,
        source: s.source,
        session_id: s.id,
        base: null,
        segment: { records: s.recs, marks: s.marks },
        cursors: {},
        source_watermark: s.recs.length,
        source_fingerprint: "fp",
        meta: { project: s.project, title: `title ${s.id}`, parent_session_id: null, files: [] },
      })));
      const local = createSearchEngine({ store, windowDays: null, cursorKey, now: () => NOW });
      const db = await openTeamDb(parseTeamUrl(pg.url));
      try {
        await migrateTeamDb(db, { binaryVersion: "test" });
        const base: TeamSearchOptions = {
          db,
          cursorKey,
          windowDays: null,
          timeBudgetMs: 60_000,
          now: () => NOW,
        };
        const empty = await createTeamSearch(base).search({ q: "the" });
        assert.equal(empty.state, "building");
        await loadReplica(db, sessions, 1);
        const machineOf = new Map(sessions.map((s) => [s.key, s.machine]));
        const engines = {
          chosen: createTeamSearch(base),
          newest: createTeamSearch({ ...base, tuning: { probeCap: 1, walkBatchMin: 3 } }),
        };
        const check = async (
          req: SearchRequest & TeamSearchRequest,
          filterKeys?: (k: string) => boolean,
        ) => {
          const want = (await local.search({ ...req, limit: 100, complete: true })).groups
            .filter((g) => !filterKeys || filterKeys(g.session_key));
          for (const [name, team] of Object.entries(engines)) {
            const res = await team.search({ ...req, limit: 100 });
            assert.equal(res.state, "ready");
            assert.equal(res.scope, "team");
            assertTeamOrder(res.groups);
            for (const g of res.groups) assert.equal(g.machine, machineOf.get(g.session_key));
            const got = asLocal(res.groups);
            const label = `${name} q=${JSON.stringify(req.q)} ${JSON.stringify(req)}`;
            assert.deepEqual([...got.keys()].sort(), want.map((g) => g.session_key).sort(), label);
            for (const w of want) assert.deepEqual(got.get(w.session_key), w, label);
            // Every group fits the page, so both plans saw every match: the total is known.
            assert.equal(res.total_sessions, want.length, label);
          }
          return want.length;
        };
        const nonEmpty: string[] = [];
        for (const q of NEEDLES) if (await check({ q }) > 0) nonEmpty.push(q);
        // The battery is not vacuous: every needle but the no-hit one finds something.
        assert.deepEqual(NEEDLES.filter((q) => !nonEmpty.includes(q)), ["nothingmatchesthis"]);
        // "cafe" must not match "café" in either spelling (the boundary rule in SQL).
        const cafe = await engines.chosen.search({ q: "cafe", limit: 100 });
        for (const g of cafe.groups) {
          for (const h of g.hits) assert.ok(fold(h.snippet).includes("cafe"), "a hit shows cafe");
        }
        // U+0000 text: its hit ranges and snippet are byte-exact (deepEqual above), and it
        // is really there.
        const nul = await engines.chosen.search({ q: "zyzzogeton", limit: 100 });
        assert.ok(nul.groups.some((g) => g.hits.some((h) => h.snippet.includes("\u0000"))));

        // Filters: project, include_superseded, role, source, since/until, machine.
        await check({ q: "the", project: "proj-1/E\u0301" });
        await check({ q: "deploy", include_superseded: true });
        await check({ q: "server", role: ["assistant"], source: ["codex", "pi"] });
        await check({ q: "the", since: NOW - 3 * DAY, until: NOW - DAY });
        for (const [name, team] of Object.entries(engines)) {
          const onlyA = await team.search({ q: "the", machine: ["a"], limit: 100 });
          const want = (await local.search({ q: "the", limit: 100, complete: true })).groups
            .filter((g) => machineOf.get(g.session_key) === "a");
          assert.ok(want.length > 0);
          assert.deepEqual([...asLocal(onlyA.groups).values()], want.map((g) => g), name);
        }
        // The superseded filter is not vacuous.
        const withSup = await engines.chosen.search({
          q: "the",
          include_superseded: true,
          limit: 100,
        });
        const without = await engines.chosen.search({ q: "the", limit: 100 });
        assert.ok(
          withSup.groups.reduce((n, g) => n + g.total_hits, 0) >
            without.groups.reduce((n, g) => n + g.total_hits, 0),
        );

        // Retention window: the same cutoff as the local engine's.
        const win = createTeamSearch({ ...base, windowDays: 3 });
        const localWin = createSearchEngine({ store, windowDays: 3, cursorKey, now: () => NOW });
        const wantWin = (await localWin.search({ q: "the", limit: 100, complete: true })).groups;
        const gotWin = await win.search({ q: "the", limit: 100 });
        assert.equal(gotWin.window_days, 3);
        assert.ok(wantWin.length < without.groups.length);
        assert.deepEqual([...asLocal(gotWin.groups).values()], wantWin.map((g) => g));

        // Paging: limits 1..3 cover every group exactly once, in team order.
        for (const [name, team] of Object.entries(engines)) {
          for (const q of ["the", "ok", "中文", "café"]) {
            const all = (await team.search({ q, limit: 100 })).groups;
            for (const limit of [1, 2, 3]) {
              const totals: (number | undefined)[] = [];
              const paged = await teamPages(
                (r) => team.search(r).then((p) => (totals.push(p.total_sessions), p)),
                { q, limit },
              );
              assertTeamOrder(paged);
              assert.deepEqual(paged, all, `${name} ${q} limit ${limit}`);
              // A page's total, when the plan knows it, is the whole query's (cursors carry
              // the groups already shown); the trigram plan always knows it.
              for (const t of totals) {
                if (t !== undefined) assert.equal(t, all.length, `${name} ${q}`);
              }
              if (name === "chosen" && q === "café") {
                assert.ok(totals.every((t) => t === all.length));
              }
            }
          }
        }
        // An empty page suggests what the local engine suggests over the same records.
        let suggested = 0;
        for (
          const req of [
            { q: "nothingmatchesthis", role: ["user" as const] },
            { q: "zyzzogeton", source: ["kimi" as const] },
            { q: "nothingmatchesthis" },
          ]
        ) {
          const want = await local.search({ ...req, complete: true });
          const got = await engines.chosen.search(req);
          assert.equal(want.groups.length, 0, JSON.stringify(req));
          assert.deepEqual(got.suggestions, want.suggestions, JSON.stringify(req));
          if (got.suggestions) suggested++;
        }
        // No kimi session exists: dropping the source filter is the one that helps.
        assert.equal(suggested, 1);

        // The time budget: nothing can run in 0 ms → partial/timeout without a cursor.
        const hurried = await createTeamSearch({ ...base, timeBudgetMs: 0 }).search({ q: "the" });
        assert.deepEqual([hurried.state, hurried.partial_reason, hurried.cursor], [
          "partial",
          "timeout",
          null,
        ]);
        const forced = await createTeamSearch({ ...base, timeBudgetMs: 0 }).search({
          q: "the",
          complete: true,
        });
        assert.equal(forced.state, "ready");
        // The response budget: one group per page, a cursor after it, nothing lost.
        const tight = createTeamSearch({ ...base, responseBudgetBytes: 600 });
        const p1 = await tight.search({ q: "the", limit: 5 });
        assert.deepEqual([p1.state, p1.partial_reason, p1.groups.length], ["partial", "budget", 1]);
        const p2 = await tight.search({ q: "the", limit: 5, cursor: p1.cursor });
        assert.deepEqual(p2.groups[0], without.groups[1]);

        // Cursors: a publish between pages neither expires nor disturbs them.
        for (const [name, team] of Object.entries(engines)) {
          const before = await teamPages(team.search, { q: "the", limit: 100 });
          const page1 = await team.search({ q: "the", limit: 2 });
          const page1A = await team.search({ q: "the", limit: 2, machine: ["a"] });
          const rev = page1.revision;
          // A publish at R+1: a new newest session, a new session older than everything
          // (it would land on a later page), and an append to the last group's session.
          const freshOf = (tag: string, ts: number): Sess => ({
            ...sessions[0]!,
            id: `a-${tag}-${name}`,
            key: `codex:a-${tag}-${name}`,
            source: "codex",
            recs: sessions[0]!.recs.map((r) => ({
              ...r,
              session_id: `a-${tag}-${name}`,
              source: "codex" as const,
              ts_ms: ts,
              text: "the newest",
            })),
            marks: [],
          });
          const fresh = [freshOf("new", NOW + 1000), freshOf("old", NOW - 30 * DAY)];
          await loadReplica(db, fresh, rev + 1);
          const last = before.at(-1)!;
          const lastSess = sessions.find((x) => x.key === last.session_key)!;
          const extra = toRecordRow({
            ...lastSess.recs[0]!,
            id: "appended",
            order: 100_000,
            ts_ms: last.best_ts_ms - 1,
            text: "the appended",
          }, {
            machine: last.machine,
            sessionKey: last.session_key,
            superseded: false,
            rev: rev + 1,
          });
          await db.sql.unsafe(
            `INSERT INTO intendant.records (${RECORD_COLUMNS.join(", ")}) VALUES (${
              RECORD_COLUMNS.map((c, i) => `$${i + 1}${c === "nul_at" ? "::int[]" : ""}`).join(", ")
            })`,
            RECORD_COLUMNS.map((c) => extra[c]) as never[],
          );
          const rest = await teamPages(team.search, { q: "the", limit: 2, cursor: page1.cursor });
          assert.deepEqual(
            [...page1.groups, ...rest],
            before,
            `${name}: pages as of the cursor's revision`,
          );
          const now = await teamPages(team.search, { q: "the", limit: 100 });
          assert.equal(now[0]!.session_key, fresh[0]!.key, "a new search sees the publish");
          assert.equal(now.at(-1)!.session_key, fresh[1]!.key);
          assert.equal(
            now.find((g) => g.session_key === last.session_key)!.total_hits,
            last.total_hits + 1,
          );
          assert.equal((await team.search({ q: "the", limit: 1 })).revision, rev + 1);
          // A destructive change on b expires b-scoped cursors only.
          await db.sql`UPDATE intendant.team_state SET revision = revision + 1`;
          await db.sql`UPDATE intendant.machines SET destructive_rev = ${rev + 2} WHERE name = 'b'`;
          await assert.rejects(
            team.search({ q: "the", limit: 2, cursor: page1.cursor }),
            CursorExpiredError,
          );
          const restA = await team.search({
            q: "the",
            limit: 2,
            machine: ["a"],
            cursor: page1A.cursor,
          });
          assert.equal(restA.state, "ready");
          // Another query or machine set cannot use a cursor.
          await assert.rejects(
            team.search({ q: "deploy", limit: 2, cursor: page1A.cursor }),
            InvalidCursorError,
          );
          await assert.rejects(
            team.search({ q: "the", limit: 2, cursor: page1A.cursor }),
            InvalidCursorError,
          );
          for (const f of fresh) {
            await db.sql`DELETE FROM intendant.sessions WHERE session_key = ${f.key}`;
          }
          await db.sql`DELETE FROM intendant.records WHERE record_id = 'appended'`;
        }
        // A local cursor does not open here.
        const localPage = await local.search({ q: "the", limit: 1 });
        await assert.rejects(
          engines.chosen.search({ q: "the", limit: 1, cursor: localPage.cursor }),
          InvalidCursorError,
        );
        await assert.rejects(
          engines.chosen.search({ q: "the", machine: ["no/slash"] }),
          RangeError,
        );

        // Remote session detail: prose restored exactly, flags as materialized.
        const withNul = sessions.find((s) => s.recs.some((r) => r.text.includes("\u0000")))!;
        const detail = await loadRemoteSession(db, {
          machine: withNul.machine,
          sessionKey: withNul.key,
        });
        assert.equal(detail.meta.remote, true);
        assert.equal(detail.meta.machine, withNul.machine);
        assert.equal(detail.total, withNul.recs.length);
        assert.deepEqual(detail.records.map((r) => r.text), withNul.recs.map((r) => r.text));
        assert.deepEqual(
          detail.records.map((r) => r.locator),
          withNul.recs.map((r) => encodeLocator(r.locator)),
        );
        const marked = sessions.find((s) => s.marks.length > 0)!;
        const md = await loadRemoteSession(db, {
          machine: marked.machine,
          sessionKey: marked.key,
          offset: 2,
          limit: 5,
        });
        assert.deepEqual(md.marks, marked.marks);
        assert.deepEqual(
          md.records.map((r) => r.active),
          deriveActive(marked.recs, marked.marks).slice(2, 7),
        );
        await assert.rejects(
          loadRemoteSession(db, {
            machine: marked.machine === "a" ? "b" : "a",
            sessionKey: marked.key,
          }),
          NotFoundError,
        );
      } finally {
        await db.close();
      }
    });
  });
});

Deno.test("team plan: a statement's time budget never outlives the statement", async () => {
  // A budget left in force would cancel the plan's own SAVEPOINT/RELEASE once nearly
  // spent (bench:team met it on a 2-character CJK needle): after timed(), the
  // transaction's statement_timeout is off again.
  await withPgCluster(async (pg) => {
    const db = await openTeamDb(parseTeamUrl(pg.url));
    try {
      const after = await db.sql.begin(async (tx) => {
        await timed(tx as never, { left: () => 3 }, "SELECT 1", []);
        const [r] = await tx.unsafe<{ statement_timeout: string }[]>(`SHOW statement_timeout`);
        return r!.statement_timeout;
      });
      assert.equal(after, "0");
    } finally {
      await db.close();
    }
  });
});
