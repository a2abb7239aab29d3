/**
 * Reliability-plan F6: configured paths cannot widen the permission profile. Deno splits
 * an `--allow-read=`/`--allow-write=` value on "," with no escape, so a path holding a comma
 * used to grant whatever followed it (`CLAUDE_CONFIG_DIR='/x,/'` → read access to "/").
 * fast-check feeds every configured path (HOME, INTENDANT_HOME, every source's home
 * variables — the four original ones and issue 17's nine —, TMPDIR, --log-file, the
 * project) with commas, `=`, NUL, newlines, `..`, `~`, relative and arbitrary Unicode
 * strings into resolveConfig → serveProfile/runProfile → profileFlags, and parses the
 * flags the way Deno does: every input is either refused with InvalidInputError (the
 * CLI's exit 2, one line) or expressed exactly — each granted path is one of the
 * configured roots, absolute and normalized. The negative control is the old builder (a
 * plain join) on the same inputs: it widens.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { join } from "node:path";
import { resolveConfig, type ResolvedConfig } from "../lib/config.ts";
import { InvalidInputError } from "../lib/errors.ts";
import { type HomeRule, type HomeSource, SOURCE_HOME_RULES } from "../lib/source_homes.ts";
import {
  type PermissionProfile,
  profileFlags,
  runProfile,
  serveProfile,
} from "../lib/permissions.ts";
import { runIntendant } from "./helpers/cli.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { withTempDir } from "./helpers/temp.ts";

const RUNS = STRESS ? 20_000 : 2_000;

/** The paths a flag list grants, parsed as Deno parses them (value split on ","). */
function granted(flags: readonly string[]): string[] {
  return flags.flatMap((f) => {
    const m = /^--allow-(read|write)=(.*)$/s.exec(f);
    return m ? m[2]!.split(",") : [];
  });
}

/**
 * The roots a config names (what a profile may grant, at most): each source home, or for
 * a source whose home rule names read roots, exactly those under it (lib/source_homes.ts),
 * and a named database file with its WAL and rollback journal.
 */
function roots(cfg: ResolvedConfig, project: string): Set<string> {
  const homes = Object.entries(cfg.sourceHomes).flatMap(([id, sh]) => {
    const rule: HomeRule = SOURCE_HOME_RULES[id as HomeSource];
    return [
      ...sh.homes.flatMap((h) => (rule.readRoots ?? [""]).map((x) => x ? join(h.path, x) : h.path)),
      ...sh.files.flatMap((f) => [f.path, `${f.path}-wal`, `${f.path}-journal`]),
    ];
  });
  const r = [cfg.stateRoot, cfg.tmpDir, project, ...homes];
  if (cfg.logFile) r.push(cfg.logFile);
  return new Set(r);
}

/** The builder as it was: paths joined with "," unescaped. */
function oldFlags(p: PermissionProfile): string[] {
  const out: string[] = [];
  for (const [k, v] of [["read", p.read], ["write", p.write]] as const) {
    if (v.length) out.push(`--allow-${k}=${v.join(",")}`);
  }
  return out;
}

const piece = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom(",", ",/", "/", "..", "../..", "=", "\0", "\n", "~", "~/", " ", ".", "é", "東京"),
);
const pathLike = fc.array(piece, { maxLength: 5 }).map((parts) => parts.join(""));
const absLike = pathLike.map((p) => `/${p}`);
const anyPath = fc.oneof(pathLike, absLike, fc.constantFrom("/x,/", "/h/../..", "rel/dir", "/ok"));

Deno.test("F6: no configured path widens the locked profile (fuzzed), and a bad one is refused with exit 2", async () => {
  let widened = 0;
  let refused = 0;
  let expressed = 0;
  let controlWidened = 0;
  const keys = [
    "HOME",
    "INTENDANT_HOME",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "KIMI_CODE_HOME",
    "PI_CODING_AGENT_DIR",
    "TMPDIR",
    "GEMINI_CLI_HOME",
    "QWEN_RUNTIME_DIR",
    "QWEN_HOME",
    "COPILOT_HOME",
    "CURSOR_CONFIG_DIR",
    "OPENCODE_DB",
    "GOOSE_PATH_ROOT",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
  ];
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom(...keys), anyPath),
      fc.option(anyPath, { nil: undefined }),
      absLike,
      anyPath,
      (env, logFile, cwd, projectRaw) => {
        const e = { HOME: "/home/u", ...env };
        let cfg: ResolvedConfig;
        try {
          cfg = resolveConfig(e, { cwd, logFile, port: 8765 });
        } catch (err) {
          if (err instanceof RangeError) return; // no state root at all: not a profile
          throw err;
        }
        const project = projectRaw.startsWith("/") ? projectRaw : `${cwd}/${projectRaw}`;
        const allowed = roots(cfg, project);
        for (const build of [() => serveProfile(cfg), () => runProfile(cfg, project)]) {
          let profile: PermissionProfile;
          let flags: string[];
          try {
            profile = build();
            flags = profileFlags(profile);
          } catch (err) {
            assert.ok(err instanceof InvalidInputError, String(err));
            assert.doesNotMatch(err.message, /\n/, "one line");
            refused++;
            continue;
          }
          expressed++;
          for (const g of granted(flags)) {
            if (!allowed.has(g) || !g.startsWith("/")) widened++;
          }
          if (granted(oldFlags(profile)).some((g) => !allowed.has(g))) controlWidened++;
        }
        // The old builder on the raw configured paths (before any refusal).
        const raw: PermissionProfile = {
          net: [],
          read: [...allowed],
          write: [cfg.stateRoot],
          env: [],
          run: [],
        };
        if (granted(oldFlags(raw)).some((g) => !allowed.has(g))) controlWidened++;
      },
    ),
    { numRuns: RUNS, seed: 6 },
  );
  assert.equal(widened, 0);
  assert.ok(refused > 0 && expressed > 0, `both outcomes exercised: ${refused} / ${expressed}`);
  assert.ok(controlWidened > 0, "the old builder widens on the same inputs");

  // Through the real program: `serve --locked` with a comma in CLAUDE_CONFIG_DIR exits 2
  // with one line and a hint, before anything is launched.
  await withTempDir(async (root) => {
    const r = await runIntendant(root, ["serve", "--locked", "--port", "0"], {
      env: { CLAUDE_CONFIG_DIR: "/x,/", INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" },
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^intendant: .*CLAUDE_CONFIG_DIR .*"\/x," contains a comma[^\n]*\nhint: /,
    );
    assert.equal(r.stderr.trimEnd().split("\n").length, 2);
  });
  figure(
    "F6",
    `widening profiles: ${widened}/${RUNS} fuzzed inputs (${refused} builds refused with exit 2, ${expressed} expressed exactly), control (comma-joined builder): ${controlWidened} widened`,
  );
});
