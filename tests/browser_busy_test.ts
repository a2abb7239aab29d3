/**
 * The dashboard under the heavy routes' caps (issue 15 F4), in real Chromium against a
 * real daemon: the catalog listing and the session detail are each refused twice with the
 * daemon's own 429 `busy` answer (Retry-After: 1, served at the network layer, exactly as
 * a full gate answers) before the daemon is let through. The list and the detail must
 * render after retrying — never show the busy error — and no page error may occur.
 */
import assert from "node:assert/strict";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { buildWorld } from "./helpers/world.ts";

const BUSY = (what: string) => ({
  status: 429,
  headers: { "retry-after": "1", "content-type": "application/json", "cache-control": "no-store" },
  body: JSON.stringify({ error: "busy", message: `Too many ${what} in flight; retry shortly` }),
});

Deno.test({
  name: "dashboard: the catalog and the detail retry a busy (429) answer instead of failing",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-busy-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      const title = "Wombat busy-retry drill";
      const s = await writeNativeSession(world.cfg.logsDir, { turns: 2, task: title });
      await world.indexer.sweep();
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      const refused = { list: 0, detail: 0 };
      await page.route(/\/api\/sessions\?/, (route) => {
        if (refused.list < 2) {
          refused.list++;
          return route.fulfill(BUSY("session listings"));
        }
        return route.continue();
      });
      const detailPath = `/api/session/${encodeURIComponent(`intendant:${s.id}`)}`;
      await page.route((u) => u.pathname === detailPath, (route) => {
        if (refused.detail < 2) {
          refused.detail++;
          return route.fulfill(BUSY("session detail reads"));
        }
        return route.continue();
      });
      await rig.open();
      await page.locator("#recent-list .card", { hasText: title }).first().waitFor({
        timeout: 15_000,
      });
      await page.goto(`${rig.base}#/session/${encodeURIComponent(`intendant:${s.id}`)}`);
      await page.locator(".entry", { hasText: "Turn 2: checked" }).first().waitFor({
        timeout: 15_000,
      });
      const text = await page.locator("body").innerText();
      assert.ok(!text.includes("in flight; retry shortly"), "the busy answer is never shown");
      assert.deepEqual(refused, { list: 2, detail: 2 }, "both were refused before rendering");
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
