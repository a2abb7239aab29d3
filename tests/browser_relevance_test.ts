/**
 * The dashboard's "Best match | Newest" switch (issue 27) in real Chromium against a real
 * daemon over a real index (tests/browser_relevance_world.ts): the switch writes
 * `sort=relevance` into the URL and the request (Newest writes neither: the pre-switch
 * URL and request); a reload keeps Best match; a relevance page marks each related group
 * with the badge its `relevance` fields say (exact groups carry none and come first, after
 * them a divider); a question of only common words shows the one line instead of an empty
 * state; a hit opens the detail with the kept words; the ⌘K palette shares the order. Nothing of ours is mocked: the pages are the
 * engine's own answers, read off the wire to check what the page shows against them.
 */
import assert from "node:assert/strict";
import type { Page, Response } from "playwright-core";
import type { SearchGroup, SearchResponse } from "../lib/message_search/mod.ts";
import { laneKey } from "../ui/lib/search_lane.ts";
import { ONLY_COMMON_TEXT, relatedLabel } from "../ui/lib/relevance.ts";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildRelevanceWorld, ONLY_COMMON_Q, RELEVANCE_Q } from "./browser_relevance_world.ts";

const SEARCH_PATH = "/api/sessions/message-search";

/** Waits until the lane shows settled results for `q` in order `sort`. */
async function laneSettled(page: Page, q: string, sort: "newest" | "relevance"): Promise<void> {
  const key = laneKey({
    q,
    includeSuperseded: false,
    source: [],
    role: [],
    ...(sort === "relevance" ? { sort } : {}),
  });
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

/** The next message-search answer for `q` (with limit `limit`), parsed. */
function nextPage(page: Page, q: string, limit = 20): Promise<{ url: URL; body: SearchResponse }> {
  return page.waitForResponse((r: Response) => {
    const u = new URL(r.url());
    return u.pathname === SEARCH_PATH && u.searchParams.get("q") === q &&
      u.searchParams.get("limit") === String(limit) && r.status() === 200;
  }, { timeout: 15_000 }).then(async (r) => ({ url: new URL(r.url()), body: await r.json() }));
}

/** Each card of the lane: its session key, tier attribute and related badge text. */
function laneCards(page: Page) {
  return page.locator(".lane[data-q] .card").evaluateAll((els) =>
    els.map((e) => ({
      key: decodeURIComponent(
        (e.querySelector(".card-title") as HTMLAnchorElement).hash.replace("#/session/", ""),
      ),
      tier: e.getAttribute("data-tier"),
      badge: e.querySelector(".badge.related")?.textContent ?? null,
      dashed: e.classList.contains("related"),
    }))
  );
}

/** The pressed option of the switch in `scope`. */
function pressed(page: Page, scope: string): Promise<string | null> {
  return page.locator(`${scope} .sort-toggle [aria-pressed="true"]`).getAttribute("data-sort");
}

Deno.test({
  name: "dashboard: Best match is in the URL and the request, survives a reload, marks related " +
    "groups and says when only common words were asked",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-relevance-" });
    let rig: BrowserRig | null = null;
    try {
      const { world, planted } = await buildRelevanceWorld(root);
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();

      // Newest (the default): no sort in the URL, none in the request, no marks.
      const first = nextPage(page, RELEVANCE_Q);
      await page.fill("#q", RELEVANCE_Q);
      const newest = await first;
      await laneSettled(page, RELEVANCE_Q, "newest");
      assert.equal(newest.url.searchParams.get("sort"), null, "a newest request sends no sort");
      assert.ok(!new URL(page.url()).hash.includes("sort="), page.url());
      assert.equal(await pressed(page, ".lane"), "newest");
      assert.equal(await page.locator(".lane .badge.related").count(), 0);

      // Best match: sort=relevance in the URL and the request.
      const best = nextPage(page, RELEVANCE_Q);
      await page.click('.lane .sort-toggle [data-sort="relevance"]');
      const rel = await best;
      await laneSettled(page, RELEVANCE_Q, "relevance");
      assert.equal(rel.url.searchParams.get("sort"), "relevance");
      assert.match(new URL(page.url()).hash, /[?&]sort=relevance(&|$)/);
      assert.equal(await pressed(page, ".lane"), "relevance");
      await assertRelevancePage(page, rel.body, planted);

      // A reload of that URL keeps Best match and asks for it again.
      const again = nextPage(page, RELEVANCE_Q);
      await page.reload();
      await page.waitForSelector("[data-app-ready]");
      const reloaded = await again;
      await laneSettled(page, RELEVANCE_Q, "relevance");
      assert.equal(reloaded.url.searchParams.get("sort"), "relevance");
      assert.equal(await pressed(page, ".lane"), "relevance");
      assert.equal(await page.inputValue("#q"), RELEVANCE_Q);
      await assertRelevancePage(page, reloaded.body, planted);

      // Only common words: one line, no "no matches" claim.
      const common = nextPage(page, ONLY_COMMON_Q);
      await page.fill("#q", ONLY_COMMON_Q);
      const commonPage = await common;
      await laneSettled(page, ONLY_COMMON_Q, "relevance");
      assert.equal(commonPage.url.searchParams.get("sort"), "relevance");
      assert.equal(
        commonPage.body.query_terms?.only_common,
        true,
        "the engine says the question held only common words",
      );
      const line = page.locator(".lane[data-q] .only-common");
      assert.equal((await line.textContent())?.trim(), ONLY_COMMON_TEXT);
      assert.equal(await page.locator(".lane[data-q] .card").count(), 0);
      assert.equal(await page.locator(".lane[data-q] .empty:not(.only-common)").count(), 0);
      await rig.screenshot("relevance-only-common");

      // Back to Newest: the field leaves the URL and the request, the marks go.
      await page.fill("#q", RELEVANCE_Q);
      await laneSettled(page, RELEVANCE_Q, "relevance");
      const back = nextPage(page, RELEVANCE_Q);
      await page.click('.lane .sort-toggle [data-sort="newest"]');
      const newestAgain = await back;
      await laneSettled(page, RELEVANCE_Q, "newest");
      assert.equal(newestAgain.url.searchParams.get("sort"), null);
      assert.ok(!new URL(page.url()).hash.includes("sort="), page.url());
      assert.equal(await page.locator(".lane .badge.related").count(), 0);
      assert.equal(await page.locator(".lane .related-divider").count(), 0);

      // The palette shares the order: Best match there asks with sort and writes the URL.
      await page.keyboard.press("Control+k");
      await page.locator(".palette").waitFor();
      assert.equal(await pressed(page, ".palette"), "newest");
      await page.click('.palette .sort-toggle [data-sort="relevance"]');
      assert.ok(
        await page.evaluate(() => document.activeElement?.getAttribute("role") === "combobox"),
        "the palette's input keeps the focus",
      );
      const pal = nextPage(page, RELEVANCE_Q, 8);
      await page.keyboard.type(RELEVANCE_Q);
      const palPage = await pal;
      assert.equal(palPage.url.searchParams.get("sort"), "relevance");
      await page.waitForFunction(
        (want) =>
          document.querySelector(".palette [aria-busy=false][data-q]")?.getAttribute("data-q") ===
            want,
        RELEVANCE_Q,
      );
      const related = palPage.body.groups.filter((g) => g.relevance?.tier === "related");
      assert.ok(related.length > 0, "the palette's page holds related groups");
      assert.ok(
        await page.locator('.palette .pal-opt[data-kind="message"] .badge.related').count() > 0,
        "a related hit in the palette is marked",
      );
      await page.keyboard.press("Escape");
      await page.locator(".palette").waitFor({ state: "detached" });
      assert.match(new URL(page.url()).hash, /[?&]sort=relevance(&|$)/);
      assert.equal(await pressed(page, ".lane"), "relevance");
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});

/** What a relevance page must show, checked against the engine's own answer. */
async function assertRelevancePage(
  page: Page,
  body: SearchResponse,
  planted: { exact: string[]; partial: string; spread: string; loose: string },
): Promise<void> {
  assert.ok(
    body.groups.every((g) => g.relevance !== undefined) && body.query_terms !== undefined,
    "the server answered a relevance page (every group has `relevance`, the page `query_terms`)",
  );
  assert.deepEqual([...body.query_terms!.kept].sort(), ["lantern", "marmot"]);
  const byKey = new Map<string, SearchGroup>(body.groups.map((g) => [g.session_key, g]));
  const cards = await laneCards(page);
  assert.deepEqual(cards.map((c) => c.key), body.groups.map((g) => g.session_key), "page order");
  for (const c of cards) {
    const g = byKey.get(c.key)!;
    assert.equal(c.tier, g.relevance!.tier, c.key);
    assert.equal(c.badge, relatedLabel(g.relevance), `${c.key}: the badge says its fields`);
    assert.equal(c.dashed, g.relevance!.tier === "related", c.key);
  }
  const tiers = cards.map((c) => c.tier);
  const firstRelated = tiers.indexOf("related");
  assert.ok(firstRelated > 0, `exact groups first, then related ones: ${tiers.join(",")}`);
  assert.ok(tiers.slice(firstRelated).every((t) => t === "related"), tiers.join(","));
  for (const key of planted.exact) assert.equal(byKey.get(key)?.relevance?.tier, "exact", key);
  for (const key of [planted.partial, planted.spread, planted.loose]) {
    assert.equal(byKey.get(key)?.relevance?.tier, "related", key);
  }
  const badgeOf = (key: string) => cards.find((c) => c.key === key)!.badge;
  assert.equal(badgeOf(planted.partial), "related · 1 of 2 words");
  assert.equal(badgeOf(planted.spread), "related · all words, across messages");
  assert.match(badgeOf(planted.loose)!, /without accents/);
  // A hit opens the detail with the words searched, not the question's common words.
  const hitHref = await page.locator(".lane[data-q] .card a.hit").first().getAttribute("href");
  const hitQ = new URLSearchParams(hitHref!.split("?")[1]).get("q");
  assert.equal(hitQ, body.query_terms!.kept.join(" "));
  // The divider sits right before the first related card.
  const dividerNext = await page.locator(".lane[data-q] .related-divider").evaluate((d) =>
    d.nextElementSibling?.querySelector(".card")?.getAttribute("data-tier")
  );
  assert.equal(dividerNext, "related");
}
