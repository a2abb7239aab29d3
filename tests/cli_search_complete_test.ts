/**
 * `intendant search` answers the complete first page (issue 14 §1), through the real
 * program on a generated 5,000-session store: cold in a one-shot process (no daemon), from
 * a running daemon (warm, over loopback with the token from daemon.json), and from the
 * store again when daemon.json is stale. The reference is the same store searched in
 * process with budgets far beyond the scan's cost; the old CLI answered these needles
 * `partial/timeout` with 0 groups on this store. Cursors continue a page on either path,
 * and a garbage cursor is a usage error (exit 2, one line).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { NEEDLES } from "../bench/corpus/mod.ts";
import { createSearchEngine, openStore, PARSER_VERSION } from "../lib/message_search/mod.ts";
import type { SearchGroup, SearchResponse } from "../lib/message_search/mod.ts";
import { buildBigStore } from "./helpers/big_store.ts";
import { MAIN, runIntendant, waitFor } from "./helpers/cli.ts";
import { DENO, withTempDir } from "./helpers/temp.ts";

type Page = SearchResponse & { answered_by: "daemon" | "store" };

/** What identifies a page's content: sessions in order, their totals and shown hits. */
function digest(groups: readonly SearchGroup[]): string[] {
  return groups.map((g) =>
    `${g.session_key} ${g.total_hits} ${g.hits.map((h) => h.record_id).join(",")}`
  );
}

async function search(root: string, env: Record<string, string>, args: string[]): Promise<Page> {
  const r = await runIntendant(root, ["search", ...args, "--json"], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Page;
}

Deno.test("search answers the complete first page on a 5,000-session store, cold or from the daemon", async (t) => {
  await withTempDir(async (root) => {
    const big = await buildBigStore(root, { sessions: 5_000, messages: 20_000 });
    const store = await openStore({
      root: big.storeRoot,
      parserVersion: PARSER_VERSION,
      windowDays: 14,
    });
    const manifest = await store.readManifest();
    assert.ok(Object.keys(manifest.sessions).length >= 5_000, "the store holds 5,000 sessions");
    // Budgets far beyond the whole scan's cost: the reference answer of this store.
    const reference = createSearchEngine({
      store,
      windowDays: 14,
      cursorKey: new Uint8Array(32).fill(1),
      timeBudgetMs: 600_000,
      freshLoadBudgetBytes: 2 ** 40,
    });
    const needles = [NEEDLES.rare, NEEDLES.mid, `"${NEEDLES.phrase}"`, NEEDLES.none];
    const expected = new Map<string, string[]>();
    for (const q of needles) {
      const ref = await reference.search({ q, limit: 20 });
      assert.equal(ref.state, "ready", `${q}: ${ref.partial_reason}`);
      expected.set(q, digest(ref.groups));
    }
    assert.ok(expected.get(NEEDLES.rare)!.length >= 5, "the rare needle is in several sessions");
    assert.equal(expected.get(NEEDLES.mid)!.length, 20, "the mid needle fills a page");

    await t.step("cold, in a one-shot process: every needle complete", async () => {
      for (const q of needles) {
        const page = await search(root, big.env, [q, "--limit", "20"]);
        assert.equal(page.answered_by, "store");
        assert.equal(page.state, "ready", `${q}: ${page.state}/${page.partial_reason}`);
        assert.deepEqual(digest(page.groups), expected.get(q), q);
      }
      const none = await runIntendant(root, ["search", NEEDLES.none], { env: big.env });
      assert.equal(none.code, 0);
      assert.match(none.stdout, /^no matches\n$/);
    });

    await t.step("--cursor continues a page; a garbage cursor exits 2 with one line", async () => {
      const first = await search(root, big.env, [NEEDLES.mid, "--limit", "7"]);
      assert.ok(first.cursor, "a full page carries a cursor");
      const second = await search(root, big.env, [
        NEEDLES.mid,
        "--limit",
        "7",
        "--cursor",
        first.cursor!,
      ]);
      assert.deepEqual(
        [...digest(first.groups), ...digest(second.groups)],
        expected.get(NEEDLES.mid)!.slice(0, 14),
      );
      for (const bad of ["garbage", first.cursor!.slice(0, -3) + "abc", "x".repeat(5000)]) {
        const r = await runIntendant(root, ["search", NEEDLES.mid, "--cursor", bad], {
          env: big.env,
        });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.split("\n").filter(Boolean).length, 2, r.stderr); // line + hint
        assert.doesNotMatch(r.stderr, /internal error|\bat /);
      }
    });

    await t.step(
      "a running daemon answers (warm, same results); a stale daemon.json falls back",
      async () => {
        const child = new Deno.Command(DENO, {
          args: ["run", "-A", "--quiet", MAIN, "serve", "--port", "0"],
          clearEnv: true,
          env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...big.env },
          stdout: "null",
          stderr: "null",
        }).spawn();
        const daemonJson = join(big.env.INTENDANT_HOME!, "daemon.json");
        try {
          await waitFor(
            async () => {
              try {
                return JSON.parse(await Deno.readTextFile(daemonJson)).pid === child.pid;
              } catch {
                return false;
              }
            },
            60_000,
            "daemon.json",
          );
          for (const q of needles) {
            const page = await search(root, big.env, [q, "--limit", "20"]);
            assert.equal(page.answered_by, "daemon", q);
            assert.equal(page.state, "ready", `${q}: ${page.state}/${page.partial_reason}`);
            assert.deepEqual(digest(page.groups), expected.get(q), q);
          }
          // A daemon cursor continues in a one-shot process too (one cursor.key per state root).
          const first = await search(root, big.env, [NEEDLES.mid, "--limit", "7"]);
          assert.equal(first.answered_by, "daemon");
          child.kill("SIGKILL");
          await child.status;
          // daemon.json survives a kill -9: it names a dead pid and a closed port now.
          const second = await runIntendant(root, [
            "search",
            NEEDLES.mid,
            "--limit",
            "7",
            "--cursor",
            first.cursor!,
            "--json",
          ], { env: big.env });
          assert.equal(second.code, 0, second.stderr);
          const page = JSON.parse(second.stdout) as Page;
          assert.equal(page.answered_by, "store");
          assert.deepEqual(digest(page.groups), expected.get(NEEDLES.mid)!.slice(7, 14));
        } finally {
          try {
            child.kill("SIGKILL");
          } catch {
            // already gone
          }
          await child.status;
        }
      },
    );
  });
});
