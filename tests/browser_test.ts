/**
 * The dashboard in real Chromium (Debian's, via tests/helpers/browser.ts) against a real
 * daemon serving the embedded UI over a real index of every source's fixture home, plus
 * 40 bulk native sessions so the catalog spans more than one page and a broad query more
 * than one message-lane page. One world and one browser for the whole file (steps share
 * them, in order: later steps append to the native fixture and re-sweep).
 *
 * Covered: the recent list (first page, incremental loading, coverage "building" with
 * counts), the metadata and message lanes with exact highlights (NFD café, CJK),
 * jump-to-hit (anchored entry in the viewport, highlighted), the superseded toggle and
 * filters, rapid typing with a deliberately slowed early query, the 410 restart, the
 * live tail, the ⌘K palette by keyboard, rename, resume copy and Markdown export,
 * `?message_search=off` and an older daemon, the token never in URLs, no request off
 * 127.0.0.1, and screenshots at 1280 px light and 400 px dark.
 */
import assert from "node:assert/strict";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildWorld, type World } from "./helpers/world.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { foldText } from "../ui/lib/fold.ts";
import {
  groupsAtLeast,
  laneKeys,
  laneSettled,
  marks,
  search,
  untilFocused,
  untilInViewport,
} from "./browser_page.ts";

const BULK = 40;
const NFD_CAFE = "cafe\u0301";

async function addBulkSessions(world: World): Promise<void> {
  let t = Date.now() - 5 * 86_400_000;
  for (let i = 0; i < BULK; i++) {
    await writeNativeSession(world.cfg.logsDir, {
      turns: 1,
      task: `Bulk zebra migration ${i}`,
      project: "/home/dev/zoo",
      now: () => (t += 1000),
      word: () => "the zebra herd",
    });
  }
  await world.indexer.sweep();
}

Deno.test({
  name: "dashboard in real Chromium",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      await addBulkSessions(world);
      const native = world.homes.intendant!.appendTarget;
      rig = await startRig(world);
      const { page } = rig;
      const requests: string[] = [];
      const statuses: { url: string; status: number }[] = [];
      const pageErrors: string[] = [];
      rig.context.on("request", (r) => requests.push(r.url()));
      page.on("response", (r) => statuses.push({ url: r.url(), status: r.status() }));
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await rig.open();
      const lane = page.locator(".lane[data-q]");
      const home = async () => {
        await page.goto(`${rig!.base}#/`);
        await page.waitForSelector("[data-app-ready]");
        await page.fill("#q", "");
      };

      await t.step(
        "the recent list renders the first page, then loads more on scroll",
        async () => {
          await page.waitForSelector("#recent-list .card");
          await untilFocused(page, "#q"); // the search box is focused on load
          assert.equal(await page.locator("#recent-list .card-item").count(), 50);
          const first = page.locator("#recent-list .card").first();
          assert.ok((await first.locator(".badge.src").textContent())?.length, "source badge");
          assert.match(await first.locator(".card-meta").innerText(), /messages?/);
          await page.locator(".sentinel").scrollIntoViewIfNeeded();
          await page.waitForFunction(() =>
            document.querySelectorAll("#recent-list .card-item").length === 62
          );
          assert.equal(await page.locator(".btn.more").count(), 0, "no more pages");
          await page.keyboard.press("Tab"); // focus order: search box → source chips
          await untilFocused(page, 'button.chip.src-intendant[aria-pressed="false"]');
        },
      );

      await t.step("the coverage bar says building, with live per-source counts", async () => {
        // The rig's daemon never swept itself (noInitialSweep): its indexer is not ready.
        const bar = page.locator(".coverage[data-state=building]");
        await bar.waitFor();
        assert.match(await bar.innerText(), /Index building[\s\S]*62 sessions/);
        await page.click(".coverage-details summary");
        const table = await page.locator(".cov-table").innerText();
        for (const s of ["Intendant", "Codex", "Claude Code", "Kimi", "Pi"]) {
          assert.ok(table.includes(s), s);
        }
        assert.match(await page.locator(".legacy").innerText(), /askHuman answers — none/);
      });

      await t.step(
        "typing café: metadata lane at once, message hits with exact NFC and NFD highlights",
        async () => {
          await search(page, "café");
          assert.ok(await page.locator("#lane-meta-h").isVisible());
          const meta = await page.locator(".lane:not([data-q]) .card").count();
          assert.ok(meta >= 5, `metadata matches: ${meta}`);
          const all = await marks(lane);
          assert.ok(all.length > 5);
          for (const m of all) assert.equal(foldText(m), foldText("café"), m);
          assert.ok(all.includes("café"), "NFC occurrences highlighted");
          assert.ok(
            all.includes(NFD_CAFE),
            "the NFD spelling (Kimi fixture) highlighted as one unit",
          );
          // The native fixture's NFD text is superseded: it appears with the toggle on.
          assert.equal(await lane.locator("a.hit.superseded").count(), 0, "hidden by default");
          await page.check("#include-superseded");
          await laneSettled(page, "café", { includeSuperseded: true });
          const nativeHit = lane.locator(
            `a.hit.superseded[href*="${encodeURIComponent(native.key)}"]`,
          );
          assert.deepEqual(await marks(nativeHit), [NFD_CAFE]);
          assert.equal(await nativeHit.locator(".badge.sup").textContent(), "rewound");
        },
      );

      await t.step(
        "opening a hit shows its entry anchored in the viewport and highlighted",
        async () => {
          await lane.locator(`a.hit.superseded[href*="${encodeURIComponent(native.key)}"]`).click();
          const anchored = page.locator(".entry.anchored");
          await anchored.waitFor();
          assert.equal(await anchored.getAttribute("aria-current"), "true");
          await untilInViewport(anchored); // scrolled there in an effect after the render
          assert.deepEqual(await marks(anchored), [NFD_CAFE]);
          assert.ok(page.url().includes("locate="));
          await page.goBack();
          await laneSettled(page, "café", { includeSuperseded: true });
          assert.equal(await page.inputValue("#q"), "café", "the query survives the visit");
        },
      );

      await t.step("CJK queries highlight exactly the CJK characters", async () => {
        for (const q of ["修复", "漢字"]) {
          await search(page, q, { includeSuperseded: true });
          const got = await marks(lane);
          assert.ok(got.length > 0, q);
          assert.deepEqual([...new Set(got)], [q]);
        }
      });

      await t.step("the superseded toggle changes the hit set", async () => {
        await page.uncheck("#include-superseded");
        await search(page, "rename the cookie");
        assert.equal(await lane.locator(".card").count(), 0);
        // The empty page offers what the server found with rewound messages included.
        const offer = lane.locator("button[data-widen=include_superseded]");
        assert.match(await offer.innerText(), /^Include rewound messages: finds \d+ sessions?$/);
        await offer.click();
        await laneSettled(page, "rename the cookie", { includeSuperseded: true });
        assert.ok(await page.isChecked("#include-superseded"), "the offer turned the toggle on");
        const hits = lane.locator("a.hit");
        assert.ok((await hits.count()) >= 2);
        assert.equal(await lane.locator("a.hit:not(.superseded)").count(), 0);
        assert.equal(await lane.locator("a.hit .badge.sup").count(), await hits.count());
        await page.uncheck("#include-superseded");
      });

      await t.step("source and role filters narrow the message lane", async () => {
        await search(page, "café");
        await page.click(".filters button.src-pi");
        await laneSettled(page, "café", { source: ["pi"] });
        const sources = await lane.locator(".card .badge.src").allTextContents();
        assert.ok(sources.length > 0 && sources.every((s) => s === "Pi"), sources.join());
        await page.click(".filters button:has-text('Assistant')");
        await laneSettled(page, "café", { source: ["pi"], role: ["assistant"] });
        const roles = await lane.locator("a.hit").evaluateAll((els) =>
          els.map((e) => e.getAttribute("data-role"))
        );
        assert.ok(roles.length > 0 && roles.every((r) => r === "assistant"), roles.join());
        await page.click(".filters button.src-pi");
        await page.click(".filters button:has-text('Assistant')");
        await laneSettled(page, "café");
      });

      await t.step(
        "rapid typing with a slowed early query never leaves a stale result",
        async () => {
          // Hold the server's answer to the early, broad "ze" for 1.5 s (the request still
          // goes to the real daemon), so it would land after the final query's answer.
          let held = 0;
          let released!: () => void;
          const answered = new Promise<void>((r) => (released = r));
          await page.route(
            (u) =>
              u.pathname === "/api/sessions/message-search" && u.searchParams.get("q") === "ze",
            async (route) => {
              held++;
              await new Promise((r) => setTimeout(r, 1500));
              await route.continue().catch(() => {}); // the UI aborted it meanwhile
              released();
            },
          );
          await page.fill("#q", "");
          // The session filter (/api/sessions?q=) asks too: wait for the message search.
          const early = page.waitForRequest((r) => {
            const u = new URL(r.url());
            return u.pathname === "/api/sessions/message-search" &&
              u.searchParams.get("q") === "ze";
          });
          await page.locator("#q").pressSequentially("ze");
          await early;
          await page.locator("#q").pressSequentially("bra migration", { delay: 15 });
          await laneSettled(page, "zebra migration");
          await answered; // the held early answer has been let through, after the final one
          assert.equal(held, 1);
          assert.equal(await lane.getAttribute("data-q"), "zebra migration");
          const got = new Set((await marks(lane)).map(foldText));
          assert.deepEqual([...got].sort(), ["migration", "zebra"]);
          await page.unroute("**/*");
          // And plain fast typing, character by character with no pause.
          await page.fill("#q", "");
          await page.locator("#q").pressSequentially("the zebra herd", { delay: 0 });
          await laneSettled(page, "the zebra herd");
          for (const m of await marks(lane)) {
            assert.ok(["the", "zebra", "herd"].includes(foldText(m)), m);
          }
        },
      );

      await t.step("a running native session streams new entries live", async () => {
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(native.key)}`);
        await page.locator(".live-open").waitFor();
        Deno.writeTextFileSync(native.path, native.userLine("Live tail: zebra stripes arrive", 1), {
          append: true,
        });
        await page.locator(".entry", { hasText: "Live tail: zebra stripes arrive" }).waitFor({
          timeout: 10_000,
        });
      });

      await t.step("410: load more after the index moved restarts page 1 cleanly", async () => {
        await home();
        await search(page, "zebra");
        await groupsAtLeast(page, 20);
        assert.equal(await lane.locator(".card-item").count(), 20);
        Deno.writeTextFileSync(native.path, native.userLine("A fresh zebra sighting", 2), {
          append: true,
        });
        await world.indexer.sweep();
        await page.click("text=Load more results");
        await page.locator(".lane[data-q] .notice", { hasText: "restarted" }).waitFor();
        await laneSettled(page, "zebra");
        assert.ok(
          statuses.some((s) => s.status === 410 && s.url.includes("cursor=")),
          "the server answered 410",
        );
        const keys = await laneKeys(page);
        assert.equal(keys[0], native.key, "fresh page 1: the newest zebra is the appended line");
        assert.equal(new Set(keys).size, keys.length);
        await page.click("text=Load more results");
        await groupsAtLeast(page, 40);
      });

      const paletteToMessage = async (dialog: ReturnType<typeof page.locator>) => {
        {
          const input = dialog.locator("input[role=combobox]");
          await untilFocused(page, "[role=dialog] input[role=combobox]");
          await page.keyboard.type("修复");
          await page.waitForFunction(() => {
            const g = document.querySelector("[aria-labelledby=pal-g-m]");
            return g?.getAttribute("data-q") === "修复" &&
              g.getAttribute("aria-busy") === "false" &&
              g.querySelector("[role=option]");
          });
          for (let i = 0; i < 20; i++) {
            const id = await input.getAttribute("aria-activedescendant");
            const kind = await page.locator(`#${id}`).getAttribute("data-kind");
            if (kind === "message") {
              break;
            }
            await page.keyboard.press("ArrowDown");
            // The selection moves on the next render: read it only once it has.
            await page.waitForFunction(
              (before) =>
                document.querySelector("[role=combobox]")?.getAttribute("aria-activedescendant") !==
                  before,
              id,
            );
          }
          const active = await input.getAttribute("aria-activedescendant");
          assert.equal(await page.locator(`#${active}`).getAttribute("aria-selected"), "true");
          assert.equal(await page.locator(`#${active}`).getAttribute("data-kind"), "message");
          await page.keyboard.press("Tab");
          await untilFocused(page, "[role=dialog] *"); // focus trapped in the dialog
          await page.keyboard.press("Shift+Tab");
          await page.keyboard.press("Enter");
          await dialog.waitFor({ state: "detached" });
          const anchored = page.locator(".entry.anchored");
          await anchored.waitFor();
          await untilInViewport(anchored);
          assert.ok((await marks(anchored)).includes("修复"));
          await page.keyboard.press("Control+k");
          await dialog.waitFor();
          await page.keyboard.press("Escape");
          await dialog.waitFor({ state: "detached" });
        }
      };

      await t.step(
        "⌘K palette: type, arrow to a message, Enter opens the anchored detail",
        async () => {
          await home();
          await page.keyboard.press("Control+k");
          const dialog = page.locator("[role=dialog]");
          await dialog.waitFor();
          try {
            await paletteToMessage(dialog);
          } finally {
            // A failure above must not leave the modal over the steps that follow.
            if (await dialog.count()) await page.keyboard.press("Escape");
          }
        },
      );

      await t.step(
        "a locator that does not fit opens the session unanchored, saying why",
        async () => {
          const kimiHit = await page.evaluate(async () => {
            const r = await (await fetch("/api/sessions/message-search?q=caf%C3%A9&source=kimi"))
              .json();
            return r.groups[0].hits[0].locator as string;
          });
          const pi = "pi:3f2b8c1e-6d4a-4e7b-9a1c-5b8d2e4f6a10";
          for (
            const [locate, reason] of [[kimiHit, /could not be located \(no record/], [
              "garbage",
              /Invalid locate/,
            ]] as const
          ) {
            await page.goto(`${rig!.base}#/session/${encodeURIComponent(pi)}?locate=${locate}`);
            await page.locator(".notice", { hasText: reason }).waitFor();
            assert.ok((await page.locator(".entry").count()) > 0, "the page still opens");
            assert.equal(await page.locator(".entry.anchored").count(), 0);
          }
        },
      );

      await t.step("copy resume command and Markdown export produce the right text", async () => {
        const key = "claude-code:d7ecc652-ccc8-4074-acf2-700c7b3db8c5";
        const detail = await page.evaluate(
          async (k) => (await fetch(`/api/session/${encodeURIComponent(k)}?limit=1000`)).json(),
          key,
        );
        await rig!.context.grantPermissions(["clipboard-read", "clipboard-write"], {
          origin: rig!.base.replace(/\/$/, ""),
        });
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(key)}`);
        await page.click("#copy-resume");
        await page.locator(".action-status", { hasText: "Copied" }).waitFor();
        assert.equal(
          await page.evaluate(() => navigator.clipboard.readText()),
          detail.session.resume_command,
        );
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.click("#export-md"),
        ]);
        assert.match(download.suggestedFilename(), /^cafe-menu-fixes-d7ecc652\.md$/);
        const md = await Deno.readTextFile((await download.path())!);
        assert.ok(md.startsWith(`# ${detail.session.title}\n`));
        assert.ok(md.includes(`- Resume: \`${detail.session.resume_command}\``));
        for (const e of detail.entries.filter((x: { kind: string }) => x.kind === "message")) {
          assert.ok(md.includes(e.text), e.text);
        }
        assert.ok(md.includes("_(superseded)_"));
      });

      await t.step("rename (in the detail header) updates the card and the server", async () => {
        await home();
        const card = page.locator("#recent-list .card").first();
        assert.equal(await card.locator(".rename-btn").count(), 0, "no pencil on every card");
        const key = decodeURIComponent(
          (await card.locator("a.card-link").getAttribute("href"))!.replace("#/session/", ""),
        );
        await card.locator("a.card-link").click();
        await page.locator(".detail-head .rename-btn").click();
        await page.locator(".detail-head .rename-input").fill("Renamed by the browser ✓");
        await page.locator(".detail-head .rename-input").press("Enter");
        await page.locator("#detail-h", { hasText: "Renamed by the browser ✓" }).waitFor();
        await page.goBack();
        await page.locator(`#recent-list .card-link[href="#/session/${encodeURIComponent(key)}"]`, {
          hasText: "Renamed by the browser ✓",
        }).waitFor();
        const list = await page.evaluate(async () =>
          (await fetch("/api/sessions?limit=100")).json()
        );
        assert.ok(
          list.sessions.some((s: { name: string | null }) => s.name === "Renamed by the browser ✓"),
        );
      });

      await t.step("?message_search=off hides the lane; so does an older daemon", async () => {
        const before = requests.length;
        await rig!.open("/?message_search=off");
        await page.locator(".shell[data-features=known]").waitFor();
        await page.fill("#q", "café");
        await page.locator('.lane[data-filter-q="café"][aria-busy=false]').waitFor();
        assert.equal(await page.locator(".lane[data-q]").count(), 0);
        assert.ok(!requests.slice(before).some((u) => u.includes("message-search")));
        await page.route("**/api/routes", (r) => r.fulfill({ status: 404, body: "{}" }));
        await rig!.open("/");
        // The features are known once /api/routes answered (here: 404, an older daemon).
        await page.locator(".shell[data-features=known]").waitFor();
        await page.fill("#q", "café");
        await page.locator('.lane[data-filter-q="café"][aria-busy=false]').waitFor();
        assert.equal(await page.locator(".lane[data-q]").count(), 0);
        assert.equal(await page.locator("[role=alert]").count(), 0);
        await page.unroute("**/api/routes");
        await rig!.open("/");
      });

      await t.step(
        "screenshots at 1280 px light and 400 px dark, no horizontal scroll",
        async () => {
          await page.setViewportSize({ width: 1280, height: 800 });
          await page.emulateMedia({ colorScheme: "light" });
          await search(page, "café");
          await page.evaluate(() => scrollTo(0, 0));
          await rig!.screenshot("dashboard-1280-light");
          await page.setViewportSize({ width: 400, height: 800 });
          await page.emulateMedia({ colorScheme: "dark" });
          await page.evaluate(() => scrollTo(0, 0));
          const noScroll = () =>
            page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
          assert.ok(await noScroll(), "list at 400 px");
          await rig!.screenshot("dashboard-400-dark");
          await lane.locator("a.hit").first().click();
          await page.locator(".entry.anchored").waitFor();
          assert.ok(await noScroll(), "detail at 400 px");
          await page.evaluate(() => scrollTo(0, 0));
          await rig!.screenshot("detail-400-dark");
        },
      );

      await t.step("the token is never in page URLs and no request leaves 127.0.0.1", () => {
        assert.ok(!page.url().includes(rig!.token));
        const bootstrap = `${rig!.base}?token=${rig!.token}`;
        const origin = new URL(rig!.base).origin;
        for (const u of requests) {
          if (u === bootstrap) continue; // the harness's own tokenized first navigation
          assert.ok(!u.includes(rig!.token), `token in ${u}`);
          assert.ok(
            u.startsWith(origin + "/") || u.startsWith("blob:" + origin) || u.startsWith("data:"),
            u,
          );
        }
        assert.deepEqual(pageErrors, []);
      });
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
