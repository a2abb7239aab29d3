/**
 * The vault through the real CLI, for every source whose sessions are files (the eight
 * external JSONL sources' fixtures, laid out like the real tools'): `intendant index`
 * keeps every session; the agent deletes one session's files; the next index marks it
 * gone and search still finds it; `intendant vault restore` writes it back byte for byte
 * (0600), refuses to do it twice, and the source's own discovery (our extractor, on the
 * restored home) finds the session again with every record. INTENDANT_VAULT=off keeps
 * nothing. `vault restore --to` writes elsewhere.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { FixtureHome } from "./fixtures/types.ts";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";
import { SOURCE_TABLE } from "../lib/message_search/mod.ts";

const FILE_SOURCES = Object.values(SOURCE_TABLE).filter((r) => r.keep.kind === "files").map((r) =>
  r.id
);

Deno.test("vault e2e: every file source is kept, survives deletion, and is restored byte for byte", async () => {
  await withTempDir(async (root) => {
    const { homes, env } = await buildAllFixtures(root, { sources: "all" });
    const first = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(first.code, 0, first.stderr);
    const kept = JSON.parse(first.stdout).vault;
    assert.ok(kept.new > 0, JSON.stringify(kept));
    assert.deepEqual(kept.errors, []);

    const status = async () => {
      const r = await runIntendant(root, ["vault", "status", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const st0 = await status();
    for (const s of FILE_SOURCES) {
      const h = homes[s] as FixtureHome | undefined;
      assert.ok(h, `fixture of ${s}`);
      const units = (await h.extractor().discover()).units;
      assert.equal(st0.by_source[s]?.sessions, units.length, `${s}: every session kept`);
      assert.equal(st0.by_source[s].gone, 0);
    }
    // Database sources are kept as exports of their rows (tests/vault_db_e2e_test.ts).
    assert.ok(st0.by_source.opencode?.sessions > 0, "OpenCode sessions kept as exports");
    assert.equal(st0.by_source.intendant, undefined, "native sessions live in the state root");

    // Each source's agent deletes one session: its files, all of them.
    const victims: { source: string; key: string; files: Map<string, Uint8Array> }[] = [];
    for (const s of FILE_SOURCES) {
      const h = homes[s] as FixtureHome;
      const unit = (await h.extractor().discover()).units.find((u) =>
        (h.expected[u.key]?.length ?? 0) > 0
      )!;
      // A session may live in several folders (Claude Code's worktree copies): the agent's
      // cleanup removes them all, so delete until discovery no longer lists it.
      const files = new Map<string, Uint8Array>();
      for (let left = unit.files; left.length > 0;) {
        for (const f of left) files.set(f.path, await Deno.readFile(f.path));
        for (const f of left) await Deno.remove(f.path);
        left = (await h.extractor().discover()).units.find((u) => u.key === unit.key)?.files ?? [];
      }
      victims.push({ source: s, key: unit.key, files });
    }
    const second = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(second.code, 0, second.stderr);
    const st1 = await status();
    for (const v of victims) {
      assert.equal(st1.by_source[v.source].gone, 1, `${v.source}: the deleted session is gone`);
    }

    // Still found: a sentence of the deleted Claude Code session answers a search.
    const claude = victims.find((v) => v.source === "claude-code")!;
    const text = (homes["claude-code"] as FixtureHome).expected[claude.key]!.find((r) =>
      !r.superseded && r.text.split(" ").length > 3
    )!.text;
    const found = await runIntendant(root, ["search", `"${text.slice(0, 60)}"`, "--json"], {
      env,
    });
    assert.equal(found.code, 0, found.stderr);
    const groups = JSON.parse(found.stdout).groups as { session_key: string }[];
    assert.ok(
      groups.some((g) =>
        g.session_key === claude.key
      ),
      "the deleted session is found",
    );

    for (const v of victims) {
      const id = v.key.slice(v.key.indexOf(":") + 1);
      const r = await runIntendant(root, ["vault", "restore", v.key, "--json"], { env });
      assert.equal(r.code, 0, `${v.source}: ${r.stderr}`);
      const restored = JSON.parse(r.stdout) as { files: { path: string }[]; resume: string };
      assert.ok(restored.resume.length > 0, `${v.source}: a resume command`);
      // Every file discovery ever listed for the session (a twin copy discovery never
      // chose — Claude Code's worktree duplicate of a subagent file — was never its file).
      assert.ok(restored.files.length >= 1);
      for (const { path } of restored.files) {
        assert.deepEqual(await Deno.readFile(path), v.files.get(path), `${v.source}: ${path}`);
        assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      }
      // Never twice: the files are in place now.
      const again = await runIntendant(root, ["vault", "restore", id], { env });
      assert.equal(again.code, 2, `${v.source}: ${again.stdout}${again.stderr}`);
      assert.match(again.stderr, /Refusing to overwrite/);
      // The agent's own layout finds it again: our extractor on the restored home.
      const h = homes[v.source] as FixtureHome;
      const ex = h.extractor();
      const unit = (await ex.discover()).units.find((u) => u.key === v.key);
      assert.ok(unit, `${v.source}: discovery sees the restored session`);
      const out = await ex.extract(unit, null, { now: Date.now() });
      assert.ok(out.kind === "replace", `${v.source}: ${out.kind}`);
      assert.equal(out.records.length, h.expected[v.key]!.length, `${v.source}: every record`);
    }
    const third = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(JSON.parse(third.stdout).vault.new, 0, "restored files are not kept twice");
    const st2 = await status();
    assert.equal(st2.total.gone, 0, "every restored session is back in place");
    assert.equal(st2.total.versions, st1.total.versions, "no version counted twice");

    // --to writes elsewhere, keeping the layout under the main file's folder.
    const to = join(root, "copy");
    const copy = await runIntendant(root, ["vault", "restore", claude.key, "--to", to, "--json"], {
      env,
    });
    assert.equal(copy.code, 0, copy.stderr);
    const written = JSON.parse(copy.stdout).files as { path: string; from: string }[];
    for (const f of written) {
      assert.ok(f.path.startsWith(to + "/"));
      assert.deepEqual(await Deno.readFile(f.path), claude.files.get(f.from));
    }
  });
});

Deno.test("vault e2e: INTENDANT_VAULT=off keeps nothing and says so; a bad value is refused", async () => {
  await withTempDir(async (root) => {
    const { env } = await buildAllFixtures(root);
    const off = await runIntendant(root, ["index"], { env: { ...env, INTENDANT_VAULT: "off" } });
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /vault: off/);
    const st = await runIntendant(root, ["vault", "status", "--json"], {
      env: { ...env, INTENDANT_VAULT: "off" },
    });
    const j = JSON.parse(st.stdout);
    assert.equal(j.enabled, false);
    assert.equal(j.total.sessions, 0);
    const bad = await runIntendant(root, ["index"], { env: { ...env, INTENDANT_VAULT: "of" } });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /INTENDANT_VAULT/);
  });
});

Deno.test("vault e2e: the disk budget prunes what a deleted session left, says so, and status shows it", async () => {
  await withTempDir(async (root) => {
    const { homes, env } = await buildAllFixtures(root);
    const first = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(first.code, 0, first.stderr);
    const status = async (e: Record<string, string>) => {
      const r = await runIntendant(root, ["vault", "status", "--json"], { env: e });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const st0 = await status(env);
    assert.equal(st0.budget.max_bytes, 20 * 1024 ** 3, "the documented default");
    assert.equal(st0.budget.used_bytes, st0.total.bytes_kept);
    assert.equal(st0.budget.last, null);

    // Claude Code's cleanup deletes a session; then a budget just under what is kept.
    const h = homes["claude-code"] as FixtureHome;
    const unit = (await h.extractor().discover()).units[0]!;
    for (const f of unit.files) await Deno.remove(f.path);
    const tight = { ...env, INTENDANT_VAULT_MAX_BYTES: String(st0.total.bytes_kept - 1) };
    const second = await runIntendant(root, ["index"], { env: tight });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /vault: over its budget of .*pruned \d+ old version/);
    const st1 = await status(tight);
    assert.ok(st1.budget.last.versions >= 1, JSON.stringify(st1.budget));
    assert.ok(st1.total.bytes_kept < st0.total.bytes_kept);
    assert.ok(st1.total.bytes_kept <= st1.budget.max_bytes);
    // Every other source's sessions are all still kept.
    for (const s of FILE_SOURCES.filter((s) => s !== "claude-code")) {
      assert.equal(st1.by_source[s]?.sessions, st0.by_source[s]?.sessions, s);
    }
    const human = await runIntendant(root, ["vault", "status"], { env: tight });
    assert.match(human.stdout, /budget .* used \(\d+%\)/);
    assert.match(human.stdout, /the budget last bit \d{4}-\d\d-\d\d: \d+ old version/);
    const bad = await runIntendant(root, ["index"], {
      env: { ...env, INTENDANT_VAULT_MAX_BYTES: "lots" },
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /INTENDANT_VAULT_MAX_BYTES/);
  });
});
