/**
 * The session detail view in real Chromium (tests/helpers/browser.ts) against a real
 * daemon over a session made by the REAL runner (`intendant run`, mock script): 150
 * turns, so hits lie outside the first page; a turn whose prose is Markdown with two
 * commands; a turn whose prose is hostile HTML. Covered: Markdown renders as elements
 * (a <pre><code> in a monospace font, nested lists, a safe link), hostile text creates
 * no element and runs nothing, tool calls sit collapsed under their message and open on
 * click, each command is on the page once, the sticky hit bar stays in view and never
 * covers the entry it jumps to, `n` / `p` and the buttons step through every hit of the
 * session (loading pages outside the first), nothing widens the page at 390 px, and a
 * running session's open turn gains its command's result live, in place.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { locatorOf, shardRecords } from "./helpers/catalog_world.ts";
import { runIntendant, sessionOf, spawnIntendant } from "./helpers/cli.ts";
import { buildWorld } from "./helpers/world.ts";
import { marks } from "./browser_page.ts";

const WORD = "zebrafish";
const HIT_TURNS = [3, 80, 140];
const TURNS = 150;
const CMD_A = "echo TOOL-OUT-ALPHA; echo second-line";
const CMD_B = "echo TOOL-OUT-BRAVO >&2; exit 2";
const MARKDOWN = [
  "Here is the **plan**:",
  "",
  "1. Build it",
  "2. Test it",
  "   - unit tests",
  "   - browser tests",
  "",
  "```ts",
  `const veryLong = "${"x".repeat(600)}";`,
  "```",
  "",
  "See [the docs](https://example.com/docs) and `inline()`.",
].join("\n");
const HOSTILE = [
  "<script>window.__pwned = 1</script>",
  '<img src=x onerror="window.__pwned = 2">',
  "[click me](javascript:window.__pwned=3)",
  '<svg onload="window.__pwned = 4"></svg>',
  "&lt;b&gt;entity&lt;/b&gt;",
].join("\n\n");

function script(): unknown {
  const turns: unknown[] = [
    { text: MARKDOWN, commands: [{ exec: CMD_A, nonce: "a1" }, { exec: CMD_B, nonce: "b1" }] },
    { text: HOSTILE },
  ];
  for (let t = 3; t <= TURNS; t++) {
    const said = HIT_TURNS.includes(t) ? `a ${WORD} swims by` : "nothing to see";
    turns.push({ text: `Turn ${t}: ${said}.`, ...(t === TURNS ? { done: true } : {}) });
  }
  return { turns };
}

/** The rectangle of `el` in viewport coordinates. */
function rect(el: Locator) {
  return el.evaluate((n) => {
    const r = n.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, height: r.height };
  });
}

/**
 * The hit bar is stuck under the top bar, and the anchored entry is fully below it. The
 * view scrolls to the entry in an effect after it renders, so this waits for that state
 * (and says where things were when it never came).
 */
async function barClearOfAnchor(page: Page): Promise<void> {
  const clear = () => {
    const r = (s: string) => document.querySelector(s)?.getBoundingClientRect();
    const bar = r(".hit-bar"), topbar = r(".topbar"), entry = r(".entry.anchored");
    return !!bar && !!topbar && !!entry && Math.abs(bar.top - topbar.bottom) <= 1 &&
      entry.top >= bar.bottom - 1 && entry.top < innerHeight;
  };
  await page.waitForFunction(clear, undefined, { timeout: 10_000 }).catch(async (err) => {
    const bar = await rect(page.locator(".hit-bar"));
    const topbar = await rect(page.locator(".topbar"));
    const entry = await rect(page.locator(".entry.anchored"));
    throw new Error(
      `Hit bar at ${bar.top}–${bar.bottom} (top bar ends ${topbar.bottom}), entry at ${entry.top}`,
      { cause: err },
    );
  });
}

Deno.test({
  name: "session detail in real Chromium: Markdown, tool calls, sticky hit bar, n/p",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-detail-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      const path = join(root, "detail_script.jsonc");
      Deno.writeTextFileSync(path, JSON.stringify(script()));
      const run = await runIntendant(root, ["run", "--mock-script", path, "Swim test"], {
        env: world.env,
      });
      assert.equal(run.code, 0, run.stderr);
      const key = `intendant:${sessionOf(run).id}`;
      await world.indexer.sweep();
      const recs = await shardRecords(world.store, key);
      const hitRec = recs.find((r) => r.text === `Turn 80: a ${WORD} swims by.`)!;
      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();
      const detail = `#/session/${encodeURIComponent(key)}`;
      const count = page.locator(".hit-count");

      await t.step("a hit far down opens anchored, with the hit bar stuck above it", async () => {
        await page.goto(`${rig!.base}${detail}?locate=${locatorOf(hitRec)}&q=${WORD}`);
        const anchored = page.locator(".entry.anchored");
        await anchored.waitFor();
        assert.match(await anchored.innerText(), /Turn 80: a zebrafish swims by/);
        assert.deepEqual(await marks(anchored), [WORD]);
        await count.filter({ hasText: "hit 2 of 3" }).waitFor();
        await barClearOfAnchor(page);
        // Scrolling on keeps the bar (and the session's title in it) in view.
        await page.evaluate(() => scrollBy(0, 1500));
        const bar = await rect(page.locator(".hit-bar"));
        assert.ok(bar.top >= 0 && bar.bottom < 200, JSON.stringify(bar));
        assert.match(await page.locator(".hit-title").innerText(), /Swim test|Turn|Here/);
      });

      await t.step("n and p step through every hit, loading pages outside the first", async () => {
        const first = await page.evaluate(() =>
          [...document.querySelectorAll(".entry")].map((e) => Number(e.getAttribute("data-index")))
        );
        await page.keyboard.press("n");
        await page.locator(".entry.anchored", { hasText: "Turn 140:" }).waitFor();
        await count.filter({ hasText: "hit 3 of 3" }).waitFor();
        assert.deepEqual(await marks(page.locator(".entry.anchored")), [WORD]);
        await barClearOfAnchor(page);
        await page.locator("#hit-next:disabled").waitFor(); // no hit after the last
        await page.keyboard.press("p");
        await page.locator(".entry.anchored", { hasText: "Turn 80:" }).waitFor();
        await page.keyboard.press("p");
        await page.locator(".entry.anchored", { hasText: "Turn 3:" }).waitFor();
        await count.filter({ hasText: "hit 1 of 3" }).waitFor();
        await barClearOfAnchor(page);
        const idx = Number(await page.locator(".entry.anchored").getAttribute("data-index"));
        assert.ok(!first.includes(idx), `hit ${idx} was outside the first page ${first[0]}…`);
        // The buttons do the same.
        await page.click("#hit-next");
        await page.locator(".entry.anchored", { hasText: "Turn 80:" }).waitFor();
        await count.filter({ hasText: "hit 2 of 3" }).waitFor();
        // Typing in a field is not navigation. Keys are handled in order, so a `p` pressed
        // after it (outside the field) landing on hit 1 proves the `n` moved nothing: had it
        // moved to hit 3, the `p` would land on hit 2.
        await page.focus("#resume-cmd");
        await page.keyboard.press("n");
        await page.locator("#resume-cmd").blur();
        await page.keyboard.press("p");
        await count.filter({ hasText: "hit 1 of 3" }).waitFor();
        await page.keyboard.press("n");
        await count.filter({ hasText: "hit 2 of 3" }).waitFor();
      });

      await t.step(
        "Markdown renders as elements: monospace code block, nested lists, safe link",
        async () => {
          await page.goto(`${rig!.base}#/`);
          await page.goto(`${rig!.base}${detail}`);
          const entry = page.locator(".entry", { hasText: "Here is the plan" });
          await entry.waitFor();
          const code = entry.locator(".md pre > code");
          assert.equal(await code.count(), 1);
          const font = await code.evaluate((n) => getComputedStyle(n).fontFamily);
          assert.match(font, /monospace/);
          assert.equal(await entry.locator(".md strong").innerText(), "plan");
          assert.deepEqual(await entry.locator(".md ol > li > ul > li").allInnerTexts(), [
            "unit tests",
            "browser tests",
          ]);
          const link = entry.locator(".md a");
          assert.equal(await link.getAttribute("href"), "https://example.com/docs");
          assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
          assert.equal(await link.getAttribute("target"), "_blank");
          assert.equal(await entry.locator(".md code.md-ic").innerText(), "inline()");
        },
      );

      await t.step("tool calls sit collapsed under their message and open on click", async () => {
        const entry = page.locator(".entry", { hasText: "Here is the plan" });
        const calls = entry.locator("details.tool-call");
        assert.equal(await calls.count(), 2);
        for (
          const open of await calls.evaluateAll((els) =>
            els.map((e) => (e as HTMLDetailsElement).open)
          )
        ) {
          assert.equal(open, false);
        }
        const out = entry.locator(".tool-out pre", { hasText: "TOOL-OUT-ALPHA" });
        assert.equal(await out.isVisible(), false, "output hidden while collapsed");
        assert.match(await calls.nth(1).locator("summary").innerText(), /exit 2/);
        await calls.first().locator("summary").click();
        await out.waitFor({ state: "visible" });
        assert.equal(await calls.first().evaluate((e) => (e as HTMLDetailsElement).open), true);
        const text = await page.locator(".timeline").evaluate((n) => n.textContent ?? "");
        for (const cmd of [CMD_A, CMD_B]) {
          assert.equal(text.split(cmd).length - 1, 1, `${cmd} once on the page`);
        }
        assert.equal(text.split("TOOL-OUT-ALPHA").length - 1, 2, "its command and its stdout");
      });

      await t.step("hostile message text creates no element and runs nothing", async () => {
        const entry = page.locator(".entry", { hasText: "window.__pwned = 1" });
        await entry.waitFor();
        assert.equal(await entry.locator("script, img, svg, iframe").count(), 0);
        assert.equal(await page.locator('a[href^="javascript"]').count(), 0);
        assert.equal(
          await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
          undefined,
        );
        const shown = await entry.locator(".md").innerText();
        assert.ok(shown.includes("<script>window.__pwned = 1</script>"), shown);
        assert.ok(shown.includes("&lt;b&gt;entity&lt;/b&gt;"), shown);
        assert.ok(shown.includes("[click me](javascript:window.__pwned=3)"), shown);
      });

      await t.step(
        "at 390 px nothing widens the page; the code block scrolls on its own",
        async () => {
          await page.setViewportSize({ width: 390, height: 800 });
          const entry = page.locator(".entry", { hasText: "Here is the plan" });
          await entry.scrollIntoViewIfNeeded();
          assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
          const pre = entry.locator(".md pre");
          const [sw, cw] = await pre.evaluate((n) => [n.scrollWidth, n.clientWidth]);
          assert.ok(sw > cw && cw <= 390, `pre ${sw} > ${cw}`);
          await page.goto(`${rig!.base}${detail}?locate=${locatorOf(hitRec)}&q=${WORD}`);
          await page.locator(".entry.anchored").waitFor();
          await barClearOfAnchor(page);
          assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
          await rig!.screenshot("detail-hit-bar-390");
          await page.setViewportSize({ width: 1280, height: 800 });
        },
      );

      await t.step(
        "a running session's turn gains its command's result live, in place",
        async () => {
          const live = join(root, "live_script.jsonc");
          Deno.writeTextFileSync(
            live,
            JSON.stringify({
              turns: [
                {
                  text: "Live turn",
                  commands: [{ exec: "echo EARLY-OUT" }, { exec: "sleep 15; echo LATE-OUT" }],
                },
                { text: "After the wait.", done: true },
              ],
            }),
          );
          const child = spawnIntendant(root, ["run", "--mock-script", live, "Live"], {
            env: world.env,
          });
          const id = (await child.dir).split("/").at(-1)!;
          await page.goto(`${rig!.base}#/session/${encodeURIComponent(`intendant:${id}`)}`);
          const entry = page.locator(".entry", { hasText: "Live turn" });
          const second = entry.locator("details.tool-call").nth(1);
          // Generous: under the parallel suite, starting the runner process alone can take
          // most of the default 30 s on 2 shared cores; the 15 s command keeps running past it.
          await second.waitFor({ timeout: 60_000 });
          // Seen while the command still runs, then the same entry gets its result.
          assert.match(await second.locator("summary").innerText(), /no result recorded/);
          await second.locator("summary", { hasText: "exit 0" }).waitFor({ timeout: 45_000 });
          await second.locator("summary").click();
          await second.locator("pre", { hasText: "LATE-OUT" }).waitFor();
          await page.locator(".entry", { hasText: "After the wait." }).waitFor();
          assert.equal(await page.locator(".entry", { hasText: "Live turn" }).count(), 1);
          assert.equal((await child.done).code, 0);
          assert.deepEqual(pageErrors, []);
        },
      );
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
