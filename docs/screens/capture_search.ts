/**
 * Regenerates the issue-25 screenshots of search and detail (the "second hour"): a
 * hermetic home gets every source's fixture plus the planted sessions of the browser suite
 * (tests/browser_search_world.ts: a screenful of title matches, matches on line 9 of a
 * list and a code block, a GFM table, rewound-only words), then a real daemon —
 * `deno run -A <checkout>/main.ts serve`, of this checkout or another one — sweeps it and
 * Debian's Chromium takes the pictures. Run from the repository root after
 * `deno task build:ui`:
 *   deno run -A docs/screens/capture_search.ts                   # the *-after.png shots
 *   deno run -A docs/screens/capture_search.ts --checkout /work/before --suffix before
 * (a `git worktree add` of the older commit, after `deno install --frozen` there).
 * Writes docs/screens/search-desktop-<suffix>.png, search-390-<suffix>.png,
 * snippet-list-<suffix>.png, detail-table-<suffix>.png, detail-activity-<suffix>.png,
 * empty-suggestions-<suffix>.png (words only rewound messages hold) and
 * empty-none-<suffix>.png (words no message holds), and prints where the first message hit
 * is on each screen.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Page } from "playwright-core";
import { CHROMIUM } from "../../tests/helpers/browser.ts";
import { REPO_ROOT } from "../../tests/helpers/temp.ts";
import { nativeKey, OKAPI, searchWorldFiles } from "../../tests/browser_search_world.ts";

const OUT = join(REPO_ROOT, "docs", "screens");
const { values } = parseArgs({
  args: Deno.args,
  options: { checkout: { type: "string" }, suffix: { type: "string" } },
});
const checkout = values.checkout ?? REPO_ROOT;
const suffix = values.suffix ?? "after";

/** Starts `serve` of `checkout` on `env`; resolves once its first sweep is done. */
async function serve(root: string, env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      join(checkout, "deno.json"),
      join(checkout, "main.ts"),
      "serve",
      "--port",
      "0",
    ],
    cwd: root,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...env },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const daemonJson = join(env.INTENDANT_HOME!, "daemon.json");
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const info = await Deno.readTextFile(daemonJson).then(JSON.parse).catch(() => null);
    if (info?.port) {
      const base = `http://127.0.0.1:${info.port}/`;
      const cov = await fetch(`${base}api/coverage`, {
        headers: { authorization: `Bearer ${info.token}` },
      }).then((r) => r.json()).catch(() => null);
      if (cov?.state === "ready") return { child, base, token: info.token as string };
    }
    await new Promise((r) => setTimeout(r, 250)); // a poll for the sweep, not a UI wait
  }
  child.kill("SIGTERM");
  throw new Error(`The daemon of ${checkout} did not finish its first sweep`);
}

/** Types `q` and waits until the message lane answers it. */
async function searchFor(page: Page, q: string): Promise<void> {
  await page.fill("#q", q);
  await page.waitForFunction((want) => {
    const lane = document.querySelector(".lane[data-q]");
    return lane?.getAttribute("data-q") === want && lane.getAttribute("aria-busy") === "false" &&
      lane.getAttribute("data-state") === "ready";
  }, q);
  // The title lane answers on its own (a boxless marker when empty, in newer code).
  await page.locator(`.lane[data-filter-q="${q}"][aria-busy=false]`).waitFor({
    state: "attached",
  });
}

async function shot(page: Page, name: string, height?: number): Promise<void> {
  const path = join(OUT, `${name}-${suffix}.png`);
  await page.evaluate(() => scrollTo(0, 0));
  const width = page.viewportSize()!.width;
  await page.screenshot({ path, ...(height ? { clip: { x: 0, y: 0, width, height } } : {}) });
  console.log(`wrote ${path}`);
}

const root = await Deno.makeTempDir({ prefix: "intendant-screens-2h-" });
let daemon: Awaited<ReturnType<typeof serve>> | null = null;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
try {
  const { env, planted } = await searchWorldFiles(root);
  daemon = await serve(root, env);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${daemon.base}?token=${daemon.token}`);
  await page.waitForSelector("[data-app-ready]");
  const home = async () => {
    await page.goto(`${daemon!.base}#/`);
    await page.waitForSelector("[data-app-ready]");
  };
  for (
    const [name, width, height] of [["search-desktop", 1280, 800], [
      "search-390",
      390,
      844,
    ]] as const
  ) {
    await page.setViewportSize({ width, height });
    await home();
    await searchFor(page, "zebra");
    await page.evaluate(() => scrollTo(0, 0));
    const at = await page.evaluate(() => ({
      messagesHeader: Math.round(
        document.querySelector("#lane-msg-h")!.getBoundingClientRect().top,
      ),
      firstHitBottom: Math.round(
        document.querySelector(".lane[data-q] a.hit")!.getBoundingClientRect().bottom,
      ),
      status: document.querySelector(".lane[data-q] .lane-status")?.textContent,
    }));
    console.log(`${name} (${suffix}): ${JSON.stringify(at)}`);
    await shot(page, name);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await home();
  await searchFor(page, OKAPI);
  await page.evaluate(() => scrollTo(0, 0));
  const lane = page.locator(".lane[data-q]");
  const box = (await lane.boundingBox())!;
  const path = join(OUT, `snippet-list-${suffix}.png`);
  await page.screenshot({
    path,
    clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 420) },
  });
  console.log(`wrote ${path}`);
  await home();
  await searchFor(page, "rename the cookie");
  // Down to the end of the message lane (its empty state), wherever the version puts it.
  const laneEnd = await page.locator(".lane[data-q]").evaluate((e) =>
    Math.ceil(e.getBoundingClientRect().bottom + scrollY)
  );
  await shot(page, "empty-suggestions", Math.min(800, laneEnd + 16));
  // Words no message holds, whatever the filters: nothing to offer.
  await home();
  await searchFor(page, "qwertzzyx");
  const noneEnd = await page.locator(".lane[data-q]").evaluate((e) =>
    Math.ceil(e.getBoundingClientRect().bottom + scrollY)
  );
  await shot(page, "empty-none", Math.min(800, noneEnd + 16));
  await page.setViewportSize({ width: 1280, height: 700 });
  await page.goto(`${daemon.base}#/session/${encodeURIComponent(nativeKey(planted.table))}`);
  await page.locator(".entry").first().waitFor();
  await shot(page, "detail-table");
  // An OpenCode session: its tool calls live in database rows the detail does not read.
  const m = await fetch(`${daemon.base}api/sessions?limit=100&source=opencode`, {
    headers: { authorization: `Bearer ${daemon.token}` },
  }).then((r) => r.json());
  await page.goto(`${daemon.base}#/session/${encodeURIComponent(m.sessions[0].key)}`);
  await page.locator(".entry").first().waitFor();
  await shot(page, "detail-activity", 420);
} finally {
  await browser.close();
  if (daemon) {
    daemon.child.kill("SIGTERM");
    await daemon.child.status;
    await daemon.child.stderr.cancel().catch(() => {});
  }
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
