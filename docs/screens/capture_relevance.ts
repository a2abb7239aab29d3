/**
 * Regenerates the issue-27 screenshot of a relevance page ("Best match"): the world of the
 * relevance browser suite (tests/browser_relevance_world.ts: two exact sessions, one that
 * holds only one of the two words, one that holds both in different messages, one that
 * matches only without an accent), a real daemon in process serving the embedded bundle
 * (its first sweep done, so the coverage bar says "ready" as a user's would) and Debian's
 * Chromium. Run from the repository root after `deno task build:ui`:
 *   deno run -A docs/screens/capture_relevance.ts
 * Writes docs/screens/search-relevance.png (1280 px wide, down to the lane's last card,
 * at most 1100 px) and prints each card's tier and badge as the page shows them.
 */
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startDaemon } from "../../lib/server/mod.ts";
import { UI_BUNDLE } from "../../ui/gen/bundle.ts";
import { CHROMIUM } from "../../tests/helpers/browser.ts";
import { REPO_ROOT } from "../../tests/helpers/temp.ts";
import { buildRelevanceWorld, RELEVANCE_Q } from "../../tests/browser_relevance_world.ts";

const OUT = join(REPO_ROOT, "docs", "screens", "search-relevance.png");

/** Resolves once the daemon's coverage is ready (its first sweep published). */
async function untilReady(base: string, token: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const cov = await fetch(`${base}api/coverage`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.json()).catch(() => null);
    if (cov?.state === "ready") return;
    await new Promise((r) => setTimeout(r, 250)); // a poll for the sweep, not a UI wait
  }
  throw new Error("The daemon did not finish its first sweep");
}

const root = await Deno.makeTempDir({ prefix: "intendant-screens-relevance-" });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
try {
  const { world } = await buildRelevanceWorld(root);
  const cfg = { ...world.cfg, server: { host: "127.0.0.1" as const, port: 0 } };
  const daemon = await startDaemon(cfg, { ui: UI_BUNDLE });
  try {
    await untilReady(daemon.url, daemon.token);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    await page.goto(`${daemon.url}?token=${daemon.token}`);
    await page.waitForSelector("[data-app-ready]");
    await page.goto(`${daemon.url}#/?q=${encodeURIComponent(RELEVANCE_Q)}&sort=relevance`);
    await page.waitForFunction(() => {
      const lane = document.querySelector(".lane[data-q]");
      return lane?.getAttribute("data-state") === "ready" &&
        lane.getAttribute("aria-busy") === "false" &&
        (lane.getAttribute("data-key") ?? "").includes('"relevance"');
    });
    // Not the search box's caret blinking into the picture.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const cards = await page.locator(".lane[data-q] .card").evaluateAll((els) =>
      els.map((e) => ({
        title: e.querySelector(".card-title")?.textContent,
        tier: e.getAttribute("data-tier"),
        badge: e.querySelector(".badge.related")?.textContent ?? null,
      }))
    );
    console.log(JSON.stringify(cards, null, 1));
    const laneEnd = await page.locator(".lane[data-q] .cards").evaluate((e) =>
      Math.ceil(e.getBoundingClientRect().bottom + scrollY)
    );
    await page.evaluate(() => scrollTo(0, 0));
    await page.screenshot({
      path: OUT,
      clip: { x: 0, y: 0, width: 1280, height: Math.min(1100, laneEnd + 16) },
    });
    console.log(`wrote ${OUT}`);
  } finally {
    await daemon.shutdown();
  }
} finally {
  await browser.close();
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
