/**
 * Archive search in the dashboard, real Chromium (issue 29 item 4): a search whose answer
 * from the window is short offers "Search the archive"; following it puts scope=archive in
 * the URL and the request, shows the 40-day-old session the window skips under the
 * archive label, and "Back to recent sessions" returns to the window's answer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex } from "../lib/message_search/mod.ts";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { hermeticEnv } from "./helpers/temp.ts";
import { ARCHIVE_ENV, ARCHIVE_WORD, buildArchiveWorld } from "./helpers/archive_world.ts";

Deno.test({
  name: "dashboard: a short answer offers Search the archive, which finds the old session",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-archive-" });
    let rig: BrowserRig | null = null;
    try {
      await buildArchiveWorld(join(root, "home", ".codex"));
      const cfg = resolveConfig(hermeticEnv(root, ARCHIVE_ENV), { cwd: root });
      // Built before the daemon starts (the rig's daemon does not sweep at start).
      const idx = await createMessageIndex(cfg, { workers: 1 });
      await idx.indexer.sweep();
      await idx.archive.sweep();
      await idx.indexer.stop();
      rig = await startRig({ cfg });
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();

      const lane = page.locator(`section.lane[aria-labelledby="lane-msg-h"]`);
      await page.fill("#q", ARCHIVE_WORD);
      await page.waitForSelector(`section.lane[data-q="${ARCHIVE_WORD}"][data-state="ready"]`);
      await lane.locator(".card-item").first().waitFor();
      assert.equal(await lane.locator(".card-item").count(), 1);
      assert.match(await lane.innerText(), /rollout checklist/);
      assert.doesNotMatch(await lane.innerText(), /migration plan/);
      assert.equal(await lane.locator(".archive-label").count(), 0);

      const asked = page.waitForRequest((r) =>
        r.url().includes("/api/sessions/message-search") && r.url().includes("scope=archive")
      );
      await page.click('.lane .archive-link[data-archive="false"]');
      await asked;
      await page.waitForSelector(".lane .archive-label");
      await page.waitForFunction(() =>
        document.querySelector(`section.lane[aria-labelledby="lane-msg-h"]`)?.textContent?.includes(
          "migration plan",
        )
      );
      assert.match(new URL(page.url()).hash, /[?&]scope=archive(&|$)/);
      const text = await lane.innerText();
      assert.match(text, /From the archive/);
      assert.doesNotMatch(text, /rollout checklist/);
      assert.equal(await lane.locator(".card-item").count(), 1);
      await rig.screenshot("browser_archive");

      await page.click('.lane .archive-link[data-archive="true"]');
      await page.waitForFunction(() =>
        document.querySelector(`section.lane[aria-labelledby="lane-msg-h"]`)?.textContent?.includes(
          "rollout checklist",
        )
      );
      assert.doesNotMatch(new URL(page.url()).hash, /scope=archive/);
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
