/**
 * The single file does a parallel backfill under the locked-down serve profile (issue 16
 * §4): dist/intendant.js is built by build.ts (main.ts bundled, the extraction worker
 * bundled on its own and embedded), copied alone into an empty directory, and run there
 * with exactly the serve profile's flags and DENO_AUDIT_PERMISSIONS. `intendant index`
 * with two workers extracts on them (the worker starts from a blob: URL: no read access
 * to any module is needed), every audited access stays inside the temp root, and the
 * store is the one the same file builds with INTENDANT_INDEX_WORKERS=1.
 * Control: a file bundled WITHOUT the embedding step falls back to in-thread extraction
 * (same store), and a file: worker under the same profile cannot even load its module.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { bundleSingleFile } from "../build.ts";
import { ENV_VARS_READ, resolveConfig } from "../lib/config.ts";
import { profileFlags, serveProfile } from "../lib/permissions.ts";
import { isInside } from "../lib/durable/mod.ts";
import { GENERATIONS_DIR, openStore, PARSER_VERSION } from "../lib/message_search/mod.ts";
import { ensureCorpus, PRESETS, scaled } from "../bench/corpus/mod.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

interface Audit {
  permission: string;
  value: string | null;
}

/** The store's entries (minus wall-clock facts) and generation bytes, for comparison. */
async function storeFacts(storeRoot: string) {
  const store = await openStore({ root: storeRoot, parserVersion: PARSER_VERSION, windowDays: 14 });
  const m = await store.readManifest();
  const entries = Object.fromEntries(
    Object.entries(m.sessions).map(([k, e]) => [k, {
      generations: e.generations,
      records: e.records,
      watermark: e.source_watermark,
      fingerprint: e.source_fingerprint,
      meta: e.meta,
      skipped: e.skipped,
    }]),
  );
  const files: Record<string, string> = {};
  for await (const f of Deno.readDir(join(storeRoot, GENERATIONS_DIR))) {
    const bytes = await Deno.readFile(join(storeRoot, GENERATIONS_DIR, f.name));
    files[f.name] = createHash("sha256").update(bytes).digest("hex");
  }
  return { entries, files };
}

Deno.test({
  name:
    "the single file extracts on workers under the audited serve profile, same store as in-thread",
  sanitizeResources: false,
  fn: () =>
    withTempDir(async (root) => {
      const realRoot = Deno.realPathSync(root);
      const file = join(realRoot, "dist", "intendant.js");
      const built = await bundleSingleFile(file);
      assert.ok(built.workerBytes > 10_000, "the worker bundle is embedded");
      const bare = join(realRoot, "dist", "bare.js");
      const b = await new Deno.Command(DENO, {
        args: ["bundle", "--platform=deno", "-o", bare, join(REPO_ROOT, "main.ts")],
        cwd: REPO_ROOT,
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.equal(b.code, 0, new TextDecoder().decode(b.stderr));
      const empty = join(realRoot, "empty");
      Deno.mkdirSync(empty);
      Deno.copyFileSync(file, join(empty, "intendant.js"));
      Deno.copyFileSync(bare, join(empty, "bare.js"));

      const corpus = await ensureCorpus({
        dir: join(realRoot, "corpus"),
        preset: scaled(PRESETS.small!, 0.25),
        seed: 5,
      });
      const h = corpus.homes;
      const env: Record<string, string> = {
        HOME: join(realRoot, "home"),
        INTENDANT_HOME: h.stateRoot,
        CODEX_HOME: h.codex,
        CLAUDE_CONFIG_DIR: h.claude,
        KIMI_CODE_HOME: h.kimi,
        PI_CODING_AGENT_DIR: h.pi,
        TMPDIR: join(realRoot, "tmp"),
      };
      Deno.mkdirSync(env.TMPDIR!, { recursive: true });
      const cfg = resolveConfig(env, { cwd: empty });
      const flags = profileFlags(serveProfile(cfg));
      assert.ok(!flags.some((f) => f === "-A" || f.startsWith("--allow-all")));
      const audit = join(realRoot, "audit.jsonl");
      const index = async (script: string, workers: string) => {
        await Deno.remove(cfg.messageSearch.cacheRoot, { recursive: true }).catch(() => {});
        const out = await new Deno.Command(DENO, {
          args: ["run", ...flags, script, "index", "--json"],
          cwd: empty,
          clearEnv: true,
          env: {
            PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
            ...env,
            INTENDANT_INDEX_WORKERS: workers,
            DENO_AUDIT_PERMISSIONS: audit,
            NO_COLOR: "1",
            DENO_NO_UPDATE_CHECK: "1",
          },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const stderr = new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 0, stderr);
        assert.doesNotMatch(stderr, /Uncaught|error:/i, "nothing printed about workers");
        const { report } = JSON.parse(new TextDecoder().decode(out.stdout));
        const errors = Object.values(report.sources).flatMap((s) =>
          (s as { errors: string[] }).errors
        );
        assert.deepEqual(errors, []);
        return {
          extraction: report.extraction,
          facts: await storeFacts(cfg.messageSearch.storeRoot),
        };
      };

      const parallel = await index("intendant.js", "2");
      assert.equal(parallel.extraction.workers, 2);
      assert.equal(parallel.extraction.unavailable, null);
      assert.ok(parallel.extraction.pooled >= 3, `pooled units: ${parallel.extraction.pooled}`);
      assert.equal(parallel.extraction.crashes, 0);
      const inThread = await index("intendant.js", "1");
      assert.equal(inThread.extraction.pooled, 0);
      assert.deepEqual(parallel.facts, inThread.facts);

      // Control: without the embedded worker the file falls back to this thread.
      const fallback = await index("bare.js", "2");
      assert.equal(fallback.extraction.pooled, 0);
      assert.deepEqual(fallback.facts, inThread.facts);

      // Every audited access of the three runs (workers included: they log into the same
      // audit) stays inside the profile.
      const entries = readAudit(audit);
      assert.ok(entries.length > 20, "the audit log recorded accesses");
      const outside = entries.filter((e) => {
        if (e.permission === "read" || e.permission === "write") {
          return !(e.value && isInside(e.value, realRoot));
        }
        return !(e.permission === "env" && ENV_VARS_READ.includes(e.value ?? ""));
      });
      assert.deepEqual(outside, []);
      assert.ok(entries.some((e) => e.permission === "read" && e.value?.startsWith(h.claude)));
    }),
});

Deno.test("control: a file: worker cannot load its module under a read grant that omits it", () =>
  withTempDir(async (root) => {
    const script = join(root, "spawn.js");
    Deno.writeTextFileSync(
      script,
      `const w = new Worker(new URL("./pool/worker_main.ts", "file://${REPO_ROOT}/lib/message_search/"), { type: "module" });
       w.onerror = (e) => { e.preventDefault(); console.log("refused: " + e.message); w.terminate(); };
       w.onmessage = (e) => { console.log("loaded: " + e.data.type); w.terminate(); };`,
    );
    const out = await new Deno.Command(DENO, {
      args: ["run", "--no-prompt", `--allow-read=${root}`, script],
      cwd: root,
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.match(new TextDecoder().decode(out.stdout), /^refused: Requires read access/m);
  }));

function readAudit(path: string): Audit[] {
  return Deno.readTextFileSync(path).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
