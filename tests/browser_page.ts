/**
 * Page helpers for the dashboard's browser suite (tests/browser_*_test.ts): typing a
 * query and waiting until the message lane shows that exact query's results, reading
 * marks, and geometry checks. Waits are condition-based (no fixed sleeps), keyed on the
 * lane's `data-q` (the query the shown results answer) and `data-state`. Focus and
 * scrolling are state too: the app moves them in effects after a render (a dialog focuses
 * its safe button, a jump-to-hit scrolls its entry), so a test waits for them
 * (untilFocused, untilInViewport) instead of reading them the moment an element appears —
 * under load that read came before the effect and failed.
 */
import type { Locator, Page } from "playwright-core";
import type { Source } from "../lib/message_search/mod.ts";
import { laneKey } from "../ui/lib/search_lane.ts";

/** The lane's filters as the toolbar sets them. */
export interface LaneFilters {
  includeSuperseded?: boolean;
  source?: Source[];
  role?: ("user" | "assistant")[];
}

/** Waits until the message lane shows settled results for exactly `q` under `f`. */
export async function laneSettled(page: Page, q: string, f: LaneFilters = {}): Promise<void> {
  const key = laneKey({
    q,
    includeSuperseded: f.includeSuperseded ?? false,
    source: f.source ?? [],
    role: f.role ?? [],
  });
  await page.waitForFunction(
    (want) => {
      const lane = document.querySelector(".lane[data-q]");
      return lane?.getAttribute("data-key") === want &&
        lane.getAttribute("data-state") === "ready" &&
        lane.getAttribute("aria-busy") === "false";
    },
    key,
    { timeout: 10_000 },
  );
}

/** Replaces the search box's text with `q` and waits for its settled results. */
export async function search(page: Page, q: string, f: LaneFilters = {}): Promise<void> {
  await page.fill("#q", q);
  await laneSettled(page, q, f);
}

/** The text content of every <mark> inside `scope`. */
export function marks(scope: Locator): Promise<string[]> {
  return scope.locator("mark").allTextContents();
}

/** Waits until the focused element matches the CSS `selector`. */
export async function untilFocused(page: Page, selector: string, timeout = 10_000): Promise<void> {
  await page.waitForFunction(
    (sel) => document.activeElement?.matches(sel) === true,
    selector,
    { timeout },
  ).catch(async (err) => {
    const got = await page.evaluate(() => {
      const a = document.activeElement;
      return a ? `<${a.tagName.toLowerCase()} id="${a.id}" class="${a.className}">` : "nothing";
    });
    throw new Error(`Focus never reached ${selector}: it is on ${got}`, { cause: err });
  });
}

/** Waits until `el` lies entirely inside the viewport, below the sticky top bar. */
export async function untilInViewport(el: Locator, timeout = 10_000): Promise<void> {
  const handle = await el.elementHandle({ timeout });
  if (!handle) throw new Error("No element to bring into view");
  await el.page().waitForFunction(
    (node) => {
      const r = node.getBoundingClientRect();
      const bar = document.querySelector(".topbar")?.getBoundingClientRect().bottom ?? 0;
      return r.height > 0 && r.top >= bar - 1 && r.bottom <= innerHeight + 1;
    },
    handle,
    { timeout },
  );
}

/** True when the element lies entirely inside the viewport (below the sticky top bar). */
export function inViewport(el: Locator): Promise<boolean> {
  return el.evaluate((node) => {
    const r = node.getBoundingClientRect();
    const bar = document.querySelector(".topbar")?.getBoundingClientRect().bottom ?? 0;
    return r.height > 0 && r.top >= bar - 1 && r.bottom <= innerHeight + 1;
  });
}

/** The session keys of the message lane's groups, in order. */
export function laneKeys(page: Page): Promise<string[]> {
  return page.locator(".lane[data-q] .card-title").evaluateAll((els) =>
    els.map((e) => decodeURIComponent((e as HTMLAnchorElement).hash.replace("#/session/", "")))
  );
}

/** Waits until the lane's group count is at least `n`. */
export async function groupsAtLeast(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    (min) => document.querySelectorAll(".lane[data-q] .card-item").length >= min,
    n,
  );
}
