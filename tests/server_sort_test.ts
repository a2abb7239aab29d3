/**
 * The `sort` parameter of GET /api/sessions/message-search (issue 27) at the HTTP edge, on
 * the real app: validated like every parameter (a bad value is a 400 naming it), passed
 * to the engine, listed in /api/routes; and in team scope `sort=relevance` is a 400 in
 * words before any team query (the team reader orders newest first only), while newest
 * team requests reach the team search as before. The team object here records the
 * requests that reach it; nothing of ours is replaced.
 */
import assert from "node:assert/strict";
import type { TeamDeps } from "../lib/server/mod.ts";
import type { TeamSearchRequest, TeamSearchResponse } from "../lib/team/mod.ts";
import { buildTeamApp } from "./helpers/team_app.ts";
import { buildWorld } from "./helpers/world.ts";

const QS = "/api/sessions/message-search";

Deno.test("message search accepts sort=newest|relevance and refuses anything else by name", async () => {
  const root = await Deno.makeTempDir({ prefix: "intendant-sort-" });
  try {
    const w = await buildWorld(root);
    for (const sort of ["newest", "relevance"]) {
      const r = await w.get(`${QS}?q=cookie&sort=${sort}`);
      assert.equal(r.status, 200, sort);
      await r.body?.cancel();
    }
    const bad = await w.get(`${QS}?q=cookie&sort=best`);
    assert.equal(bad.status, 400);
    const body = await bad.json();
    assert.equal(body.error, "bad_request");
    assert.match(body.message, /parameter "sort": must be one of newest, relevance/);
    const routes = await (await w.get("/api/routes")).json();
    const search = routes.routes.find((r: { path: string }) => r.path === QS);
    assert.match(search.summary, /sort=newest\|relevance/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("team scope refuses sort=relevance in words before any team query", async () => {
  const root = await Deno.makeTempDir({ prefix: "intendant-sort-team-" });
  try {
    const seen: TeamSearchRequest[] = [];
    const team: TeamDeps = {
      machine: "here",
      search(req) {
        seen.push(req);
        const page: TeamSearchResponse = {
          scope: "team",
          state: "ready",
          window_days: null,
          groups: [],
          cursor: null,
          revision: 1,
          took_ms: 0,
        };
        return Promise.resolve(page);
      },
      remoteSession: () => Promise.reject(new Error("not used")),
      status: () => Promise.reject(new Error("not used")),
    };
    const t = await buildTeamApp(root, { team });
    const refused = await t.get(`${QS}?scope=team&q=zebra&sort=relevance`);
    assert.equal(refused.status, 400);
    const body = await refused.json();
    assert.equal(body.error, "bad_request");
    assert.match(body.message, /^sort=relevance is not available for team search yet/);
    assert.equal(seen.length, 0, "no team query was made");
    for (const qs of ["", "&sort=newest"]) {
      const ok = await t.get(`${QS}?scope=team&q=zebra${qs}`);
      assert.equal(ok.status, 200, qs);
      await ok.body?.cancel();
    }
    assert.equal(seen.length, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
