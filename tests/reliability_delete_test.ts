/**
 * Reliability-plan H9: kill -9 at every step of delete and restore, then the next command
 * runs as a user's would. Targeted: a child takes the first step of a delete (the
 * tombstone) or of a restore (lifting it) through the real store and SIGKILLs itself
 * before the rename; blackbox: real `intendant delete --yes` processes SIGKILLed after a
 * random delay. After each kill, the invariant the user sees: every native session the
 * list shows is searchable (its key is not tombstoned), and every tombstoned one is in
 * the trash, restorable. Negative control: the state right after each kill, before any
 * command ran (what the list showed before recovery existed).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runIntendant } from "./helpers/cli.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex, sessionKey } from "../lib/message_search/mod.ts";

const CHILD = join(REPO_ROOT, "tests", "helpers", "rel_delete_child.ts");

Deno.test("H9: a delete or restore killed at any step never leaves a listed session unsearchable", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root);
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const cfg = resolveConfig(env, { cwd: root });
    const targeted = STRESS ? 30 : 6;
    const blackbox = STRESS ? 40 : 8;
    const ids: string[] = [];
    for (let i = 0; i < targeted + blackbox; i++) {
      ids.push((await writeNativeSession(cfg.logsDir, { turns: 1, task: `Kill test ${i}` })).id);
    }
    assert.equal((await runIntendant(root, ["index"], { env })).code, 0);

    /** Listed-but-unsearchable native sessions, and tombstoned ones missing from the trash. */
    const violations = async (): Promise<{ unsearchable: number; lost: number }> => {
      const { store } = await createMessageIndex(cfg);
      const m = await store.readManifest();
      let unsearchable = 0;
      let lost = 0;
      const inLogs = new Set<string>();
      for await (const e of Deno.readDir(cfg.logsDir)) if (e.isDirectory) inLogs.add(e.name);
      const trash = new Set<string>();
      try {
        for await (const e of Deno.readDir(join(cfg.stateRoot, "trash"))) {
          trash.add(e.name.replace(/^\d+-/, ""));
        }
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      for (const id of ids) {
        const tomb = Object.hasOwn(m.tombstones, sessionKey("intendant", id));
        if (inLogs.has(id) && tomb) unsearchable++;
        if (!inLogs.has(id) && !trash.has(id)) lost++;
      }
      return { unsearchable, lost };
    };
    /** What the user runs next: the list (which finishes interrupted deletes). */
    const nextCommand = async () => {
      const r = await runIntendant(root, ["sessions", "--json", "--limit", "500"], { env });
      assert.equal(r.code, 0, r.stderr);
    };

    let kills = 0;
    let after = 0;
    let lost = 0;
    let control = 0;
    const kill = async (args: string[]) => {
      const c = await new Deno.Command(DENO, {
        args,
        env,
        clearEnv: false,
        cwd: root,
        stdout: "null",
        stderr: "null",
      }).output();
      assert.equal(c.signal, "SIGKILL", `${args.join(" ")} was killed`);
      kills++;
      control += (await violations()).unsearchable;
      await nextCommand();
      const v = await violations();
      after += v.unsearchable;
      lost += v.lost;
    };
    // Targeted: half the kills after a delete's tombstone; the other half after a
    // restore's lift (on a session deleted for real first).
    for (let i = 0; i < targeted; i++) {
      const id = ids[i]!;
      if (i % 2 === 0) {
        await kill(["run", "-A", "--quiet", CHILD, "after-tombstone", id]);
        // The interrupted session is now in the trash: a real restore brings it back.
        const r = await runIntendant(root, ["restore", id], { env });
        assert.equal(r.code, 0, r.stderr);
      } else {
        assert.equal((await runIntendant(root, ["delete", "--yes", id], { env })).code, 0);
        await kill(["run", "-A", "--quiet", CHILD, "after-lift", id]);
      }
    }
    // Blackbox: real deletes killed at a random moment.
    const main = join(REPO_ROOT, "main.ts");
    for (let i = targeted; i < targeted + blackbox; i++) {
      const child = new Deno.Command(DENO, {
        args: ["run", "-A", "--quiet", main, "delete", "--yes", ids[i]!],
        env,
        clearEnv: true,
        cwd: root,
        stdout: "null",
        stderr: "null",
      }).spawn();
      await new Promise((r) => setTimeout(r, 80 + Math.floor(Math.random() * 400)));
      try {
        child.kill("SIGKILL");
      } catch (err) {
        if (!(err instanceof TypeError)) throw err; // already exited: a completed delete
      }
      await child.status;
      kills++;
      control += (await violations()).unsearchable;
      await nextCommand();
      const v = await violations();
      after += v.unsearchable;
      lost += v.lost;
    }
    assert.equal(after, 0, "a listed session is unsearchable after the next command");
    assert.equal(lost, 0, "a session is neither in logs/ nor in the trash");
    assert.ok(control > 0, "without recovery the kills leave listed, unsearchable sessions");
    figure(
      "H9",
      `sessions listed but unsearchable after restart: ${after}/${kills} kills (${targeted} targeted: ` +
        `after a delete's tombstone, after a restore's lift; ${blackbox} random kills of ` +
        `\`intendant delete --yes\`), sessions lost: ${lost}, control (the state right after ` +
        `each kill): ${control} listed and unsearchable`,
    );
  }));
