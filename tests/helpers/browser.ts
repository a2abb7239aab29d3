/**
 * Real-browser harness: Debian's Chromium driven by playwright-core, against a real
 * daemon (startDaemon, in process, real port) serving the embedded UI over a real index
 * built from fixture homes. A missing Chromium is never a silent pass: outside CI the
 * browser tests are skipped with a loud banner saying how to install it; with CI=true a
 * missing Chromium fails the suite.
 */
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import { startDaemon } from "../../lib/server/mod.ts";
import { UI_BUNDLE } from "../../ui/gen/bundle.ts";
import type { World } from "./world.ts";
import { REPO_ROOT } from "./temp.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = join(REPO_ROOT, "tests", "artifacts");

function hasChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** True when the browser suite can run; otherwise prints the banner (or throws under CI). */
export const BROWSER_AVAILABLE: boolean = (() => {
  if (hasChromium()) return true;
  if (Deno.env.get("CI") === "true") {
    throw new Error(
      `Chromium is required for the browser suite under CI and is missing at ${CHROMIUM} (apt-get install -y chromium)`,
    );
  }
  console.error(
    `\n${
      "!".repeat(78)
    }\n!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM}.\n!! Install it with: sudo apt-get install -y chromium\n${
      "!".repeat(78)
    }\n`,
  );
  return false;
})();

/** A daemon serving the real UI over a world, and a browser pointed at it. */
export interface BrowserRig {
  base: string;
  token: string;
  context: BrowserContext;
  page: Page;
  /** Opens the tokenized URL (sets the cookie) and waits for the app to mount. */
  open(path?: string): Promise<void>;
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the daemon for `world` (port 0) and a fresh Chromium profile. */
export async function startRig(
  world: Pick<World, "cfg">,
  o: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {},
): Promise<BrowserRig> {
  const cfg = { ...world.cfg, server: { host: "127.0.0.1" as const, port: 0 } };
  const daemon = await startDaemon(cfg, { ui: UI_BUNDLE, noInitialSweep: true });
  const profile = await Deno.makeTempDir({ prefix: "intendant-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: o.width ?? 1280, height: o.height ?? 800 },
    colorScheme: o.colorScheme ?? "light",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] ?? await context.newPage();
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  return {
    base: daemon.url,
    token: daemon.token,
    context,
    page,
    async open(path = "") {
      await page.goto(`${daemon.url}?token=${daemon.token}`);
      if (path) await page.goto(`${daemon.url.replace(/\/$/, "")}${path}`);
      await page.waitForSelector("[data-app-ready]");
    },
    async screenshot(name) {
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      await daemon.shutdown();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
