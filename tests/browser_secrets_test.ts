/**
 * Secret masking in the dashboard, in real Chromium against a real daemon over a real
 * index (tests/helpers/browser.ts): a native session whose task and replies hold freshly
 * generated keys of every kind (tests/helpers/secret_keys.ts — real-shaped, never
 * real). With "Mask secrets" on (the default) no key appears anywhere on the page —
 * search snippets, card titles, the detail's title, messages and tool output — and each
 * shows as its first 4 characters and kind; a search BY a key still finds its message
 * (the index keeps the original) and marks the masked key; the Markdown export is
 * masked; turning the switch off shows the keys as written, survives a reload
 * (localStorage), and leaves the export masked.
 */
import assert from "node:assert/strict";
import { ARTIFACTS, BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { maskedForm } from "../lib/secrets/mod.ts";
import { plantedKeys } from "./helpers/secret_keys.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { buildWorld } from "./helpers/world.ts";
import { laneSettled, marks } from "./browser_page.ts";

const masked = (k: { kind: string; secret: string }) => maskedForm(k.secret, k.kind);

Deno.test({
  name: "dashboard: secrets masked in search, detail and export; the switch shows them",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-secrets-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      const keys = plantedKeys();
      const [inTask, ...inReplies] = keys;
      const github = keys.find((k) => k.kind === "github token")!;
      const s = await writeNativeSession(world.cfg.logsDir, {
        turns: 1,
        task: `Rotate the leaked ${inTask!.secret} before Friday`,
        word: () => inReplies.map((k) => k.line).join("\n\n"),
      });
      // A real run whose command prints a key: the tool call's input and output hold it.
      const stripe = keys.find((k) => k.kind === "stripe key")!;
      const scriptPath = `${root}/secret-script.json`;
      Deno.writeTextFileSync(
        scriptPath,
        JSON.stringify({
          turns: [{
            text: "Checking the billing env.",
            commands: [{ exec: `echo STRIPE=${stripe.secret}`, nonce: "s1" }],
            done: true,
          }],
        }),
      );
      const run = await runIntendant(root, ["run", "--mock-script", scriptPath, "Billing env"], {
        env: world.env,
      });
      assert.equal(run.code, 0, run.stderr);
      const toolKey = `intendant:${sessionOf(run).id}`;
      await world.indexer.sweep();
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();
      const body = () => page.locator("body").innerText();
      const noKeyShown = async (where: string) => {
        const text = await body();
        for (const k of keys) assert.ok(!text.includes(k.secret), `${k.kind} shown in ${where}`);
        return text;
      };
      const exportMarkdown = async () => {
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.click("#export-md"),
        ]);
        return await Deno.readTextFile((await download.path())!);
      };

      await t.step("the switch is on by default, in the top bar", async () => {
        const sw = page.locator(".topbar #mask-secrets");
        assert.equal(await sw.isChecked(), true);
        assert.equal(await page.locator("label.mask-switch").innerText(), "Mask secrets");
      });

      await t.step("a search by the key finds its message and marks the masked key", async () => {
        await page.fill("#q", github.secret);
        await laneSettled(page, github.secret);
        const lane = page.locator(".lane[data-q]");
        const hit = lane.locator(`a.hit[href*="${encodeURIComponent(`intendant:${s.id}`)}"]`);
        await hit.first().waitFor();
        assert.deepEqual(await marks(hit.first()), [masked(github)]);
        const text = await noKeyShown("the search results");
        assert.ok(text.includes(masked(inTask!)), "the card's title is masked");
      });

      await t.step("the ⌘K palette masks its message snippets too", async () => {
        await page.keyboard.press("Control+K");
        await page.locator(".palette input").fill(github.secret);
        const option = page.locator('.pal-opt[data-kind="message"]').first();
        await option.waitFor();
        assert.deepEqual(await marks(option), [masked(github)]);
        assert.ok(!(await page.locator(".palette").innerText()).includes(github.secret));
        await page.keyboard.press("Escape");
        await page.locator(".palette").waitFor({ state: "detached" });
      });

      await t.step("the detail masks the title and every message", async () => {
        // Opened from the hit: the anchored row marks the masked key the query matched.
        await page.locator(".lane[data-q] a.hit").first().click();
        await page.locator("#export-md").waitFor();
        const anchored = page.locator(".entry.anchored");
        await anchored.waitFor();
        assert.deepEqual(await marks(anchored), [masked(github)]);
        await page.locator(".entry.kind-message").first().waitFor();
        const text = await noKeyShown("the detail");
        for (const k of keys) {
          assert.ok(text.includes(masked(k)), `${k.kind} masked form shown: ${text}`);
        }
        const h1 = await page.locator("#detail-h").innerText();
        assert.ok(h1.startsWith(`Rotate the leaked ${masked(inTask!)}`), h1);
        const badges = await page.locator(".badge.masked").allInnerTexts();
        assert.ok(badges.includes(`${inReplies.length} secrets masked`), badges.join(" | "));
      });

      await t.step("a tool call's input and output are masked", async () => {
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(toolKey)}`);
        const call = page.locator("details.tool-call").first();
        await call.waitFor();
        await call.locator("summary").click();
        const out = call.locator(".tool-out pre");
        await out.waitFor({ state: "visible" });
        assert.equal(
          await call.locator(".tool-input").innerText(),
          `echo STRIPE=${masked(stripe)}`,
        );
        assert.equal((await out.innerText()).trim(), `STRIPE=${masked(stripe)}`);
        assert.ok(!(await body()).includes(stripe.secret));
        await page.goBack();
        await page.locator(".entry.anchored").waitFor();
      });

      await t.step("the switch fits a 390 px top bar without widening the page", async () => {
        await rig!.screenshot("secrets-masked-detail-1280");
        await page.setViewportSize({ width: 390, height: 800 });
        const fits = await page.evaluate(() =>
          document.documentElement.scrollWidth <= innerWidth &&
          [...document.querySelectorAll(".topbar > *")].every((el) =>
            el.getBoundingClientRect().right <= innerWidth
          )
        );
        assert.ok(fits, "the top bar overflows at 390 px");
        await page.screenshot({
          path: `${ARTIFACTS}/secrets-topbar-390.png`,
          clip: { x: 0, y: 0, width: 390, height: 160 },
        });
        await page.setViewportSize({ width: 1280, height: 800 });
      });

      await t.step("the Markdown export is masked", async () => {
        const md = await exportMarkdown();
        for (const k of keys) {
          assert.ok(!md.includes(k.secret), `${k.kind} in the export`);
          assert.ok(md.includes(masked(k)), `${k.kind} masked in the export`);
        }
      });

      await t.step(
        "off: the keys show as written, after a reload too; export stays masked",
        async () => {
          await page.click("#mask-secrets");
          assert.equal(await page.locator("#mask-secrets").isChecked(), false);
          // Every view re-renders on the switch: wait for that before reading the page.
          await page.waitForFunction((v) => document.body.innerText.includes(v), github.secret);
          let text = await body();
          for (const k of keys) assert.ok(text.includes(k.secret), `${k.kind} shown when off`);
          assert.equal(await page.locator(".badge.masked").count(), 0);
          await page.reload();
          await page.waitForSelector("[data-app-ready]");
          await page.locator(".entry.kind-message").first().waitFor();
          assert.equal(await page.locator("#mask-secrets").isChecked(), false, "remembered");
          text = await body();
          for (const k of keys) assert.ok(text.includes(k.secret), `${k.kind} shown after reload`);
          const md = await exportMarkdown();
          for (const k of keys) assert.ok(!md.includes(k.secret), `${k.kind} in the export (off)`);
        },
      );

      await t.step("off in search: the snippet shows the key, marked as typed", async () => {
        await page.goto(`${rig!.base}#/`);
        await page.fill("#q", github.secret);
        await laneSettled(page, github.secret);
        const hit = page.locator(".lane[data-q] a.hit").first();
        assert.deepEqual(await marks(hit), [github.secret]);
      });

      await t.step("on again: everything is masked again at once", async () => {
        await page.click("#mask-secrets");
        await page.waitForFunction((v) => !document.body.innerText.includes(v), github.secret);
        await noKeyShown("the search results after switching back on");
      });
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
