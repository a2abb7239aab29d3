/**
 * `intendant index` over homes laid out like the real tools' (all four external formats
 * plus native sessions), in the default mode where the machine-global stores are swept:
 * per-source coverage counts match what the fixtures say, skips are reported, and
 * home-only mode leaves the global stores out.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildAllFixtures } from "./fixtures/all.ts";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";

Deno.test("`intendant index` publishes the right records for every source", () =>
  withTempDir(async (root) => {
    const { homes, env } = await buildAllFixtures(root);
    const want: Record<string, { sessions: number; records: number }> = {};
    for (const home of Object.values(homes)) {
      const sessions = Object.values(home.expected).filter((r) => r.length > 0);
      want[home.source] = {
        sessions: sessions.length,
        records: sessions.reduce((n, r) => n + r.length, 0),
      };
    }
    const r = await runIntendant(root, ["index", "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const { coverage } = JSON.parse(r.stdout);
    for (const [source, w] of Object.entries(want)) {
      const c = coverage.sources[source];
      assert.equal(c.sessions, w.sessions, `${source} sessions`);
      assert.equal(c.records, w.records, `${source} records`);
      assert.deepEqual(c.errors, [], `${source} errors`);
    }
    // Every source's fixture plants skippable input; coverage says so.
    const skips = Object.fromEntries(
      Object.entries(coverage.sources).map((
        [s, c],
      ) => [
        s,
        Object.values((c as { skipped: Record<string, number> }).skipped).reduce(
          (a, b) => a + b,
          0,
        ),
      ]),
    );
    for (const s of ["codex", "claude-code", "kimi", "pi"]) {
      assert.ok(skips[s]! > 0, `${s} reports skips`);
    }
    const table = await runIntendant(root, ["index"], { env });
    assert.match(table.stdout, /^claude-code\s+\d+/m);

    const only = await runIntendant(root, ["index", "--json"], {
      env: {
        ...env,
        INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "1",
        INTENDANT_HOME: join(root, "fresh-state"),
      },
    });
    const c2 = JSON.parse(only.stdout).coverage.sources;
    for (const s of ["codex", "claude-code", "kimi", "pi"]) {
      assert.equal(c2[s].sessions, 0, `${s} excluded in home-only mode`);
    }
  }));
