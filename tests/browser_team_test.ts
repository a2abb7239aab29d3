/**
 * Team scope of the dashboard in real Chromium (tests/helpers/browser.ts), against the
 * real app with a team dependency built from createTeamSearch over a real PostgreSQL
 * holding two machines' rows, served on 127.0.0.1 with Deno.serve (the daemon's `--team`
 * wiring is not needed to test the page). Covered: the "this machine | team" toggle
 * appears; a team search shows each group's machine as a badge; the machine chips
 * filter; a card opens the remote session page marked "remote · <machine>", its prose
 * rendered as text (a hostile `<img onerror>` stays text) and paged ("Load more"); the
 * scope and machines live in the URL. And an app WITHOUT a team shows no toggle.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { BROWSER_AVAILABLE, CHROMIUM } from "./helpers/browser.ts";
import { withPgCluster } from "./helpers/pg_cluster.ts";
import { withTempDir } from "./helpers/temp.ts";
import {
  buildTeamApp,
  keyOf,
  openReplica,
  type ReplicaSession,
  seedReplica,
  teamDepsOf,
} from "./helpers/team_app.ts";
import type { TeamDeps } from "../lib/server/mod.ts";
import { UI_BUNDLE } from "../ui/gen/bundle.ts";
import { laneKey } from "../ui/lib/search_lane.ts";

const NOW = Date.now();
const HOSTILE = `<img src=x onerror="document.title='pwned'"> giraffe`;
const LONG = 120; // more than one remote page (REMOTE_PAGE = 100)

function sessions(): ReplicaSession[] {
  const texts = Array.from({ length: LONG }, (_, i) => i === 1 ? HOSTILE : `giraffe note ${i}`);
  return [
    {
      machine: "ci-b",
      source: "codex",
      id: "b-long",
      title: "Long giraffe session",
      project: "/srv/ci",
      texts,
      endMs: NOW - 60_000,
    },
    {
      machine: "laptop-a",
      source: "claude-code",
      id: "a-one",
      title: "Laptop giraffe",
      project: "/home/dev/zoo",
      texts: ["a giraffe at home", "indeed a giraffe"],
      endMs: NOW - 2 * 3_600_000,
    },
  ];
}

/** Serves the app (built once the port is known) on 127.0.0.1. */
async function serve(root: string, team?: TeamDeps) {
  let handler: (r: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (r) => handler(r),
  );
  const port = server.addr.port;
  const w = await buildTeamApp(root, { team, port, ui: UI_BUNDLE });
  handler = (r) => w.app.fetch(r);
  return { base: `http://127.0.0.1:${port}/`, token: w.token, server };
}

async function settled(page: import("playwright-core").Page, key: string) {
  await page.waitForFunction(
    (want) => {
      const lane = document.querySelector(".lane[data-q]");
      return lane?.getAttribute("data-key") === want &&
        lane.getAttribute("data-state") === "ready" && lane.getAttribute("aria-busy") === "false";
    },
    key,
    { timeout: 15_000 },
  );
}

Deno.test({
  name: "dashboard team scope in real Chromium",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await withPgCluster(async (pg) => {
      await withTempDir(async (root) => {
        const db = await openReplica(pg.url);
        const teamApp = await serve(`${root}/team`, teamDepsOf(db, "laptop-a"));
        const plainApp = await serve(`${root}/plain`);
        const profile = await Deno.makeTempDir({ prefix: "intendant-chromium-" });
        const context = await chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          headless: true,
          viewport: { width: 1280, height: 800 },
          args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
        });
        try {
          await seedReplica(db, sessions(), 1);
          const page = context.pages()[0] ?? await context.newPage();
          const errors: string[] = [];
          page.on("pageerror", (e) => errors.push(e.message));

          await t.step("without a team there is no scope toggle", async () => {
            const status = page.waitForResponse((r) => r.url().endsWith("/api/team/status"));
            await page.goto(`${plainApp.base}?token=${plainApp.token}`);
            await page.waitForSelector("[data-app-ready]");
            assert.equal((await status).status(), 200);
            await page.fill("#q", "giraffe");
            await settled(
              page,
              laneKey({ q: "giraffe", includeSuperseded: false, source: [], role: [] }),
            );
            assert.equal(await page.locator(".chips.scope").count(), 0);
            assert.equal(await page.locator(".badge.machine").count(), 0);
          });

          await t.step("team scope: machine badges, machine filter, remote session", async () => {
            await page.goto(`${teamApp.base}?token=${teamApp.token}`);
            await page.waitForSelector("[data-app-ready]");
            await page.waitForSelector(".chips.scope [data-scope=team]");
            await page.fill("#q", "giraffe");
            const local = { q: "giraffe", includeSuperseded: false, source: [], role: [] };
            await settled(page, laneKey(local));
            // This machine's own index is empty: nothing local.
            assert.equal(await page.locator(".lane[data-q] .card").count(), 0);
            await page.click(".chips.scope [data-scope=team]");
            await settled(page, laneKey({ ...local, scope: "team", machines: [] }));
            assert.deepEqual(
              await page.locator(".lane[data-q] .card .badge.machine").allTextContents(),
              ["ci-b", "laptop-a"],
            );
            assert.match(page.url(), /scope=team/);
            // The machine chips come from /api/team/status.
            await page.click(".chips.machines [data-machine=laptop-a]");
            await settled(page, laneKey({ ...local, scope: "team", machines: ["laptop-a"] }));
            assert.deepEqual(
              await page.locator(".lane[data-q] .card .badge.machine").allTextContents(),
              ["laptop-a"],
            );
            assert.match(page.url(), /machine=laptop-a/);
            await page.click(".chips.machines [data-machine=laptop-a]");
            await settled(page, laneKey({ ...local, scope: "team", machines: [] }));

            // Open ci-b's session: the remote page, not the local one.
            await page.click(".lane[data-q] .card:has(.badge.machine:text-is('ci-b')) .card-title");
            await page.waitForSelector(".remote-badge");
            await page.waitForFunction(() => document.querySelectorAll(".remote-entry").length > 0);
            assert.equal(await page.locator(".remote-badge").textContent(), "remote · ci-b");
            assert.ok(
              page.url().includes(`#/remote/ci-b/${encodeURIComponent(keyOf(sessions()[0]!))}`),
            );
            assert.equal(await page.locator("#detail-h").textContent(), "Long giraffe session");
            const rows = page.locator(".remote-entry");
            assert.equal(await rows.count(), 100);
            // Untrusted text stays text: the markup shows, no element is made from it.
            assert.equal(await rows.nth(1).locator(".remote-text").innerText(), HOSTILE);
            assert.equal(await page.locator(".remote-text img").count(), 0);
            assert.notEqual(await page.title(), "pwned");
            assert.ok((await rows.nth(0).locator("mark").allTextContents()).includes("giraffe"));
            await page.click("button.more");
            await page.waitForFunction(
              (n) => document.querySelectorAll(".remote-entry").length === n,
              LONG,
            );
            assert.equal(await page.locator("button.more").count(), 0);
            assert.equal(
              await rows.nth(LONG - 1).locator(".remote-text").innerText(),
              `giraffe note ${LONG - 1}`,
            );
            // Back returns to the team search with its scope.
            await page.goBack();
            await settled(page, laneKey({ ...local, scope: "team", machines: [] }));
            assert.equal(
              await page.locator(".chips.scope [data-scope=team]").getAttribute("aria-pressed"),
              "true",
            );
            assert.deepEqual(errors, []);
          });
        } finally {
          await context.close();
          await Deno.remove(profile, { recursive: true }).catch(() => {});
          await teamApp.server.shutdown();
          await plainApp.server.shutdown();
          await db.close();
        }
      });
    });
  },
});
