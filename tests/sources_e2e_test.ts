/**
 * Every source, end to end through the real program (issue 17 "Done when"): a hermetic
 * home holds a session of each of the twelve sources, written by the exact-format fixture
 * writers where the real tools put them — the seven new ones at their DEFAULT homes under
 * $HOME (`~/.gemini`, `~/.qwen`, `~/.copilot`, `~/.cursor`, `~/.factory`,
 * `~/.local/share/opencode`), Goose under GOOSE_PATH_ROOT (`<it>/data`), the original five
 * under their variables. A planted word appended the way each tool writes (a JSONL line,
 * or a row its database writer inserts) is found by `intendant index` + `intendant search
 * --json` in every source's session; superseded flags are right where the formats record
 * rewinds (Gemini `$rewindTo`, Qwen's rewind branch, OpenCode's `revert`, and a Copilot
 * file rewritten after a rewind between two sweeps); one hit per source resolves through
 * the catalog's locate to the hit message; a fresh state root indexed under the daemon's
 * exact serve profile (lib/permissions.ts) finds all twelve too; `intendant sessions
 * --json` lists each session with its tool's resume command.
 * On the code before the wiring, discovery knew five sources: the seven new sessions were
 * never indexed, so the first assertion fails for each of them.
 */
import { plantUserMessage as plant } from "./fixtures/plant.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex } from "../lib/message_search/mod.ts";
import { sessionDetail } from "../lib/catalog/mod.ts";
import { ALL_FIXTURES, buildAllFixtures } from "./fixtures/all.ts";
import type { AnyFixtureHome } from "./fixtures/types.ts";
import { CopilotSessionWriter, tickClock, uuidFrom } from "./helpers/fixtures/copilot.ts";
import { MAIN, runIntendant } from "./helpers/cli.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { profileFlags, serveProfile } from "../lib/permissions.ts";

const WORD = "xylophonist";
const NEW_SOURCES = ["gemini", "qwen", "copilot", "cursor", "droid", "opencode", "goose"] as const;

/** The resume command each source's listing must show (the tool's own form). */
const RESUME: Record<string, RegExp> = {
  intendant: /^intendant run --resume /,
  codex: /^codex resume /,
  "claude-code": /claude --resume /,
  kimi: /kimi --session /,
  pi: /^pi --session /,
  gemini: /gemini --resume /,
  qwen: /qwen --resume /,
  copilot: /^copilot --resume /,
  cursor: /cursor-agent --resume /,
  droid: /droid --resume /,
  opencode: /opencode --session /,
  goose: /^goose session --resume --session-id /,
};

interface Hit {
  superseded: boolean;
  snippet: string;
  snippet_offset_bytes: number;
  locator: string;
  role: string;
}
interface Group {
  session_key: string;
  source: string;
  hits: Hit[];
}

/** Appends one active user message carrying `text` the way `home`'s tool writes it. */
async function searchJson(root: string, env: Record<string, string>, args: string[]) {
  const r = await runIntendant(root, ["search", ...args, "--json", "--limit", "100"], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { groups: Group[] };
}

Deno.test("every source is indexed from its real layout, searchable, superseded right, located, listed with its resume command", () =>
  withTempDir(async (root) => {
    const fixtures = await buildAllFixtures(root);
    const homes: Record<string, AnyFixtureHome> = { ...fixtures.homes };
    const home = join(root, "home");
    const gooseRoot = join(root, "goose-root");
    for (const source of NEW_SOURCES) {
      const fx = ALL_FIXTURES.find((f) => f.source === source)!;
      homes[source] = await fx.build(source === "goose" ? gooseRoot : home);
    }
    // A Copilot session rewritten after a rewind between two sweeps (its file is the
    // record of the rewind: the dropped events simply vanish from it).
    const copilotHome = join(home, ".copilot");
    const rw = new CopilotSessionWriter({
      sessionId: uuidFrom("e2e:rewrite"),
      cwd: "/home/dev/rewrite",
      clock: tickClock(),
    });
    rw.user("try approach alpha for the parser");
    const cut = rw.user("try approach bravo for the parser");
    rw.assistant("Bravo is in place.");
    await rw.write(copilotHome);

    for (const h of Object.values(homes)) plant(h, `${WORD} planted in ${h.source}`);
    const env = { ...hermeticEnv(root, fixtures.env), GOOSE_PATH_ROOT: gooseRoot };
    const index = async () => {
      const r = await runIntendant(root, ["index"], { env });
      assert.equal(r.code, 0, r.stderr);
    };
    await index();
    rw.rewindTo(cut);
    rw.user("try approach charlie for the parser");
    await rw.write(copilotHome);
    await index();

    // 1. The planted word, in each source's live session.
    const found = await searchJson(root, env, [WORD]);
    const byKey = new Map(found.groups.map((g) => [g.session_key, g]));
    const missing = Object.values(homes).filter((h) => !byKey.has(h.appendTarget.key))
      .map((h) => h.source);
    assert.deepEqual(missing, [], "sources whose planted word was not found");
    assert.equal(new Set(found.groups.map((g) => g.source)).size, 12);

    // 2. Superseded flags where the format records a rewind: for one rewound session per
    // new source, every hit on a rewound text and on a kept one carries the fixture's flag.
    const checks: { source: string; key: string; text: string; flags: boolean[] }[] = [];
    for (const source of NEW_SOURCES) {
      for (const [key, records] of Object.entries(homes[source]!.expected)) {
        const gone = records.find((x) => x.superseded && !x.subagent);
        if (!gone) continue;
        const kept = records.find((x) => !x.superseded && !x.subagent && x.text !== gone.text)!;
        for (const text of [gone.text, kept.text]) {
          const flags = records.filter((x) => x.text === text).map((x) => x.superseded);
          checks.push({ source, key, text, flags });
        }
        break;
      }
    }
    const copilotKey = `copilot:${uuidFrom("e2e:rewrite")}`;
    checks.push(
      {
        source: "copilot",
        key: copilotKey,
        text: "try approach bravo for the parser",
        flags: [true],
      },
      {
        source: "copilot",
        key: copilotKey,
        text: "try approach alpha for the parser",
        flags: [false],
      },
    );
    for (const s of ["gemini", "qwen", "opencode", "copilot"]) {
      assert.ok(
        checks.some((c) => c.source === s && c.flags.includes(true)),
        `${s} rewind checked`,
      );
    }
    const flagsOf = (res: { groups: Group[] }, c: (typeof checks)[number]) =>
      (res.groups.find((g) => g.session_key === c.key)?.hits ?? [])
        .filter((h) => h.snippet_offset_bytes === 0 && h.snippet === c.text)
        .map((h) => h.superseded).sort();
    for (const c of checks) {
      // One quoted needle: the whole text, spaces included (short words are not needles).
      const phrase = `"${c.text}"`;
      const all = await searchJson(root, env, [
        phrase,
        "--include-superseded",
        "--source",
        c.source,
      ]);
      assert.deepEqual(flagsOf(all, c), [...c.flags].sort(), `${c.key}: "${c.text}"`);
      // Rewound messages are left out unless asked for.
      const plain = await searchJson(root, env, [phrase, "--source", c.source]);
      assert.deepEqual(
        flagsOf(plain, c),
        c.flags.filter((f) => !f),
        `${c.key}: "${c.text}" default`,
      );
    }

    // 3. Jump-to-hit: one planted hit per source resolves to the hit message.
    const cfg = resolveConfig(env, { cwd: root });
    const { store } = await createMessageIndex(cfg);
    const deps = { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath };
    for (const h of Object.values(homes)) {
      const g = byKey.get(h.appendTarget.key)!;
      const hit = g.hits.find((x) => x.snippet.includes(`${WORD} planted in ${h.source}`))!;
      assert.ok(hit, `${h.source}: the planted hit`);
      const d = await sessionDetail(deps, g.session_key, { locate: hit.locator, limit: 5 });
      assert.equal(d.locate?.state, "resolved", `${h.source}: ${JSON.stringify(d.locate)}`);
      if (d.locate?.state !== "resolved") continue;
      const e = d.entries[d.locate.entry_index]!;
      assert.ok(
        (e.text ?? "").includes(`${WORD} planted in ${h.source}`),
        `${h.source}: locate anchors on the hit message, got ${JSON.stringify(e.text)}`,
      );
    }

    // 4. The locked profile suffices for every source: a fresh state root indexed under the
    // daemon's exact serve flags (each new home's transcript roots, nothing wider) finds the
    // planted word in every external source's session, and nothing ran into the profile.
    const lockedEnv = { ...env, INTENDANT_HOME: join(root, "state-locked") };
    const lockedCfg = resolveConfig(lockedEnv, { cwd: root });
    Deno.mkdirSync(lockedCfg.stateRoot, { recursive: true });
    const flags = profileFlags(serveProfile(lockedCfg));
    const locked = await new Deno.Command(DENO, {
      args: ["run", `--config=${join(REPO_ROOT, "deno.json")}`, ...flags, MAIN, "index"],
      cwd: root,
      clearEnv: true,
      env: { ...lockedEnv, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lockedErr = new TextDecoder().decode(locked.stderr);
    assert.equal(locked.code, 0, lockedErr);
    assert.ok(!/NotCapable|PermissionDenied|Requires .* access/.test(lockedErr), lockedErr);
    const lockedFound = await searchJson(root, lockedEnv, [WORD]);
    assert.deepEqual(
      // (The native sessions live in the other state root.)
      Object.values(homes).filter((h) =>
        h.source !== "intendant" &&
        !lockedFound.groups.some((g) => g.session_key === h.appendTarget.key)
      ).map((h) => h.source),
      [],
      "sources not indexed under the locked profile",
    );

    // 5. The listing: every source's session, with its tool's resume command.
    const ls = await runIntendant(root, ["sessions", "--json", "--limit", "500"], { env });
    assert.equal(ls.code, 0, ls.stderr);
    const listed = JSON.parse(ls.stdout) as {
      sessions: { key: string; source: string; resume_command: string | null }[];
    };
    for (const h of Object.values(homes)) {
      const s = listed.sessions.find((x) => x.key === h.appendTarget.key);
      assert.ok(s, `${h.source}: ${h.appendTarget.key} listed`);
      assert.match(s.resume_command ?? "", RESUME[h.source]!, `${h.source} resume command`);
    }
  }));
