/**
 * The cleanup notice over a real vault: Claude Code's period from its settings file or
 * its default, a "never" period says nothing, deleted sessions and sessions due within a
 * week are counted from the kept files' mtimes, and the sentence says where the period
 * came from.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/store_fixtures.ts";
import { cleanupPeriodOf, cleanupRiskOf, readCleanupRisks, Vault } from "./mod.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 4, 12);

async function world(dir: string) {
  const home = join(dir, ".claude");
  const proj = join(home, "projects", "-home-dev-shop");
  await Deno.mkdir(proj, { recursive: true });
  const vault = new Vault({ dir: join(dir, "vault") });
  // Ages in days since the transcript last changed: 2, 25 (due within a week of 30), 29.
  const ages = [2, 25, 29];
  const units = [];
  for (const [i, age] of ages.entries()) {
    const id = `0000000${i}-aaaa-4bbb-8ccc-dddddddddddd`;
    const path = join(proj, `${id}.jsonl`);
    await Deno.writeTextFile(
      path,
      JSON.stringify({ type: "user", sessionId: id, message: { role: "user", content: "hi" } }) +
        "\n",
    );
    const t = new Date(NOW - age * DAY);
    await Deno.utime(path, t, t);
    units.push({
      key: `claude-code:${id}`,
      source: "claude-code",
      sessionId: id,
      files: [{ path, role: "main" }],
    });
  }
  await vault.keep(units);
  // The agent's cleanup already took a fourth one.
  const gonePath = join(proj, "00000009-aaaa-4bbb-8ccc-dddddddddddd.jsonl");
  await Deno.writeTextFile(gonePath, "{}\n");
  const gone = {
    key: "claude-code:00000009",
    source: "claude-code",
    sessionId: "00000009",
    files: [{ path: gonePath, role: "main" }],
  };
  await vault.keep([gone]);
  await Deno.remove(gonePath);
  await vault.keep([gone]);
  return { home, vault };
}

Deno.test("cleanup risk: the default period, deleted and due sessions counted from the vault", async () => {
  await withTempDir(async (dir) => {
    const { home, vault } = await world(dir);
    const { catalogs } = await vault.list();
    const [r] = await readCleanupRisks({ claudeHomes: [home], catalogs, now: NOW });
    assert.ok(r);
    assert.deepEqual(
      [r.period_days, r.period_from, r.kept, r.kept_gone, r.due_soon, r.last_cleanup_ms],
      [30, "default", 4, 1, 2, null],
    );
    assert.equal(
      r.line,
      "Claude Code deletes sessions after 30 days (its default cleanupPeriodDays); 4 are kept in the vault, 1 of them already deleted by it, 2 more due within 7 days",
    );

    // Its settings say 10 days, and its cleanup left .last-cleanup.
    await Deno.writeTextFile(
      join(home, "settings.json"),
      JSON.stringify({ cleanupPeriodDays: 10, model: "opus" }),
    );
    await Deno.writeTextFile(join(home, ".last-cleanup"), "");
    const [s] = await readCleanupRisks({ claudeHomes: [home], catalogs, now: NOW });
    assert.deepEqual([s!.period_days, s!.period_from, s!.due_soon], [10, "settings", 2]);
    assert.ok(s!.last_cleanup_ms !== null && Math.abs(s!.last_cleanup_ms - Date.now()) < 60_000);
    assert.match(s!.line, /after 10 days \(cleanupPeriodDays in its settings\)/);

    // A "never" period: nothing to warn about.
    await Deno.writeTextFile(
      join(home, "settings.json"),
      JSON.stringify({ cleanupPeriodDays: 99999 }),
    );
    assert.deepEqual(await readCleanupRisks({ claudeHomes: [home], catalogs, now: NOW }), []);
    // No Claude home: no line.
    assert.deepEqual(
      await readCleanupRisks({ claudeHomes: [join(dir, "nope")], catalogs, now: NOW }),
      [],
    );
  });
});

Deno.test("cleanup risk: a bad settings file means the default; an empty vault says what it will do", () => {
  for (
    const bad of [
      "{",
      "[]",
      '{"cleanupPeriodDays": 0}',
      '{"cleanupPeriodDays": "9"}',
      '{"cleanupPeriodDays": 2.5}',
    ]
  ) {
    assert.equal(cleanupPeriodOf(bad), null, bad);
  }
  assert.equal(cleanupPeriodOf('{"cleanupPeriodDays": 1}'), 1);
  const r = cleanupRiskOf({
    settingsText: null,
    settingsPath: "/h/.claude/settings.json",
    lastCleanupMs: null,
    catalogs: [],
    now: NOW,
  })!;
  assert.equal(
    r.line,
    "Claude Code deletes sessions after 30 days (its default cleanupPeriodDays); the vault keeps each of them from the first sweep on",
  );
});
