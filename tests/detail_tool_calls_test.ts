/**
 * The native detail view's tool calls against real runs: the real program (spawned, mock
 * provider) runs turns with several commands each, and the detail shows every command
 * exactly once — as a tool call of the turn that issued it, with its exit code and its
 * runtime-log output — never again as a batch, an approval or the turn's concatenated
 * stdout.txt. Also: the legacy fallback (agent_output only), context snapshot rows with
 * their rotated-away sidecars, and the `q` hit list over every entry.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex } from "../lib/message_search/mod.ts";
import { type CatalogDeps, sessionDetail } from "../lib/catalog/mod.ts";
import type { DetailEntry } from "../lib/catalog/mod.ts";
import { SessionLog } from "../lib/session_log/mod.ts";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { writeLegacySession } from "./helpers/legacy_session.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

async function depsFor(root: string): Promise<CatalogDeps> {
  const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
  const { store } = await createMessageIndex(cfg);
  return { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath };
}

/** Occurrences of `s` in the JSON of `entries` (as JSON spells it). */
function count(entries: DetailEntry[], s: string): number {
  return JSON.stringify(entries).split(JSON.stringify(s).slice(1, -1)).length - 1;
}

const CMDS = {
  a: "echo ALPHA-OUT-1; echo alpha-err >&2",
  b: "printf BRAVO-OUT-2",
  c: "echo CHARLIE-OUT-3; exit 3",
  // No nonce: both commands of turn 2 share the runner's fallback nonce "t2".
  d: "echo DELTA-OUT-4",
  e: "echo ECHO-OUT-5 && echo echo-err >&2",
  pty: "head -c 12000 /dev/zero | tr '\\0' p",
};

Deno.test("a real run with several commands per turn shows each command exactly once, on its turn", () =>
  withTempDir(async (root) => {
    const script = join(root, "s.jsonc");
    Deno.writeTextFileSync(
      script,
      JSON.stringify({
        turns: [
          {
            text: "First I will **look around** the project.",
            commands: [
              { exec: CMDS.a, nonce: "n1" },
              { exec: CMDS.b, nonce: "n2" },
              { exec: CMDS.c, nonce: "n3" },
            ],
          },
          { commands: [{ exec: CMDS.d }, { exec: CMDS.e }, { exec: CMDS.pty, pty: true }] },
          { text: "Done looking around.", done: true },
        ],
      }),
    );
    const run = await runIntendant(root, ["run", "--mock-script", script, "Inspect it"]);
    assert.equal(run.code, 0, run.stderr);
    const { id } = sessionOf(run);
    const deps = await depsFor(root);
    const d = await sessionDetail(deps, id, { limit: 1000 });
    const { entries } = d;

    for (const k of ["command_batch", "command", "command_output", "approval"]) {
      assert.equal(entries.filter((e) => e.kind === k).length, 0, `no ${k} rows`);
    }
    // Each command line and each output marker appears once in the whole detail.
    for (const exec of Object.values(CMDS)) assert.equal(count(entries, exec), 1, exec);
    for (const mark of ["ALPHA-OUT-1", "BRAVO-OUT-2", "CHARLIE-OUT-3", "DELTA-OUT-4"]) {
      assert.equal(count(entries, mark), 2, `${mark}: its command line and its stdout`);
    }

    const first = entries.find((e) => e.text === "First I will **look around** the project.")!;
    assert.equal(first.kind, "message");
    assert.deepEqual(first.tools!.map((t) => [t.input, t.exit_code, t.status]), [
      [CMDS.a, 0, "ok"],
      [CMDS.b, 0, "ok"],
      [CMDS.c, 3, "error"],
    ]);
    const [a, b] = first.tools!;
    assert.equal(a!.output.stdout!.excerpt, "ALPHA-OUT-1\n");
    assert.equal(a!.output.stderr!.excerpt, "alpha-err\n");
    assert.equal(b!.output.stdout!.excerpt, "BRAVO-OUT-2");
    assert.equal(b!.output.stdout!.bytes, 11);
    assert.ok(first.tools!.every((t) => typeof t.duration_ms === "number"));
    assert.ok(
      first.tools!.every((t) => (t.detail!.approval as { state: string }).state === "auto"),
    );

    // Turn 2 said nothing: its calls form one tool_calls entry between the two messages.
    const second = entries.filter((e) => e.kind === "tool_calls");
    assert.equal(second.length, 1);
    const t2 = second[0]!;
    assert.ok(first.index < t2.index);
    const last = entries.find((e) => e.text === "Done looking around.")!;
    assert.ok(t2.index < last.index);
    assert.equal(last.tools, undefined);
    assert.deepEqual(t2.tools!.map((t) => t.input), [CMDS.d, CMDS.e, CMDS.pty]);
    assert.equal(t2.tools![0]!.output.stdout!.excerpt, "DELTA-OUT-4\n");
    assert.equal(t2.tools![1]!.output.stdout!.excerpt, "ECHO-OUT-5\n");
    const pty = t2.tools![2]!;
    assert.equal(pty.detail!.pty, true);
    assert.equal(pty.output.pty!.bytes, 12000);
    assert.equal(pty.output.pty!.truncated, true, "an 8 KiB excerpt of a 12 000-byte log");

    // Paging and the hit list see the same entries.
    for (const [offset, limit] of [[0, 2], [2, 3], [entries.length - 1, 5]] as const) {
      const p = await sessionDetail(deps, id, { offset, limit });
      assert.deepEqual(p.entries, entries.slice(offset, offset + limit));
    }
    const h = await sessionDetail(deps, id, { limit: 2, q: "LOOK around" });
    assert.deepEqual(h.hits, [first.index, last.index]);
    assert.equal(h.hits_complete, true);
    assert.equal(h.entries.length, 2, "hits span the session, not the page");
    const none = await sessionDetail(deps, id, { limit: 2, q: "a" });
    assert.deepEqual([none.hits, none.hits_complete], [[], true]);
  }));

Deno.test("legacy logs without command events: the turn's agent_output becomes one tool call", () =>
  withTempDir(async (root) => {
    const deps = await depsFor(root);
    const f = writeLegacySession(deps.logsDir);
    const d = await sessionDetail(deps, f.id, { limit: 1000 });
    const reply2 = d.entries.find((e) => e.text === f.texts.reply2)!;
    assert.equal(reply2.tools?.length, 1);
    const [call] = reply2.tools!;
    assert.equal(call!.name, "shell");
    assert.equal(call!.output.stdout!.unavailable, "missing");
    assert.equal(call!.detail!.batch, true);
    assert.ok(!d.entries.some((e) => e.kind === "command_output"));
  }));

Deno.test("context snapshots are compact rows that say whether their sidecar is still on disk", () =>
  withTempDir(async (root) => {
    const deps = await depsFor(root);
    const log = await SessionLog.create({
      logsDir: deps.logsDir,
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    for (const turn of [1, 2]) {
      log.contextSnapshot(turn, {
        source: "intendant",
        sessionId: "A",
        payload: { turn },
        tokens: 100 * turn,
        itemCount: turn,
        labels: ["system", "history"],
      });
    }
    await log.close();
    const d = await sessionDetail(deps, log.sessionId, { limit: 100 });
    const snaps = d.entries.filter((e) => e.kind === "context_snapshot");
    const facts = snaps.map((e) => {
      const x = e.detail as Record<string, unknown>;
      return [x.tokens, x.item_count, x.sidecar, x.file];
    });
    assert.deepEqual(facts, [
      [100, 1, "gone", "turns/turn_001_context_intendant-A.json"],
      [200, 2, "on_disk", "turns/turn_002_context_intendant-A.json"],
    ]);
  }));
