/**
 * First contact with the dashboard, in real Chromium against real daemons (issue 14):
 *  - no cookie, or a wrong `?token=`: the styled token page (the dashboard's stylesheet),
 *    telling to run `intendant url` — never the app's "Loading…" / "Load more sessions";
 *  - the app open when the token is rotated: the next request's 401 replaces the whole
 *    app with the same help, not one error per panel;
 *  - an empty index says where it looked for each source and which variable points it
 *    elsewhere; a long first sweep shows files and messages per source while it runs;
 *  - the coverage panel in plain words (no revision number as text, skip reasons as
 *    phrases with the code in the tooltip), collapsed to one line at 390 px until tapped.
 * Screenshots go to tests/artifacts/ (onboarding-*.png).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import { resolveConfig } from "../lib/config.ts";
import { rotateToken, startDaemon } from "../lib/server/mod.ts";
import type { Daemon } from "../lib/server/mod.ts";
import { UI_BUNDLE } from "../ui/gen/bundle.ts";
import { ARTIFACTS, BROWSER_AVAILABLE, CHROMIUM } from "./helpers/browser.ts";
import { buildWorld } from "./helpers/world.ts";
import { hermeticEnv } from "./helpers/temp.ts";
import { waitFor } from "./helpers/cli.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";

const BIG_SESSIONS = 400;

async function launch(profile: string): Promise<BrowserContext> {
  return await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
}

/** Starts a daemon serving the real UI on a free port and waits for its first sweep. */
async function daemonFor(cfg: ReturnType<typeof resolveConfig>): Promise<Daemon> {
  const d = await startDaemon({ ...cfg, server: { host: "127.0.0.1", port: 0 } }, {
    ui: UI_BUNDLE,
  });
  await waitFor(
    async () => {
      const r = await fetch(`${d.url}api/coverage`, {
        headers: { authorization: `Bearer ${d.token}` },
      });
      return (await r.json()).state === "ready";
    },
    60_000,
    "the first sweep",
  );
  return d;
}

async function expectTokenPage(page: Page, reason: "missing" | "invalid"): Promise<void> {
  const card = page.locator(`main.auth-page[data-auth=${reason}] .auth-card`);
  await card.waitFor();
  const text = await page.locator("body").innerText();
  assert.match(text, /intendant url/);
  assert.match(text, /daemon\.json/);
  assert.doesNotMatch(text, /Loading/);
  assert.doesNotMatch(text, /Load more/);
  assert.equal(await page.locator(".shell, .coverage, #recent-list").count(), 0, "no app");
  // The dashboard's own stylesheet, not a bare page: the card has the panel's radius.
  const radius = await card.evaluate((e) => getComputedStyle(e).borderTopLeftRadius);
  assert.equal(radius, "10px");
}

Deno.test({
  name: "dashboard onboarding in real Chromium: token page, rotation, empty index, coverage",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-onboarding-" });
    const profile = await Deno.makeTempDir({ prefix: "intendant-chromium-" });
    const daemons: Daemon[] = [];
    let context: BrowserContext | null = null;
    try {
      const world = await buildWorld(join(root, "world"));
      const full = await daemonFor(world.cfg);
      daemons.push(full);
      const emptyRoot = join(root, "empty");
      const emptyCfg = resolveConfig(
        hermeticEnv(emptyRoot, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no" }),
        { cwd: emptyRoot },
      );
      const empty = await daemonFor(emptyCfg);
      daemons.push(empty);
      context = await launch(profile);
      const page = context.pages()[0] ?? await context.newPage();
      await Deno.mkdir(ARTIFACTS, { recursive: true });
      const shot = (name: string) =>
        page.screenshot({ path: join(ARTIFACTS, `onboarding-${name}.png`), fullPage: true });

      await t.step("no cookie: the styled token page, not the app", async () => {
        const r = await page.goto(full.url);
        assert.equal(r?.status(), 401);
        await expectTokenPage(page, "missing");
        await shot("no-cookie");
      });

      await t.step(
        "a wrong ?token=: the same page, saying the link is no longer valid",
        async () => {
          const r = await page.goto(`${full.url}?token=${full.token.slice(0, -2)}xx`);
          assert.equal(r?.status(), 401);
          await expectTokenPage(page, "invalid");
          assert.match(await page.locator("h1").innerText(), /no longer valid/);
        },
      );

      await t.step(
        "coverage in plain words: no revision number, skip reasons as phrases",
        async () => {
          await page.goto(`${full.url}?token=${full.token}`);
          await page.waitForSelector("[data-app-ready]");
          await page.waitForSelector(".coverage[data-state=ready]");
          await page.click(".coverage-details summary");
          const text = await page.locator(".coverage").innerText();
          assert.doesNotMatch(text, /revision/i);
          const table = page.locator(".cov-table");
          assert.match((await table.getAttribute("title")) ?? "", /^index revision \d+$/);
          assert.match(text, /Source file deleted/);
          const codes = await page.evaluate(async () => {
            const c = await (await fetch("/api/coverage")).json();
            return Object.values(c.sources).flatMap((s) =>
              Object.keys((s as { skipped: object }).skipped)
            );
          });
          assert.ok(codes.length > 0, "the fixtures skip something");
          for (const code of codes) {
            const chip = page.locator(`.skipn[title="${code}"]`);
            assert.ok(await chip.count() > 0, code);
            assert.ok(
              !(await chip.first().innerText()).includes("_"),
              `${code} shown in plain words`,
            );
          }
          await shot("coverage-wide");
        },
      );

      await t.step("390 px: the coverage panel is one line, expanded on tap", async () => {
        await page.setViewportSize({ width: 390, height: 800 });
        const fold = page.locator("details.coverage-fold");
        await fold.waitFor();
        assert.equal(await fold.evaluate((e) => (e as HTMLDetailsElement).open), false);
        assert.equal(await page.locator(".coverage-chips").isVisible(), false);
        const summary = fold.locator(":scope > summary");
        assert.match(await summary.innerText(), /Message index[\s\S]*sessions/);
        const lines = await summary.evaluate((e) => Math.round(e.getBoundingClientRect().height));
        assert.ok(lines < 80, `the summary is short: ${lines}px`);
        await shot("coverage-390-collapsed");
        await summary.click();
        await page.locator(".coverage-chips").waitFor({ state: "visible" });
        assert.equal(await fold.evaluate((e) => (e as HTMLDetailsElement).open), true);
        await shot("coverage-390-open");
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.locator("div.coverage[data-state=ready]").waitFor();
      });

      await t.step("a rotated token turns the open app into the token help", async () => {
        await page.goto(`${full.url}#/`);
        await page.waitForSelector("[data-app-ready]");
        const next = await rotateToken(world.cfg.stateRoot);
        const deadline = Date.now() + 5_000;
        while (full.token !== next && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(full.token, next, "the daemon adopted the new token");
        await page.fill("#q", "websocket"); // any request now gets a 401
        await expectTokenPage(page, "invalid");
        assert.equal(await page.locator(".auth-card").count(), 1);
        await shot("rotated");
        // The new link works again.
        await page.goto(`${full.url}?token=${next}`);
        await page.waitForSelector("[data-app-ready]");
      });

      await t.step(
        "an empty index says where it looked and how to point it elsewhere",
        async () => {
          await page.goto(`${empty.url}?token=${empty.token}`);
          await page.waitForSelector("[data-app-ready]");
          const box = page.locator(".coverage-empty");
          await box.waitFor();
          const text = await box.innerText();
          assert.match(text, /Nothing indexed yet/);
          for (
            const v of [
              "INTENDANT_HOME",
              "CODEX_HOME",
              "CLAUDE_CONFIG_DIR",
              "KIMI_CODE_HOME",
              "PI_CODING_AGENT_DIR",
              "GEMINI_CLI_HOME",
              "COPILOT_HOME",
              "GOOSE_PATH_ROOT",
            ]
          ) {
            assert.ok(text.includes(v), v);
          }
          assert.ok(text.includes(join(emptyRoot, "home", ".codex", "sessions")), text);
          assert.ok(text.includes(join(emptyRoot, "state", "logs")), text);
          // One line per source: the state root's own sessions and the eleven agents.
          assert.equal(await box.locator("li[data-state=absent]").count(), 12);
          await shot("empty-index");
          // On a phone the empty index's explanation is open from the start, unlike counts.
          await page.setViewportSize({ width: 390, height: 800 });
          await page.locator("details.coverage-fold[open] .coverage-empty").waitFor();
          await page.setViewportSize({ width: 1280, height: 800 });
        },
      );

      await t.step(
        "a long first sweep shows its progress per source, then the counts",
        async () => {
          const bigRoot = join(root, "big");
          const bigCfg = resolveConfig(hermeticEnv(bigRoot), { cwd: bigRoot });
          // Enough sessions that the first sweep outlasts a few of the bar's 1 s polls.
          for (let i = 0; i < BIG_SESSIONS; i++) {
            await writeNativeSession(bigCfg.logsDir, { turns: 3, task: `Backfill ${i}` });
          }
          const big = await startDaemon({ ...bigCfg, server: { host: "127.0.0.1", port: 0 } }, {
            ui: UI_BUNDLE,
          });
          daemons.push(big);
          await page.goto(`${big.url}?token=${big.token}`);
          const chip = page.locator(
            ".coverage[data-state=building] .coverage-progress li[data-source=intendant]",
          );
          await chip.waitFor({ timeout: 15_000 });
          assert.match(await chip.innerText(), /Intendant\s+[\d,]+ files? · [\d,]+ messages?/);
          await shot("first-sweep");
          await page.locator(".coverage[data-state=ready]").waitFor({ timeout: 60_000 });
          assert.equal(await page.locator(".coverage-progress").count(), 0);
          const line = await page.locator(".coverage-line").innerText();
          assert.match(line, new RegExp(`${BIG_SESSIONS} sessions`));
        },
      );
    } finally {
      await context?.close();
      for (const d of daemons) await d.shutdown();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
