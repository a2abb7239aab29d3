/**
 * The team scope of the HTTP API (issue 19) in process (Hono `app.request`) against a
 * REAL PostgreSQL holding real rows of two machines: `message-search?scope=team` answers
 * groups naming their machine, the machine filter, cursor paging, 410 after a
 * destructive change in scope, 400 on a bad or local cursor, the remote session detail
 * (404 when absent), the status probe, the token middleware in front of every team
 * route, 503 (a clear JSON error, no stack, q not logged) once the database is stopped,
 * and an app without a team: 404 `team_not_configured` saying how, status
 * `configured: false`, local search unchanged.
 */
import assert from "node:assert/strict";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { withTempDir } from "./helpers/temp.ts";
import {
  buildTeamApp,
  destructiveChange,
  keyOf,
  openReplica,
  type ReplicaSession,
  seedReplica,
  teamDepsOf,
} from "./helpers/team_app.ts";

const NOW = Date.now();
const MIN = 60_000;

/** Six sessions: a has 3, b has 3; every one says "zebra", one on each says "okapi". */
function sessions(): ReplicaSession[] {
  const out: ReplicaSession[] = [];
  for (let i = 0; i < 6; i++) {
    const machine = i % 2 === 0 ? "laptop-a" : "ci-b";
    out.push({
      machine,
      source: i % 3 === 0 ? "codex" : "claude-code",
      id: `s${i}`,
      title: `Session ${i} on ${machine}`,
      project: `/work/p${i}`,
      texts: [
        `the zebra crossing ${i}`,
        i < 2 ? `an okapi in the zoo on ${machine}` : "nothing rare here",
        `zebra stripes again ${i}`,
      ],
      endMs: NOW - i * 10 * MIN,
    });
  }
  return out;
}

type Group = { machine: string; session_key: string; hits: { snippet: string }[] };
const QS = "/api/sessions/message-search";

Deno.test("team scope of the API against a real PostgreSQL", async (t) => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (root) => {
      const db = await openReplica(pg.url);
      try {
        const all = sessions();
        await seedReplica(db, all, 1);
        const w = await buildTeamApp(root, { team: teamDepsOf(db, "laptop-a") });

        await t.step("scope=team answers groups naming their machine", async () => {
          const r = await w.get(`${QS}?scope=team&q=zebra&limit=100`);
          assert.equal(r.status, 200);
          const body = await r.json();
          assert.equal(body.scope, "team");
          assert.equal(body.state, "ready");
          assert.equal(body.revision, 1);
          const got = (body.groups as Group[]).map((g) => `${g.machine}/${g.session_key}`);
          // Newest first: s0 (a), s1 (b), … — each group on the machine that published it.
          assert.deepEqual(got, all.map((s) => `${s.machine}/${keyOf(s)}`));
          assert.ok(body.groups.every((g: Group) => g.hits.every((h) => /zebra/.test(h.snippet))));
          const okapi = await (await w.get(`${QS}?scope=team&q=okapi`)).json();
          assert.deepEqual(okapi.groups.map((g: Group) => g.machine), ["laptop-a", "ci-b"]);
          // scope=local (said explicitly) is the local index, empty here.
          const local = await (await w.get(`${QS}?scope=local&q=zebra`)).json();
          assert.equal(local.scope, undefined);
          assert.deepEqual(local.groups, []);
        });

        await t.step("the machine filter", async () => {
          const onlyB = await (await w.get(`${QS}?scope=team&q=zebra&machine=ci-b&limit=100`))
            .json();
          assert.deepEqual(
            onlyB.groups.map((g: Group) => g.session_key),
            all.filter((s) => s.machine === "ci-b").map(keyOf),
          );
          const both = await (await w.get(`${QS}?scope=team&q=okapi&machine=ci-b,laptop-a`))
            .json();
          assert.equal(both.groups.length, 2);
          const none = await (await w.get(`${QS}?scope=team&q=zebra&machine=nobody`)).json();
          assert.deepEqual(none.groups, []);
          const bad = await w.get(`${QS}?scope=team&q=zebra&machine=no%2Fslash`);
          assert.equal(bad.status, 400);
          assert.equal((await bad.json()).error, "bad_request");
          // machine= belongs to team scope only: the local route refuses it.
          assert.equal((await w.get(`${QS}?q=zebra&machine=ci-b`)).status, 400);
          assert.equal((await w.get(`${QS}?scope=planet&q=zebra`)).status, 400);
        });

        await t.step(
          "cursors: pages, 400 on a bad cursor, 410 after a destructive change",
          async () => {
            const p1 = await (await w.get(`${QS}?scope=team&q=zebra&limit=2`)).json();
            assert.equal(p1.groups.length, 2);
            assert.ok(typeof p1.cursor === "string");
            const c = encodeURIComponent(p1.cursor);
            const p2 = await (await w.get(`${QS}?scope=team&q=zebra&limit=2&cursor=${c}`)).json();
            assert.deepEqual(
              p2.groups.map((g: Group) => g.session_key),
              all.slice(2, 4).map(keyOf),
            );
            const forged = await w.get(`${QS}?scope=team&q=zebra&limit=2&cursor=${c}x`);
            assert.equal(forged.status, 400);
            assert.equal((await forged.json()).error, "bad_cursor");
            // Another machine set cannot reuse it.
            const other = await w.get(`${QS}?scope=team&q=zebra&limit=2&machine=ci-b&cursor=${c}`);
            assert.equal(other.status, 400);
            // A local cursor does not open in team scope either.
            const b1 = await (await w.get(`${QS}?scope=team&q=zebra&limit=2&machine=laptop-a`))
              .json();
            await destructiveChange(db, "ci-b");
            const gone = await w.get(`${QS}?scope=team&q=zebra&limit=2&cursor=${c}`);
            assert.equal(gone.status, 410);
            assert.equal((await gone.json()).error, "cursor_expired");
            // A cursor scoped to the machine that did not change still pages.
            const a2 = await w.get(
              `${QS}?scope=team&q=zebra&limit=2&machine=laptop-a&cursor=${
                encodeURIComponent(b1.cursor)
              }`,
            );
            assert.equal(a2.status, 200);
            assert.deepEqual((await a2.json()).groups.map((g: Group) => g.session_key), [
              keyOf(all[4]!),
            ]);
          },
        );

        await t.step("remote session detail", async () => {
          const s = all[1]!;
          const path = `/api/team/session?machine=${s.machine}&key=${encodeURIComponent(keyOf(s))}`;
          const r = await w.get(path);
          assert.equal(r.status, 200);
          const d = await r.json();
          assert.equal(d.meta.remote, true);
          assert.equal(d.meta.machine, "ci-b");
          assert.equal(d.meta.title, s.title);
          assert.equal(d.total, 3);
          assert.deepEqual(d.records.map((x: { text: string }) => x.text), s.texts);
          const page = await (await w.get(`${path}&offset=1&limit=1`)).json();
          assert.deepEqual(page.records.map((x: { text: string }) => x.text), [s.texts[1]]);
          assert.deepEqual([page.offset, page.limit, page.total], [1, 1, 3]);
          // The same key on the other machine does not exist.
          const wrong = await w.get(
            `/api/team/session?machine=laptop-a&key=${encodeURIComponent(keyOf(s))}`,
          );
          assert.equal(wrong.status, 404);
          assert.equal((await wrong.json()).error, "not_found");
          assert.equal((await w.get(`${path}&limit=0`)).status, 400);
          assert.equal((await w.get(`/api/team/session?machine=no%2Fslash&key=x`)).status, 400);
        });

        await t.step("status: configured, this machine, the team's machines", async () => {
          const st = await (await w.get("/api/team/status")).json();
          assert.equal(st.configured, true);
          assert.equal(st.machine, "laptop-a");
          assert.deepEqual(st.machines.map((m: { name: string }) => m.name), ["ci-b", "laptop-a"]);
          assert.equal(st.records_total, 18);
          const ops = (await (await w.get("/api/routes")).json()).routes.map((
            r: { operation: string },
          ) => r.operation);
          assert.ok(ops.includes("api_team_status") && ops.includes("api_team_session"));
        });

        await t.step("behind the token middleware like every /api route", async () => {
          for (
            const p of [
              "/api/team/status",
              `${QS}?scope=team&q=zebra`,
              `/api/team/session?machine=ci-b&key=codex%3As1`,
            ]
          ) {
            const r = await w.app.request(p, { headers: { host: "127.0.0.1:8766" } });
            assert.equal(r.status, 401, p);
            const evil = await w.app.request(p, {
              headers: { host: "evil.example", authorization: `Bearer ${w.token}` },
            });
            assert.equal(evil.status, 403, p);
          }
        });

        await t.step("a stopped database answers 503 with a clear JSON error", async () => {
          await pg.stop();
          for (
            const p of [
              `${QS}?scope=team&q=secretneedle`,
              "/api/team/status",
              `/api/team/session?machine=ci-b&key=codex%3As1`,
            ]
          ) {
            const r = await w.get(p);
            assert.equal(r.status, 503, p);
            const body = await r.json();
            assert.equal(body.error, "team_unavailable", p);
            assert.match(body.message, /team database is unavailable/i);
            assert.doesNotMatch(JSON.stringify(body), /at .*\.ts:\d+|secretneedle|password/i);
          }
          // Local search is unaffected.
          assert.equal((await w.get(`${QS}?q=zebra`)).status, 200);
          assert.ok(w.logs.length > 0, "a 5xx is logged");
          assert.ok(w.logs.every((l) => !l.includes("secretneedle")), "q is never logged");
        });
      } finally {
        await db.close().catch(() => {});
      }
    });
  });
});

Deno.test("without a team the team routes say how to configure one", () =>
  withTempDir(async (root) => {
    const w = await buildTeamApp(root);
    const r = await w.get(`${QS}?scope=team&q=zebra`);
    assert.equal(r.status, 404);
    const body = await r.json();
    assert.equal(body.error, "team_not_configured");
    assert.match(body.message, /--team/);
    assert.match(body.message, /INTENDANT_TEAM_URL/);
    const s = await w.get("/api/team/session?machine=a&key=codex%3Ax");
    assert.equal(s.status, 404);
    assert.equal((await s.json()).error, "team_not_configured");
    const st = await (await w.get("/api/team/status")).json();
    assert.equal(st.configured, false);
    assert.match(st.hint, /intendant serve --team/);
    // Local search answers as before (no scope, no team fields).
    const local = await w.get(`${QS}?q=zebra`);
    assert.equal(local.status, 200);
    const lb = await local.json();
    assert.equal(lb.scope, undefined);
    assert.ok("coverage" in lb);
  }));
