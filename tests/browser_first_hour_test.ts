/**
 * What a new user meets in the dashboard's first hour (issue 14 §1 and §5), in real
 * Chromium against a real daemon: the search state lives in the URL (reload, Back/Forward
 * and a pasted link restore query and filters); `/` focuses search and ArrowDown walks
 * into the results; a whole card is the link and shows a short id, with no pencil; the
 * session filter finds sessions the list has not loaded; a source chip set while searching
 * is named on the recent list instead of filtering it silently; and, on a 600-session
 * store, the first query after the daemon starts settles complete without the "ran out of
 * time" banner (the cold arena's timeout pages are retried transparently).
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../lib/config.ts";
import { createSearchEngine, openStore, PARSER_VERSION } from "../lib/message_search/mod.ts";
import { NEEDLES } from "../bench/corpus/mod.ts";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildBigStore } from "./helpers/big_store.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { buildWorld } from "./helpers/world.ts";
import { laneKeys, laneSettled, search, untilFocused } from "./browser_page.ts";

const BULK = 60;

Deno.test({
  name: "dashboard: URL state, keyboard, cards, complete session filter, scoped chips",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-1h-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      // More sessions than one catalog page (50): the oldest are not loaded by the list.
      let ts = Date.now() - 6 * 86_400_000;
      let oldest = "";
      for (let i = 0; i < BULK; i++) {
        const s = await writeNativeSession(world.cfg.logsDir, {
          turns: 1,
          task: i === 0 ? "Quokka wrangling notes for the archive" : `Bulk okapi survey ${i}`,
          project: "/home/dev/zoo",
          now: () => (ts += 1000),
        });
        if (i === 0) oldest = s.id;
      }
      await world.indexer.sweep();
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      await rig.open();

      await t.step(
        "the session filter matches the whole catalog, not the loaded page",
        async () => {
          await page.waitForSelector("#recent-list .card");
          const loaded = await page.locator("#recent-list .card-item").count();
          assert.equal(loaded, 50, "one page loaded");
          assert.equal(
            await page.locator(`#recent-list a[href*="${oldest}"]`).count(),
            0,
            "the oldest session is not on the loaded page",
          );
          await page.fill("#q", "quokka ARCHIVE");
          const hit = page.locator(`.lane[data-filter-q] a.card-link[href*="${oldest}"]`);
          await hit.waitFor({ timeout: 10_000 });
          assert.match(
            await page.locator(".lane[data-filter-q] .lane-status").innerText(),
            /^1 session matches/,
          );
        },
      );

      await t.step(
        "query and filters live in the URL: reload, Back/Forward, a pasted link",
        async () => {
          await search(page, "okapi");
          await page.click(".filters button.src-intendant");
          await page.click(".filters button:has-text('User')");
          await laneSettled(page, "okapi", { source: ["intendant"], role: ["user"] });
          const url = page.url();
          assert.match(url, /#\/\?q=okapi&source=intendant&role=user$/);
          await page.reload();
          await page.waitForSelector("[data-app-ready]");
          await laneSettled(page, "okapi", { source: ["intendant"], role: ["user"] });
          assert.equal(await page.inputValue("#q"), "okapi");
          assert.equal(
            await page.locator(".filters button.src-intendant").getAttribute("aria-pressed"),
            "true",
          );
          const keys = await laneKeys(page);
          assert.ok(keys.length > 0);
          // Open a hit: the detail's URL carries the session and the hit.
          await page.locator(".lane[data-q] a.hit").first().click();
          await page.locator(".entry.anchored").waitFor();
          assert.match(page.url(), /#\/session\/[^?]+\?locate=[^&]+&q=okapi$/);
          const detailUrl = page.url();
          await page.goBack();
          await laneSettled(page, "okapi", { source: ["intendant"], role: ["user"] });
          assert.equal(page.url(), url);
          await page.goForward();
          await page.locator(".entry.anchored").waitFor();
          assert.equal(page.url(), detailUrl);
          // A pasted link in a fresh tab restores the same view.
          const other = await rig!.context.newPage();
          await other.goto(url);
          await other.waitForSelector("[data-app-ready]");
          await laneSettled(other, "okapi", { source: ["intendant"], role: ["user"] });
          assert.deepEqual(await laneKeys(other), keys);
          await other.goto(detailUrl);
          await other.locator(".entry.anchored").waitFor();
          await other.close();
        },
      );

      await t.step(
        "`/` focuses search from anywhere; ArrowDown walks into the results",
        async () => {
          // From a detail page, `/` returns to the list with its query and focuses the box.
          await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
          assert.ok(page.url().includes("#/session/"), "on the detail page");
          await page.keyboard.press("/");
          await page.waitForFunction(() => document.activeElement?.id === "q");
          assert.equal(await page.inputValue("#q"), "okapi");
          await laneSettled(page, "okapi", { source: ["intendant"], role: ["user"] });
          await page.keyboard.press("ArrowDown");
          await untilFocused(page, '[data-result][href^="#/session/"]');
          const first = await page.evaluate(() => document.activeElement?.getAttribute("href"));
          await page.keyboard.press("ArrowDown");
          await page.waitForFunction(
            (was) => document.activeElement?.getAttribute("href") !== was,
            first,
          );
          const second = await page.evaluate(() => document.activeElement?.getAttribute("href"));
          assert.ok(second?.startsWith("#/session/") && second !== first, "moved to the next");
          await page.keyboard.press("ArrowUp");
          await page.keyboard.press("ArrowUp");
          await untilFocused(page, "#q");
          // `/` typed inside the box is just a character.
          await page.keyboard.press("End");
          await page.keyboard.type("/");
          assert.equal(await page.inputValue("#q"), "okapi/");
          await page.fill("#q", "okapi");
        },
      );

      await t.step(
        "a whole card is the link; ids are short, full on hover; no pencil",
        async () => {
          await page.fill("#q", "");
          await page.click(".filters button.src-intendant"); // off again
          await page.waitForSelector("#recent-list .card");
          const card = page.locator("#recent-list .card").first();
          assert.equal(await page.locator("#recent-list .rename-btn").count(), 0);
          const sid = card.locator(".sid");
          const shown = (await sid.innerText()).trim();
          const full = (await sid.getAttribute("title"))!.replace(/ — click to copy$/, "");
          assert.equal(shown.length, 8);
          assert.ok(full.startsWith(shown) && full.length > 8, `${shown} / ${full}`);
          const href = await card.locator("a.card-link").getAttribute("href");
          // Click the card's meta line, away from the title and the id button.
          const box = (await card.locator(".card-meta").boundingBox())!;
          await page.mouse.click(box.x + 4, box.y + box.height / 2);
          await page.waitForFunction((h) => location.hash === h, href);
          await page.goBack();
          // The id button copies instead of navigating.
          await page.waitForSelector("#recent-list .card");
          await rig!.context.grantPermissions(["clipboard-read", "clipboard-write"], {
            origin: new URL(rig!.base).origin,
          });
          const before = await page.evaluate(() => location.hash);
          const idButton = page.locator("#recent-list .card").first().locator(".sid");
          await idButton.click();
          // The copy is asynchronous: the button says when it is done.
          await idButton.filter({ hasText: "copied" }).waitFor();
          assert.equal(await page.evaluate(() => location.hash), before);
          assert.equal(await page.evaluate(() => navigator.clipboard.readText()), full);
        },
      );

      await t.step("a source chip set while searching is named on the recent list", async () => {
        // The role chip pressed two steps ago is still set, and shows again with a query.
        await search(page, "okapi", { role: ["user"] });
        assert.equal(
          await page.locator(".filters button:has-text('User')").getAttribute("aria-pressed"),
          "true",
        );
        await page.click(".filters button.src-codex");
        await page.fill("#q", "");
        await page.waitForSelector("#recent-list");
        const note = page.locator(".filter-note");
        await note.waitFor();
        assert.match(await note.innerText(), /Only Codex sessions are listed/);
        // Role and rewound filters act on message search alone: hidden with no query.
        assert.equal(await page.locator("#include-superseded").count(), 0);
        assert.equal(await page.locator(".filters button:has-text('User')").count(), 0);
        await note.locator("button").click();
        await note.waitFor({ state: "detached" });
        assert.equal(
          await page.locator(".filters button.src-codex").getAttribute("aria-pressed"),
          "false",
        );
      });
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "dashboard: the first query after start settles complete, without the partial banner",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-cold-" });
    let rig: BrowserRig | null = null;
    try {
      const big = await buildBigStore(root, { sessions: 600, messages: 3_600 });
      const store = await openStore({
        root: big.storeRoot,
        parserVersion: PARSER_VERSION,
        windowDays: 14,
      });
      const complete = await createSearchEngine({
        store,
        windowDays: 14,
        cursorKey: new Uint8Array(32).fill(3),
      }).search({ q: NEEDLES.rare, limit: 20, complete: true });
      assert.ok(complete.groups.length > 0);
      const cfg = resolveConfig(big.env, { cwd: root });
      rig = await startRig({ cfg });
      const { page } = rig;
      const answers: string[] = [];
      page.on("response", async (r) => {
        if (!r.url().includes("/api/sessions/message-search")) return;
        const b = await r.json().catch(() => null);
        if (b) answers.push(`${b.state}/${b.partial_reason ?? ""}@${Math.round(b.took_ms)}ms`);
      });
      await rig.open();
      await search(page, NEEDLES.rare);
      const lane = page.locator(".lane[data-q]");
      assert.equal(await lane.locator(".notice").count(), 0, `no banner (${answers.join(" ")})`);
      assert.deepEqual(await laneKeys(page), complete.groups.map((g) => g.session_key));
      console.log(`first query answers: ${answers.join(" ")}`);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
