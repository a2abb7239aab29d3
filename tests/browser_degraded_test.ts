/**
 * F8 in real Chromium: when a search meets damaged index data, the dashboard's message
 * lane says plainly how many sessions could not be searched and that they are being
 * rebuilt (never "No messages match"), and — the search having started the repair sweep —
 * it asks again on its own and shows the whole answer, the notice gone. The real daemon
 * (startDaemon, embedded UI, real port) over the F8 world; the damage is done while it
 * runs, before any search reads those shards.
 */
import assert from "node:assert/strict";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildF8World, damage, genPath } from "./helpers/degraded_world.ts";

Deno.test({
  name: "F8 dashboard: the lane names sessions it could not search, then heals by itself",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-f8-" });
    let rig: BrowserRig | null = null;
    try {
      const w = await buildF8World(root);
      const needle = "f8alpha";
      const holders = [...w.planted.get(needle)!];
      rig = await startRig(w);
      const { page } = rig;
      const m = await w.store.readManifest();
      for (const [i, key] of holders.entries()) {
        for (const g of m.sessions[key]!.generations) await damage(genPath(w, g), i % 3, i + 1);
      }
      await rig.open();
      await page.fill("#q", needle);
      const lane = page.locator(`.lane[data-q="${needle}"]`);
      await page.waitForFunction(
        (q) => {
          const l = document.querySelector(`.lane[data-q="${q}"]`);
          return l !== null && Number(l.getAttribute("data-degraded")) > 0;
        },
        needle,
        { timeout: 10_000 },
      );
      const notice = await lane.locator(".notice").innerText();
      assert.match(
        notice,
        /^\d+ sessions could not be searched: their index data was damaged and is being rebuilt/,
      );
      assert.equal(
        await lane.getByText("No matches in the whole index").count(),
        0,
        "never claims none",
      );
      await rig.screenshot("f8-lane-degraded");
      // No keystroke: the lane asks again once the repair sweep has run.
      await page.waitForFunction(
        (q) => {
          const l = document.querySelector(`.lane[data-q="${q}"]`);
          return l?.getAttribute("data-degraded") === "0" &&
            l.getAttribute("data-state") === "ready";
        },
        needle,
        { timeout: 15_000 },
      );
      assert.equal(await lane.locator(".card-item").count(), holders.length);
      assert.equal(await lane.locator(".notice").count(), 0, "no notice once whole");
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true });
    }
  },
});
