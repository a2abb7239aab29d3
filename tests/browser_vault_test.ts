/**
 * The vault in real Chromium against a real daemon (tests/helpers/browser.ts): the list
 * shows Claude Code's cleanup notice with what the vault holds (and Hide keeps it hidden
 * across a reload); a session whose agent deleted its files shows "source gone" and a
 * "Restore from the vault" button that writes the files back byte for byte (0600) and
 * shows the resume command, and its tool calls read from the vault's copy, said so; a
 * second gone session whose path is occupied again is never overwritten (400, the file
 * untouched). The same routes over plain HTTP: GET /api/vault answers the status; a bad
 * body is a 400, an unknown session a 404; no token, no answer.
 */
import assert from "node:assert/strict";
import { BROWSER_AVAILABLE, type BrowserRig, startRig } from "./helpers/browser.ts";
import { buildWorld } from "./helpers/world.ts";
import { type KeepUnit, Vault } from "../lib/vault/mod.ts";

Deno.test({
  name: "dashboard: the cleanup notice, and Restore from the vault on a gone session",
  ignore: !BROWSER_AVAILABLE,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "intendant-browser-vault-" });
    let rig: BrowserRig | null = null;
    try {
      const world = await buildWorld(root);
      const claude = world.homes["claude-code"]!;
      const units = (await claude.extractor().discover()).units;
      const vault = new Vault({ dir: world.cfg.vault.dir });
      await vault.keep(units.map((u): KeepUnit => ({ ...u, files: u.files })));
      // Claude Code's cleanup deletes two sessions (every file of each).
      // a: the fixture's longest session (it has tool calls); b: another with messages.
      const [a, b] = units.filter((u) => (claude.expected[u.key]?.length ?? 0) > 0)
        .sort((x, y) => claude.expected[y.key]!.length - claude.expected[x.key]!.length);
      assert.ok(a && b, "two Claude sessions with messages");
      const originals = new Map<string, Uint8Array>();
      // A session may live in several folders (worktree copies): the cleanup takes them
      // all, so delete until discovery no longer lists it.
      for (const u of [a, b]) {
        for (let left = u.files; left.length > 0;) {
          for (const f of left) originals.set(f.path, await Deno.readFile(f.path));
          for (const f of left) await Deno.remove(f.path);
          left = (await claude.extractor().discover()).units.find((x) => x.key === u.key)?.files ??
            [];
        }
      }
      await vault.markGone([a.key, b.key]);
      await world.indexer.sweep(); // source_gone in the index
      const m = await world.store.readManifest();
      assert.equal(m.sessions[a.key]?.source_gone, true);

      rig = await startRig(world);
      const { page } = rig;
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${rig!.base.replace(/\/$/, "")}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${rig!.token}`, ...(init.headers ?? {}) },
        });

      await t.step("GET /api/vault and the restore route's refusals over HTTP", async () => {
        const r = await api("/api/vault");
        assert.equal(r.status, 200);
        const j = await r.json();
        assert.equal(j.by_source["claude-code"].sessions, units.length);
        assert.equal(j.by_source["claude-code"].gone, 2);
        assert.equal(j.risks[0].period_days, 30);
        assert.equal((await api("/api/vault", { headers: { authorization: "" } })).status, 401);
        const bad = await api("/api/vault/restore", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ session: 7 }),
        });
        assert.equal(bad.status, 400);
        await bad.body?.cancel();
        const none = await api("/api/vault/restore", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ session: "claude-code:no-such-session" }),
        });
        assert.equal(none.status, 404);
        await none.body?.cancel();
      });

      await t.step(
        "the list says what Claude Code's cleanup deletes and what is kept",
        async () => {
          await rig!.open();
          const notice = page.locator("[data-testid=vault-notice]");
          await notice.waitFor();
          const text = await notice.innerText();
          assert.match(
            text,
            new RegExp(
              `Claude Code deletes sessions after 30 days \\(its default cleanupPeriodDays\\); ${units.length} are kept in the vault, 2 of them already deleted by it`,
            ),
          );
          await rig!.screenshot("vault-notice");
          await notice.locator("button", { hasText: "Hide" }).click();
          await notice.waitFor({ state: "detached" });
          await page.reload();
          await page.waitForSelector("[data-app-ready]");
          await page.locator("#recent-list .card").first().waitFor();
          assert.equal(await page.locator("[data-testid=vault-notice]").count(), 0, "stays hidden");
        },
      );

      await t.step("a gone session's tool calls are read from the vault, and say so", async () => {
        await page.goto(`${rig!.base}#/session/${encodeURIComponent(a.key)}`);
        const note = page.locator(".activity-note[data-activity=vault]");
        await note.waitFor();
        assert.match(await note.innerText(), /From the vault: its agent deleted the files/);
        await page.locator("details.tool-call").first().waitFor();
        assert.ok((await page.locator("details.tool-call").count()) > 0);
      });

      await t.step(
        "Restore from the vault writes the files back and shows the resume",
        async () => {
          await page.goto(`${rig!.base}#/session/${encodeURIComponent(a.key)}`);
          const button = page.locator("[data-testid=vault-restore]");
          await button.waitFor();
          await rig!.screenshot("vault-restore-button");
          await button.click();
          const done = page.locator("[data-testid=vault-restored]");
          await done.waitFor();
          const text = await done.innerText();
          assert.match(text, new RegExp(`Restored ${a.files.length} files? from the vault`));
          assert.ok(text.includes(`claude --resume ${a.sessionId}`), text);
          for (const f of a.files) {
            assert.deepEqual(await Deno.readFile(f.path), originals.get(f.path), f.path);
            assert.equal((await Deno.stat(f.path)).mode! & 0o777, 0o600);
          }
        },
      );

      await t.step(
        "a path occupied again is never overwritten: a 400 with the sentence",
        async () => {
          // (The dashboard shows no button then: the watched file is back, so the session
          // is not gone; the route still refuses a client that asks.)
          const occupied = b.files[0]!.path;
          await Deno.writeTextFile(occupied, "the user's own new file\n");
          const r = await api("/api/vault/restore", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ session: b.key }),
          });
          assert.equal(r.status, 400);
          assert.match((await r.json()).message, /Refusing to overwrite/);
          assert.equal(await Deno.readTextFile(occupied), "the user's own new file\n");
        },
      );
      assert.deepEqual(pageErrors, []);
    } finally {
      await rig?.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
