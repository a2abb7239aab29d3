/**
 * Delete and Undo in real Chromium against a real daemon (tests/helpers/browser.ts): the
 * detail header's Delete asks first in a modal dialog (focus on Cancel — waited for, as
 * every focus and scroll this suite checks: the app moves them in effects —, Escape
 * cancels and touches nothing), confirming moves the session to the trash and returns to the
 * list without it, and the toast's Undo restores it: the list shows it again and its
 * directory is back in logs/. External sessions offer no Delete.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { TRASH_KEEP_DAYS } from "../lib/catalog/mod.ts";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildWorld } from "./helpers/world.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { untilFocused } from "./browser_page.ts";

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "dashboard: delete asks, trashes, and Undo brings the session back",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-delete-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      const title = "Platypus deletion drill";
      const s = await writeNativeSession(world.cfg.logsDir, { turns: 1, task: title });
      await world.indexer.sweep();
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();
      const card = page.locator("#recent-list .card", { hasText: title });
      await card.first().waitFor();
      const openDetail = async () => {
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(`intendant:${s.id}`)}`);
        await page.locator("#delete-session").waitFor();
      };

      await t.step("Delete asks first; Escape cancels and nothing moves", async () => {
        await openDetail();
        await page.click("#delete-session");
        const dialog = page.locator("[role=alertdialog]");
        await dialog.waitFor();
        assert.equal(await dialog.getAttribute("aria-modal"), "true");
        const text = await dialog.innerText();
        assert.ok(text.includes(title), text);
        assert.ok(text.includes(`${TRASH_KEEP_DAYS} days`), "the dialog names the keep time");
        assert.ok(text.includes(`intendant restore ${s.id}`), text);
        // Focus starts on the safe answer. The dialog moves it there in an effect after its
        // first render, so wait for it: read at once, under load it was still on <body>.
        await untilFocused(page, "[role=alertdialog] #cancel-delete");
        assert.equal((await page.locator("#cancel-delete").innerText()).trim(), "Cancel");
        await rig!.screenshot("delete-confirm-dialog");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
        await untilFocused(page, "#delete-session"); // focus returns to the opener
        assert.ok(exists(s.dir), "cancel touches nothing");
      });

      await t.step("confirming trashes it and returns to a list without it", async () => {
        await page.click("#delete-session");
        await page.click("#confirm-delete");
        await page.waitForFunction(() => location.hash === "#/" || location.hash === "");
        const toast = page.locator(".toast");
        await toast.waitFor();
        assert.match(await toast.innerText(), /Moved “Platypus deletion drill” to the trash\./);
        await card.first().waitFor({ state: "detached" });
        assert.ok(!exists(s.dir));
        const trash = [...Deno.readDirSync(join(world.cfg.stateRoot, "trash"))].map((e) => e.name);
        assert.deepEqual(trash.map((n) => n.replace(/^\d+-/, "")), [s.id]);
        await rig!.screenshot("delete-undo-toast");
      });

      await t.step("Undo restores it: the toast says so and the list shows it again", async () => {
        await page.click("#undo-delete");
        await page.locator(".toast", { hasText: "is back" }).waitFor();
        await card.first().waitFor();
        assert.ok(exists(join(s.dir, "session.jsonl")));
        const m = await world.store.readManifest();
        assert.equal(m.tombstones[`intendant:${s.id}`], undefined, "tombstone lifted");
      });

      await t.step("external sessions offer no Delete", async () => {
        const codex = Object.keys((await world.store.readManifest()).sessions)
          .find((k) => k.startsWith("codex:"))!;
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(codex)}`);
        await page.locator("#export-md").waitFor();
        assert.equal(await page.locator("#delete-session").count(), 0);
      });
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
