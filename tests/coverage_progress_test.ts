/**
 * `/api/coverage` while the first sweep runs (issue 14, item 6): a real daemon on a real
 * port over 60 native sessions is asked, from inside the sweep's own first progress
 * report, what it is doing. The answer is `building` with the sweep's progress (files
 * met, messages found, the source being read) and where every source is looked for;
 * once ready, the progress is gone, the counts are the index's, and the locations say
 * which directories exist.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../lib/config.ts";
import { startDaemon } from "../lib/server/mod.ts";
import type { CoverageView } from "../lib/server/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { waitFor } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const SESSIONS = 60;

Deno.test("/api/coverage carries the first sweep's progress while building, and the source locations", () =>
  withTempDir(async (root) => {
    const cfg0 = resolveConfig(hermeticEnv(root), { cwd: root });
    const cfg = { ...cfg0, server: { host: "127.0.0.1" as const, port: 0 } };
    for (let i = 0; i < SESSIONS; i++) {
      await writeNativeSession(cfg.logsDir, { turns: 2, task: `Progress probe ${i}` });
    }
    let base = "";
    let token = "";
    let during: Promise<CoverageView> | null = null;
    const ask = async () =>
      (await fetch(`${base}api/coverage`, { headers: { authorization: `Bearer ${token}` } }))
        .json() as Promise<CoverageView>;
    let finished = false;
    const daemon = await startDaemon(cfg, {
      onProgress: (p) => {
        // Asked from inside the sweep: the answer is served while the sweep goes on.
        if (!during && base && p.files >= 2) during = ask();
      },
      onFirstSweep: () => void (finished = true),
    });
    base = daemon.url;
    token = daemon.token;
    try {
      await waitFor(() => during !== null, 30_000, "a progress report");
      const mid = await during!;
      assert.equal(mid.state, "building");
      assert.ok(mid.sweep_progress, JSON.stringify(mid));
      assert.equal(mid.sweep_progress.current, "intendant");
      const native = mid.sweep_progress.sources.intendant!;
      assert.ok(native.files >= 2 && native.files <= SESSIONS, JSON.stringify(native));
      assert.ok(native.messages >= 0);
      assert.deepEqual(mid.locations.map((l) => [l.source, l.state]), [
        ["intendant", "found"],
        ["codex", "skipped"],
        ["claude-code", "skipped"],
        ["kimi", "skipped"],
        ["pi", "skipped"],
        ["gemini", "skipped"],
        ["qwen", "skipped"],
        ["copilot", "skipped"],
        ["cursor", "skipped"],
        ["droid", "skipped"],
        ["opencode", "skipped"],
        ["goose", "skipped"],
      ]);
      assert.equal(mid.locations[0]!.env, "INTENDANT_HOME");

      await waitFor(() => finished, 60_000, "the first sweep");
      const done = await ask();
      assert.equal(done.state, "ready");
      assert.equal(done.sweep_progress, null);
      assert.equal(done.sources.intendant!.sessions, SESSIONS);
      assert.ok(done.sources.intendant!.records >= SESSIONS * 2);
    } finally {
      await daemon.shutdown();
    }
  }));
