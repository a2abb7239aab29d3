/**
 * A session that waits for a person, in real Chromium: the real runner (`intendant run`,
 * a subprocess writing into the rig's state root) asks a question; the detail view shows
 * it with status "waiting"; the test answers in the box, steers and rolls back through
 * the controls, and the view follows the runner live — the answer, the next question,
 * the steer delivered, the cut, the final "completed" with the controls gone — all
 * without a reload (a marker set on the page survives to the end).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildWorld } from "./helpers/world.ts";
import { readEvents, type Spawned, spawnIntendant } from "./helpers/cli.ts";
import { untilFocused } from "./browser_page.ts";

type Ev = { event: string; turn?: number; data?: Record<string, unknown> };

Deno.test({
  name: "a waiting session in real Chromium: answer, steer and rollback, followed live",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-waiting-" });
    let rig: BrowserRig | null = null;
    let run: Spawned | null = null;
    try {
      const world = await buildWorld(root);
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      const script = join(root, "ask.jsonc");
      Deno.writeTextFileSync(
        script,
        JSON.stringify({
          turns: [
            {
              text: "Plan A: release from main.",
              ask_human: "Which branch should I release from?",
            },
            // The sleeps hold "running" long enough to be seen between the questions.
            { commands: [{ exec: "sleep 2" }], ask_human: "Tag it as v2?" },
            { text: "Released and tagged.", commands: [{ exec: "sleep 1" }], done: true },
          ],
        }),
      );
      run = spawnIntendant(root, ["run", "--mock-script", script, "Release the app"], {
        env: world.env,
      });
      const dir = await Promise.race([
        run.dir,
        run.done.then((r) => Promise.reject(new Error(`The runner exited early: ${r.stderr}`))),
      ]);
      const id = dir.split("/").at(-1)!;
      const status = page.locator(".detail-head .status");
      const entry = (text: string) => page.locator(".timeline .entry", { hasText: text });
      await rig.open();
      // Each step builds on the last: after a failure the rest would only time out.
      let ok = true;
      const step = async (name: string, fn: () => Promise<void>) => {
        if (ok) ok = await t.step(name, fn);
      };

      await step("the detail view shows the question and status waiting", async () => {
        const deadline = Date.now() + 20_000;
        while (!run!.stderrSoFar().includes("ctl answer") && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(`intendant:${id}`)}`);
        await page.locator(".ask-question", { hasText: "Which branch should I release from?" })
          .waitFor({ timeout: 15_000 });
        await status.filter({ hasText: "waiting" }).waitFor();
        await page.locator(".notice", { hasText: "waiting for your answer" }).waitFor();
        await page.locator(".live-open").waitFor({ timeout: 10_000 });
        await page.evaluate(() => ((globalThis as { __noReload?: number }).__noReload = 1));
        await rig!.screenshot("waiting-session-question");
      });

      await step("answering in the box: the box goes, the run continues live", async () => {
        await page.click(".notice button", { timeout: 5_000 }); // "Answer" focuses the box
        await untilFocused(page, "#answer-text");
        await page.fill("#answer-text", "release/2.0");
        await page.click("#send-answer");
        await page.locator("#answer-text").waitFor({ state: "detached", timeout: 10_000 });
        await status.filter({ hasText: "running" }).waitFor({ timeout: 10_000 });
        await entry("release/2.0").waitFor({ timeout: 10_000 });
        await page.locator(".ask-question", { hasText: "Tag it as v2?" })
          .waitFor({ timeout: 15_000 });
        await status.filter({ hasText: "waiting" }).waitFor({ timeout: 10_000 });
      });

      await step("a steer and a rollback through the controls are queued", async () => {
        await page.fill("#steer-text", "also update the changelog");
        await page.click("#send-steer");
        await page.locator(".steer .action-status", { hasText: "Steer queued" }).waitFor();
        assert.equal(await page.inputValue("#steer-text"), "");
        await page.locator(".entry.kind-steer", { hasText: "also update the changelog" })
          .waitFor({ timeout: 10_000 });

        const options = await page.locator("#rollback-seq option").allTextContents();
        assert.ok(options.some((o) => o.startsWith("#1 · User: Release the app")), options.join());
        await page.selectOption("#rollback-seq", "1");
        await page.click("#start-rollback");
        await page.locator(".rollback-confirm", { hasText: "Keep messages up to #1" }).waitFor();
        await page.click("#confirm-rollback");
        await page.locator(".rollback .action-status", { hasText: "Rollback to #1 queued" })
          .waitFor();
      });

      await step("Ctrl+Enter answers; the view follows to completed, no reload", async () => {
        await page.fill("#answer-text", "yes, tag v2");
        await page.press("#answer-text", "Control+Enter");
        await status.filter({ hasText: "completed" }).waitFor({ timeout: 20_000 });
        await entry("Released and tagged.").waitFor();
        await page.locator(".entry.kind-cut").waitFor();
        await page.locator(".entry.superseded", { hasText: "Plan A: release from main." })
          .waitFor();
        assert.equal(await page.locator(".session-controls").count(), 0);
        assert.equal(await page.locator(".live").count(), 0, "the stream is closed");
        assert.equal(
          await page.evaluate(() => (globalThis as { __noReload?: number }).__noReload),
          1,
          "the page was never reloaded",
        );
        await rig!.screenshot("waiting-session-completed");
      });

      await step("the runner got exactly what the UI sent", async () => {
        const r = await run!.done;
        assert.equal(r.code, 0, r.stderr);
        const evs = readEvents(dir) as Ev[];
        const answers = evs.filter((e) =>
          e.event === "conversation_message" && e.data?.provenance === "ask_human_answer"
        ).map((e) => e.data!.text);
        assert.deepEqual(answers, ["release/2.0", "yes, tag v2"]);
        const delivered = evs.find((e) => e.event === "steer_delivered")!;
        assert.equal(delivered.turn, 3);
        assert.equal(
          evs.find((e) => e.event === "steer_requested")!.data!.text,
          "also update the changelog",
        );
        const cut = evs.find((e) => e.event === "conversation_rewound")!;
        assert.equal(cut.data!.cut_after_seq, 1);
        assert.deepEqual(pageErrors, []);
      });
    } finally {
      if (run) {
        try {
          run.child.kill("SIGTERM");
        } catch {
          // Already exited.
        }
        await run.done;
      }
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
