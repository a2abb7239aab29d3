/**
 * Regenerates the README's screenshots of the session detail (desktop 1280 px and a 390 px
 * phone) from a real session: the real runner plays a short mock script (Markdown prose,
 * commands with output, a failing command), the real indexer sweeps it, a real daemon
 * serves the embedded dashboard, and Debian's Chromium opens the detail from a search hit.
 * Run from the repository root after `deno task build:ui`:
 *   deno run -A docs/screens/capture.ts
 * Writes docs/screens/detail-desktop.png and docs/screens/detail-390.png.
 */
import { join } from "node:path";
import { startRig } from "../../tests/helpers/browser.ts";
import { runIntendant, sessionOf } from "../../tests/helpers/cli.ts";
import { buildWorld } from "../../tests/helpers/world.ts";
import { REPO_ROOT } from "../../tests/helpers/temp.ts";

const OUT = join(REPO_ROOT, "docs", "screens");

const SCRIPT = {
  turns: [
    {
      text: [
        "The login test fails because the **session cookie** is set *after* the redirect.",
        "",
        "Plan:",
        "1. Reproduce with the existing test",
        "2. Move `Set-Cookie` before the `302`",
        "   - keep the `SameSite=Lax` attribute",
        "",
        "Running the suite first:",
      ].join("\n"),
      commands: [
        { exec: "printf 'login_test.ts ... FAILED\\nexpected cookie \"sid\"\\n'", nonce: "t1" },
        { exec: "grep -n Set-Cookie src/auth.ts || true", nonce: "g1" },
      ],
    },
    {
      text: [
        "Found it. The handler redirects first:",
        "",
        "```ts",
        "ctx.redirect('/home');",
        "ctx.cookies.set('sid', token, { sameSite: 'lax' });",
        "```",
        "",
        "Swapping the two lines fixes the **café** login flow. See the " +
        "[cookie spec](https://httpwg.org/specs/rfc6265.html).",
      ].join("\n"),
      commands: [{ exec: "printf 'login_test.ts ... ok\\n3 passed\\n'", nonce: "t2" }],
    },
    { text: "All tests pass now. Want me to open a PR?", done: true },
  ],
};

const root = await Deno.makeTempDir({ prefix: "intendant-screens-" });
try {
  const world = await buildWorld(root);
  const script = join(root, "script.jsonc");
  await Deno.writeTextFile(script, JSON.stringify(SCRIPT));
  const run = await runIntendant(root, [
    "run",
    "--mock-script",
    script,
    "--name",
    "Fix the café login redirect",
    "Why does the login test fail after the redirect?",
  ], { env: world.env });
  if (run.code !== 0) throw new Error(run.stderr);
  const key = `intendant:${sessionOf(run).id}`;
  await world.indexer.sweep();
  for (
    const [name, width, height] of [["detail-desktop", 1280, 860], [
      "detail-390",
      390,
      844,
    ]] as const
  ) {
    const rig = await startRig(world, { width, height });
    try {
      await rig.open();
      await rig.page.fill("#q", "café login");
      const hit = rig.page.locator(`.lane[data-q] a.hit[href*="${encodeURIComponent(key)}"]`)
        .first();
      await hit.click();
      await rig.page.locator(".entry.anchored").waitFor();
      // Open the first tool call so the picture shows its output, then frame the turn.
      await rig.page.locator(".tool-call summary").first().click();
      await rig.page.locator(".entry").first().scrollIntoViewIfNeeded();
      await rig.page.evaluate(() => scrollTo(0, 0));
      await rig.page.screenshot({ path: join(OUT, `${name}.png`) });
      console.log(`wrote ${join(OUT, `${name}.png`)}`);
    } finally {
      await rig.close();
    }
  }
} finally {
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
