/**
 * Deep Search in the dashboard, real Chromium (issue 29 item 5): a word that exists only in
 * a Codex command's output comes back empty from message search, whose empty state offers
 * "Search tool output too"; following it puts scope=deep in the URL, pages
 * /api/sessions/search with progress, and shows the hit (agent, file and line, the word
 * marked, the key in the output masked) with what was scanned per agent — the database
 * agents, of which the vault holds no export here, named as not scanned. The hit opens its session; "Back to message search" returns to the
 * message lane. A word in no file ends "No matches in any file" after a complete scan.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex } from "../lib/message_search/mod.ts";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { JsonlAppendTarget } from "./fixtures/types.ts";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { CODEX_WORD, codexOutputLine, SECRET } from "./helpers/deep_plants.ts";
import { hermeticEnv } from "./helpers/temp.ts";

Deno.test({
  name: "dashboard: an empty search offers Search tool output too, which finds the Codex output",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-deep-" });
    let rig: BrowserRig | null = null;
    try {
      const fx = await buildAllFixtures(root, { sources: "all" });
      const codex = fx.homes.codex!.appendTarget as JsonlAppendTarget;
      Deno.writeTextFileSync(codex.path, codexOutputLine(CODEX_WORD), { append: true });
      const cfg = resolveConfig(hermeticEnv(root, fx.env), { cwd: root });
      const idx = await createMessageIndex(cfg, { workers: 1 });
      await idx.indexer.sweep();
      await idx.indexer.stop();
      rig = await startRig({ cfg });
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();

      await page.fill("#q", CODEX_WORD);
      await page.waitForSelector(`section.lane[data-q="${CODEX_WORD}"][data-state="ready"]`);
      const lane = page.locator(`section.lane[aria-labelledby="lane-msg-h"]`);
      await lane.locator(".empty").waitFor();
      assert.equal(await lane.locator(".card-item").count(), 0);
      const asked = page.waitForRequest((r) => r.url().includes("/api/sessions/search?"));
      await page.click(".lane .deep-link");
      await asked;
      assert.match(new URL(page.url()).hash, /[?&]scope=deep(&|$)/);
      const deep = page.locator("section.deep-lane");
      await page.waitForSelector(`section.deep-lane[data-state="done"]`);
      const hits = deep.locator(".deep-hit");
      assert.equal(await hits.count(), 1);
      assert.equal(await hits.first().getAttribute("data-source"), "codex");
      assert.equal(await hits.first().locator("mark").innerText(), CODEX_WORD);
      const text = await deep.innerText();
      assert.ok(!text.includes(SECRET), "the key in the output is masked");
      assert.match(text, /Complete: \d+ sessions/);
      // No keep ran here, so the database agents have no export to scan and are named.
      assert.match(text, /not scanned: opencode/);
      assert.match(await hits.first().locator(".deep-file").innerText(), /\.jsonl:\d+$/);
      await rig.screenshot("browser_deep");
      const noHorizontal = await page.evaluate(() =>
        document.documentElement.scrollWidth <= document.documentElement.clientWidth
      );
      assert.ok(noHorizontal, "nothing widens the page");

      // The hit opens its session; Back returns to the deep answer.
      await hits.first().locator("a").click();
      await page.waitForFunction(
        (key) => decodeURIComponent(location.hash).startsWith(`#/session/${key}`),
        codex.key,
      );
      await page.goBack();
      await page.waitForSelector(`section.deep-lane[data-state="done"]`);

      await page.click(".deep-leave");
      await page.waitForSelector(`section.lane[aria-labelledby="lane-msg-h"][data-state="ready"]`);
      assert.doesNotMatch(new URL(page.url()).hash, /scope=deep/);

      await page.fill("#q", "ZZQ-NOWHERE-31337");
      await page.waitForSelector(`section.lane[data-q="ZZQ-NOWHERE-31337"][data-state="ready"]`);
      await page.click(".lane .deep-link");
      await page.waitForSelector(`section.deep-lane[data-state="done"]`);
      assert.match(await deep.innerText(), /No matches in any file/);
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
