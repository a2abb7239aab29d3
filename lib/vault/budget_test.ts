/**
 * The disk budget on a real vault: superseded versions go first (oldest first), then the
 * copies of files their agent deleted (oldest first), never a present file's current
 * copy; catalogs are rewritten before objects go, emptied catalogs removed, the record
 * kept in budget.json, and what is left restores byte for byte.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/store_fixtures.ts";
import { type KeepUnit, latest, planPrune, restoreSession, Vault, vaultStatus } from "./mod.ts";

/** Distinct Codex-rollout-shaped lines (distinct so compression cannot hide a version). */
function rollout(seed: number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) {
    s += JSON.stringify({
      timestamp: new Date(1_764_000_000_000 + (seed * 10_000 + i) * 1000).toISOString(),
      type: "response_item",
      payload: {
        type: "message",
        role: i % 2 ? "assistant" : "user",
        content: [{
          type: i % 2 ? "output_text" : "input_text",
          text: `seed ${seed} line ${i} ${crypto.randomUUID()} ${crypto.randomUUID()}`,
        }],
      },
    }) + "\n";
  }
  return s;
}

function unitOf(dir: string, id: string): KeepUnit {
  return {
    key: `codex:${id}`,
    source: "codex",
    sessionId: id,
    files: [{ path: join(dir, `rollout-2026-11-01T10-00-00-${id}.jsonl`), role: "main" }],
  };
}

Deno.test("vault budget: superseded first, then deleted files, oldest first; current copies never", async () => {
  await withTempDir(async (dir) => {
    const sessions = join(dir, "home", ".codex", "sessions", "2026", "11", "01");
    await Deno.mkdir(sessions, { recursive: true });
    let t = 1_000_000;
    const vault = new Vault({ dir: join(dir, "state", "vault"), now: () => (t += 1000) });
    const [a, b, c] = [
      "aaaaaaaa-0000-4000-8000-000000000001",
      "bbbbbbbb-0000-4000-8000-000000000002",
      "cccccccc-0000-4000-8000-000000000003",
    ]
      .map((id) => unitOf(sessions, id));
    // a: three versions (two rewrites); b: kept, then deleted by its agent; c: current.
    await Deno.writeTextFile(a!.files[0]!.path, rollout(1, 300));
    await Deno.writeTextFile(b!.files[0]!.path, rollout(2, 300));
    await Deno.writeTextFile(c!.files[0]!.path, rollout(3, 300));
    await vault.keep([a!, b!, c!]);
    await Deno.writeTextFile(a!.files[0]!.path, rollout(4, 300));
    await vault.keep([a!]);
    await Deno.writeTextFile(a!.files[0]!.path, rollout(5, 300));
    await vault.keep([a!]);
    await Deno.remove(b!.files[0]!.path);
    const r = await vault.keep([a!, b!, c!]);
    assert.equal(r.gone, 1);

    const { catalogs } = await vault.list();
    const before = vaultStatus(catalogs).total;
    assert.equal(before.versions, 5);
    const per = before.bytes_kept / 5; // the versions are alike in size

    // Under budget: nothing planned, nothing done.
    assert.equal(planPrune(catalogs, before.bytes_kept).steps.length, 0);
    let p = await vault.prune(before.bytes_kept);
    assert.deepEqual([p.versions, p.over], [0, false]);
    assert.equal(await vault.budget(), null);

    // A little over: a's OLDEST superseded version goes, nothing else.
    p = await vault.prune(Math.floor(before.bytes_kept - per / 2));
    assert.deepEqual([p.versions, p.gone_files, p.sessions, p.over], [1, 0, 0, false]);
    let ca = (await vault.read(a!.key))!;
    assert.equal(ca.files[0]!.versions.length, 2);
    assert.ok(
      ca.files[0]!.versions[0]!.kept_ms >
        catalogs.find((x) => x.key === a!.key)!.files[0]!.versions[0]!.kept_ms,
    );

    // Tighter: a's other superseded version, then b (deleted) as a whole session.
    p = await vault.prune(Math.floor(before.bytes_kept - per * 2.5));
    assert.deepEqual([p.versions, p.gone_files, p.sessions, p.over], [2, 1, 1, false]);
    assert.equal(await vault.read(b!.key), null, "an emptied catalog is removed");
    ca = (await vault.read(a!.key))!;
    assert.equal(ca.files[0]!.versions.length, 1);

    // Tighter than the current copies: nothing more can go, and it says so.
    p = await vault.prune(1024);
    assert.deepEqual([p.versions, p.over], [0, true]);
    const rec = (await vault.budget())!;
    assert.deepEqual([rec.versions, rec.gone_files, rec.sessions], [3, 1, 1]);
    assert.ok(rec.bytes_freed > 0 && rec.bytes_freed < before.bytes_kept);

    // The objects went with them: nothing orphaned, what is left is exactly current.
    assert.deepEqual(await vault.collect(0), { objects: 0, bytes: 0 });
    const after = vaultStatus((await vault.list()).catalogs).total;
    assert.equal(after.versions, 2);
    assert.ok(Math.abs(after.bytes_kept - (before.bytes_kept - rec.bytes_freed)) < 1);
    // Current copies still restore byte for byte.
    const out = join(dir, "restored");
    for (const u of [a!, c!]) {
      const cat = await vault.find(u.key);
      assert.equal(latest(cat.files[0]!).size, (await Deno.stat(u.files[0]!.path)).size);
      const [f] = await restoreSession({
        vault,
        catalog: cat,
        to: join(out, u.sessionId),
        homes: [],
      });
      assert.deepEqual(await Deno.readFile(f!.path), await Deno.readFile(u.files[0]!.path));
    }
  });
});

Deno.test("vault budget: a shared object frees nothing until its last version goes", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "home", ".codex", "sessions");
    await Deno.mkdir(root, { recursive: true });
    const vault = new Vault({ dir: join(dir, "vault") });
    const a = unitOf(root, "aaaaaaaa-0000-4000-8000-00000000000a");
    const b = unitOf(root, "bbbbbbbb-0000-4000-8000-00000000000b");
    const same = rollout(7, 200);
    await Deno.writeTextFile(a.files[0]!.path, same);
    await Deno.writeTextFile(b.files[0]!.path, same);
    await vault.keep([a, b]);
    await Deno.remove(a.files[0]!.path);
    await vault.keep([a, b]);
    const { catalogs } = await vault.list();
    const used = vaultStatus(catalogs).total.bytes_kept;
    // a is gone, but b (present) names the same object: pruning a frees nothing.
    const plan = planPrune(catalogs, used - 1);
    assert.deepEqual([plan.steps.length, plan.orphans.length, plan.over], [1, 0, true]);
  });
});
