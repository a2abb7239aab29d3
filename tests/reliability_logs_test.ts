/**
 * Reliability-plan table C: session-log creation hygiene, against the real writers.
 *  C1  symlinks (dangling, and to a canary outside) planted at the exact names the
 *      writers create: runtime logs and the pty log (their random part is chosen here
 *      through the APIs that take names), turn files, human_question, human_response
 *      (through `ctl answer`), transcript.jsonl, frames.jsonl, daemon.log, the meta and
 *      agent config. 1,000 attempts; plus a race: a turn file swapped between a regular
 *      file and a symlink to a canary by another process while it is rewritten.
 *  C2  turns/, frames/, ctl/ and the session directory itself replaced by symlinks to
 *      directories outside: no file may appear outside the session directory.
 *  C3  the predictable fallback path pre-planted as a symlink and as a directory owned by
 *      another uid, and a TMPDIR writable by another uid: the fallback never lands in
 *      attacker-controlled space.
 *  C4  after a real run (commands, pty log, askHuman, ctl answer), index, search and
 *      serve, plus steer and overlay writes: every dir 0700, every file 0600.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { SessionLog } from "../lib/session_log/mod.ts";
import { installDaemonLogTee, setOverlayName } from "../lib/session_log/mod.ts";
import type { RuntimeLogs } from "../lib/session_log/mod.ts";
import { answerQuestion, requestSteer } from "../lib/runner/mod.ts";
import { writeQuestion } from "../lib/runner/control.ts";
import { figure } from "./helpers/figures.ts";
import { runIntendant, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const fmt = (n: number) => n.toLocaleString("en-US");
const NOBODY = 65534;
const IS_ROOT = Deno.uid() === 0;

function exists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

async function newLog(root: string, name = "logs"): Promise<SessionLog> {
  return await SessionLog.create({
    logsDir: join(root, name),
    tmpDir: root,
    meta: { projectRoot: "/p", task: "hygiene" },
  });
}

/** Every file (recursively) under `dir`, as paths. */
function listAll(dir: string): string[] {
  const out: string[] = [];
  if (!exists(dir)) return out;
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    out.push(p);
    if (e.isDirectory && !e.isSymlink) out.push(...listAll(p));
  }
  return out;
}

Deno.test("C1 symlinks planted at every writer's exact name are never written through (1,000 attempts)", () =>
  withTempDir(async (root) => {
    const log = await newLog(root);
    const dir = log.dir;
    const outside = join(root, "outside");
    Deno.mkdirSync(outside);
    const canary = join(outside, "canary.txt");
    const canaryBytes = new TextEncoder().encode("CANARY-C1 do not touch\n".repeat(10));
    Deno.writeFileSync(canary, canaryBytes);
    const canaryMtime = Deno.statSync(canary).mtime!.getTime();
    const terminal = { stdout: () => {}, stderr: () => {} };
    const hex = (k: number) => k.toString(16).padStart(32, "0");
    // kind → [name planted (relative to dir), the write through the real API]
    const kinds: [string, (k: number) => [string, () => unknown]][] = [
      ["turn file (write)", (k) => [
        `turns/turn_${String(k).padStart(3, "0")}_stdout.txt`,
        () => log.writeTurnFile(k, "stdout.txt", "hello"),
      ]],
      ["turn file (append)", (k) => [
        `turns/turn_${String(k).padStart(3, "0")}_model.txt`,
        () => log.appendTurnFile(k, "model.txt", "hello"),
      ]],
      ["runtime stdout log", (k) => [`n${k}_${hex(k)}_stdout.log`, () => {
        const f = log.createFile(`n${k}_${hex(k)}_stdout.log`);
        f.writeSync(new TextEncoder().encode("out"));
        f.close();
      }]],
      ["runtime stderr log", (k) => [`n${k}_${hex(k)}_stderr.log`, () => {
        const f = log.createFile(`n${k}_${hex(k)}_stderr.log`);
        f.writeSync(new TextEncoder().encode("err"));
        f.close();
      }]],
      ["pty log", (k) => [
        `n${k}_${hex(k)}_pty.log`,
        () =>
          log.writePtyLog({ nonce: `n${k}`, random: hex(k) } as RuntimeLogs, "p".repeat(20_000)),
      ]],
      ["human_question", () => ["human_question", () => writeQuestion(dir, "q", "which?")]],
      ["human_response (ctl answer)", () => ["human_response", async () => {
        if (!exists(join(dir, "human_question"))) writeQuestion(dir, "q", "which?");
        await answerQuestion(dir, "an answer");
      }]],
      [
        "transcript.jsonl",
        () => [
          "transcript.jsonl",
          () => log.appendTranscript({ ts: new Date().toISOString(), role: "user", text: "x" }),
        ],
      ],
      [
        "frames.jsonl",
        () => [
          "frames/frames.jsonl",
          () => log.frame("display", new Uint8Array([0xff, 0xd8]), false),
        ],
      ],
      ["daemon.log", () => ["daemon.log", async () => {
        const target = { log() {}, info() {}, debug() {}, warn() {}, error() {} };
        const tee = installDaemonLogTee({ dir, os: "linux", target: target as never, terminal });
        (target as Console).log("a line for daemon.log");
        await tee.drain();
      }]],
      ["session_meta.json", (k) => ["session_meta.json", () => log.updateMeta({ last_turn: k })]],
      [
        "session_agent_config.json",
        (k) => ["session_agent_config.json", () => log.writeAgentConfig({ k })],
      ],
    ];
    Deno.mkdirSync(join(dir, "frames"), { recursive: true, mode: 0o700 });
    const N = 1000;
    let through = 0;
    const outcomes: Record<string, number> = {};
    const perKind: Record<string, number> = {};
    for (let k = 0; k < N; k++) {
      const [kind, make] = kinds[k % kinds.length]!;
      const [rel, write] = make(k);
      const path = join(dir, rel);
      const dangling = join(outside, `dangling-${k}`);
      if (exists(path)) Deno.removeSync(path);
      Deno.symlinkSync(k % 2 === 0 ? canary : dangling, path);
      let outcome: string;
      try {
        await write();
        const st = Deno.lstatSync(path);
        outcome = st.isSymlink ? "call succeeded, link untouched" : "link replaced by rename";
      } catch (err) {
        outcome = `refused (${(err as Error).name})`;
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      perKind[kind] = (perKind[kind] ?? 0) + 1;
      const st = Deno.statSync(canary);
      if (!same(Deno.readFileSync(canary), canaryBytes) || st.mtime!.getTime() !== canaryMtime) {
        through++;
        Deno.writeFileSync(canary, canaryBytes);
      }
      if (exists(dangling)) through++;
      if (exists(path)) Deno.removeSync(path);
    }
    const race = await swapRace(log, root);
    figure("C1", `writes through planted symlinks: ${through}/${fmt(N)}`);
    // deno-lint-ignore no-console
    console.log(
      `C1 detail: ${kinds.length} writers × dangling/canary links, outcomes ${
        JSON.stringify(outcomes)
      }; race (another process swapping a turn file between a file and a symlink to a canary ` +
        `while it is rewritten): ${fmt(race.writes)} rewrites, ${fmt(race.swaps)} swaps, ` +
        `${fmt(race.refused)} refused, canary modified: ${race.modified} (negative control, ` +
        `O_TRUNC at open: ${race.control} canary cuts in ${fmt(race.controlWrites)} opens)`,
    );
    await log.finish("completed").catch(() => {});
    assert.equal(through, 0);
    assert.equal(race.modified, 0, "the race wrote through a swapped symlink");
    assert.ok(race.refused > 0 && race.swaps > 100, "the race was exercised");
  }));

/**
 * Rewrites a turn file while another process swaps it with a symlink to a canary. The
 * negative control does what writeTurnFile did before the fix (lstat, then open with
 * O_TRUNC, then the dev+ino check): it must be seen to cut the canary.
 */
async function swapRace(log: SessionLog, root: string) {
  const canary = join(root, "outside", "race-canary.txt");
  const canaryBytes = new TextEncoder().encode("RACE-CANARY\n".repeat(100));
  Deno.writeFileSync(canary, canaryBytes);
  const target = join(log.dir, "turns", "turn_777_stdout.txt");
  Deno.writeTextFileSync(target, "seed");
  const swapper = new Deno.Command("python3", {
    args: [
      "-c",
      `
import os, sys
target, canary = sys.argv[1], sys.argv[2]
d = os.path.dirname(target)
i = 0
while True:
    i += 1
    l = os.path.join(d, '.swap-link'); r = os.path.join(d, '.swap-reg')
    try: os.unlink(l)
    except FileNotFoundError: pass
    os.symlink(canary, l); os.rename(l, target)
    with open(r, 'wb') as f: f.write(b'regular')
    os.rename(r, target)
    if i % 64 == 0: print(i, flush=True)
`,
      target,
      canary,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let swaps = 0;
  const counting = (async () => {
    for await (const chunk of swapper.stdout.pipeThrough(new TextDecoderStream())) {
      const last = chunk.trim().split("\n").at(-1);
      if (last) swaps = Number(last);
    }
  })();
  const r = { writes: 0, refused: 0, modified: 0, swaps: 0, control: 0, controlWrites: 0 };
  const loop = async (ms: number, minSwaps: number, write: () => void, onModified: () => void) => {
    const deadline = Date.now() + ms;
    const from = swaps;
    let n = 0;
    while ((n < 3000 || swaps - from < minSwaps) && Date.now() < deadline) {
      n++;
      try {
        write();
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        if (write === real) r.refused++;
      }
      if (!same(Deno.readFileSync(canary), canaryBytes)) {
        onModified();
        Deno.writeFileSync(canary, canaryBytes);
      }
      if (n % 50 === 0) await new Promise((res) => setTimeout(res, 0));
    }
    return n;
  };
  const real = () => void log.writeTurnFile(777, "stdout.txt", "rewritten by the session");
  // The control: what openRegularFileSync's old truncate option did — lstat, then an
  // O_TRUNC open, then the dev+ino check, which comes too late to save a swapped-in file.
  const naive = () => {
    const path = join(log.dir, "turns", "turn_777_stdout.txt");
    try {
      if (Deno.lstatSync(path).isSymlink) return;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    try {
      Deno.openSync(path, { write: true, truncate: true }).close();
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  };
  try {
    r.writes = await loop(6000, 1000, real, () => r.modified++);
    r.controlWrites = await loop(3000, 500, naive, () => r.control++);
  } finally {
    swapper.kill("SIGKILL");
    await swapper.status;
    await counting.catch(() => {});
  }
  r.swaps = swaps;
  return r;
}

Deno.test("C2 symlinked turns/, frames/, ctl/ and session dir: no file is created outside the session dir", () =>
  withTempDir(async (root) => {
    const elsewhere = join(root, "elsewhere");
    const report: Record<string, string> = {};
    const attempt = async (label: string, fn: () => unknown) => {
      try {
        await fn();
        report[label] = "accepted";
      } catch (err) {
        report[label] = `refused (${(err as Error).name})`;
      }
    };
    // turns/ → outside
    const a = await newLog(root, "logs-a");
    Deno.mkdirSync(join(elsewhere, "turns"), { recursive: true });
    Deno.removeSync(join(a.dir, "turns"), { recursive: true });
    Deno.symlinkSync(join(elsewhere, "turns"), join(a.dir, "turns"));
    await attempt("turns: writeTurnFile", () => a.writeTurnFile(1, "stdout.txt", "x"));
    await attempt("turns: appendTurnFile", () => a.appendTurnFile(1, "model.txt", "x"));
    await attempt(
      "turns: modelResponseWithMessage",
      () => a.modelResponseWithMessage(1, "hello", { seq: 2, hasToolCalls: false }),
    );
    await attempt("turns: reasoningContent", () => a.reasoningContent(1, "thinking"));
    await attempt("turns: agentInput", () => a.agentInput(1, [{ exec: "ls", nonce: "n" }]));
    await attempt(
      "turns: agentOutput",
      () => a.agentOutput(1, { stdout: "o", stderr: "e", exitCodes: [0] }),
    );
    await attempt("turns: contextSnapshot", () =>
      a.contextSnapshot(1, {
        source: "codex",
        sessionId: "s",
        payload: {},
        tokens: 1,
        itemCount: 1,
        labels: [],
      }));
    await attempt(
      "turns: turnMessages",
      () => a.turnMessages(1, [{ role: "user" }], { providerHasSnapshot: false }),
    );
    // frames/ → outside
    const b = await newLog(root, "logs-b");
    Deno.mkdirSync(join(elsewhere, "frames"), { recursive: true });
    Deno.symlinkSync(join(elsewhere, "frames"), join(b.dir, "frames"));
    await attempt("frames: frame", () => b.frame("display", new Uint8Array([1, 2]), false));
    // ctl/ → outside (the session is running: steer queues a request file)
    Deno.mkdirSync(join(elsewhere, "ctl"), { recursive: true });
    Deno.symlinkSync(join(elsewhere, "ctl"), join(b.dir, "ctl"));
    await attempt("ctl: ctl steer", () => requestSteer(b.dir, "go left"));
    // The session directory itself swapped for a symlink to a lookalike outside.
    const c = await newLog(root, "logs-c");
    const look = join(elsewhere, "session");
    Deno.mkdirSync(join(look, "turns"), { recursive: true });
    Deno.mkdirSync(join(look, "frames"), { recursive: true });
    Deno.renameSync(c.dir, c.dir + ".moved");
    Deno.symlinkSync(look, c.dir);
    await attempt("session dir: createFile", () => c.createFile("n_0_stdout.log").close());
    await attempt("session dir: writeTurnFile", () => c.writeTurnFile(1, "stdout.txt", "x"));
    await attempt(
      "session dir: appendTranscript",
      () => c.appendTranscript({ ts: "t", role: "user", text: "x" }),
    );
    await attempt("session dir: frame", () => c.frame("display", new Uint8Array([1]), false));
    await attempt("session dir: updateMeta", () => c.updateMeta({ last_turn: 3 }));
    await attempt("session dir: writeAgentConfig", () => c.writeAgentConfig({ a: 1 }));
    await attempt("session dir: finish", () => c.finish("completed"));
    for (const l of [a, b]) await l.finish("completed").catch(() => {});
    const created = listAll(elsewhere).filter((p) => Deno.lstatSync(p).isFile);
    figure("C2", `files created outside session dir: ${created.length}`);
    // deno-lint-ignore no-console
    console.log(`C2 detail: ${JSON.stringify(report)}; created: ${JSON.stringify(created)}`);
    assert.deepEqual(created, []);
  }));

Deno.test("C3 a pre-planted fallback path or a foreign TMPDIR never receives the fallback", () =>
  withTempDir(async (root) => {
    const attacker = join(root, "attacker");
    Deno.mkdirSync(attacker, { mode: 0o777 });
    if (IS_ROOT) Deno.chownSync(attacker, NOBODY, NOBODY);
    const myUid = Deno.uid();
    let intoAttacker = 0;
    let fallbacks = 0;
    let refused = 0;
    const notes: string[] = [];
    /** Forces a fallback under `tmp` (the pinned dir sits under a regular file). */
    const fallback = async (tmp: string, i: number): Promise<string | null> => {
      Deno.writeTextFileSync(join(root, "blocker"), "");
      try {
        const log = await SessionLog.create({
          logsDir: join(root, "logs"),
          pinnedDir: join(root, "blocker", `s${i}`),
          tmpDir: tmp,
          meta: { projectRoot: "/p", task: "t" },
        });
        await log.finish("completed");
        fallbacks++;
        return log.dir;
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        refused++;
        return null;
      }
    };
    const attackerControlled = (d: string): boolean => {
      const real = Deno.realPathSync(d);
      const st = Deno.lstatSync(d);
      if (real.startsWith(Deno.realPathSync(attacker))) return true;
      if (st.isSymlink || st.uid !== myUid || (st.mode! & 0o077) !== 0) return true;
      // The parent must not let another uid rename our directory away.
      const p = Deno.statSync(dirname(real));
      const foreignOwner = p.uid !== myUid && p.uid !== 0;
      const sharedNoSticky = (p.mode! & 0o022) !== 0 && (p.mode! & 0o1000) === 0;
      return foreignOwner || sharedNoSticky;
    };
    // (a) the predictable name planted as a symlink into attacker space.
    const tmpA = join(root, "tmp-a");
    Deno.mkdirSync(tmpA, { mode: 0o700 });
    Deno.symlinkSync(attacker, join(tmpA, "intendant_session"));
    // (b) the predictable name planted as a directory owned by another uid.
    const tmpB = join(root, "tmp-b");
    Deno.mkdirSync(tmpB, { mode: 0o700 });
    Deno.mkdirSync(join(tmpB, "intendant_session"), { mode: 0o777 });
    if (IS_ROOT) Deno.chownSync(join(tmpB, "intendant_session"), NOBODY, NOBODY);
    // (c) a /tmp-like shared dir (root-owned, 1777): fine, the sticky bit protects entries.
    const tmpC = join(root, "tmp-c");
    Deno.mkdirSync(tmpC);
    Deno.chmodSync(tmpC, 0o1777);
    for (let i = 0; i < 100; i++) {
      for (const tmp of [tmpA, tmpB, tmpC]) {
        const d = await fallback(tmp, i);
        if (d === null) continue;
        if (d.endsWith("/intendant_session") || attackerControlled(d)) intoAttacker++;
      }
    }
    const plantedIntact = Deno.lstatSync(join(tmpA, "intendant_session")).isSymlink &&
      [...Deno.readDirSync(attacker)].length === 0;
    // (d) TMPDIR itself owned by another uid and writable by it (no sticky bit): that uid
    // could rename the fallback away and put its own directory in its place.
    const tmpD = join(root, "tmp-d");
    Deno.mkdirSync(tmpD);
    Deno.chmodSync(tmpD, 0o777);
    if (IS_ROOT) Deno.chownSync(tmpD, NOBODY, NOBODY);
    else notes.push("(d) not root: TMPDIR ownership cannot be given away, only its mode");
    const refusedBefore = refused;
    for (let i = 0; i < 20; i++) {
      const d = await fallback(tmpD, 1000 + i);
      if (d !== null && attackerControlled(d)) intoAttacker++;
    }
    const foreignRefused = refused - refusedBefore;
    figure("C3", `fallback into attacker-controlled path: ${intoAttacker}`);
    // deno-lint-ignore no-console
    console.log(
      `C3 detail: fallbacks taken: ${fallbacks} (planted symlink, planted dir owned by uid ` +
        `${NOBODY}, sticky shared dir), planted paths untouched: ${plantedIntact}, foreign ` +
        `TMPDIR fallbacks refused: ${foreignRefused}/20 ${notes.join("; ")}`,
    );
    assert.equal(intoAttacker, 0);
    assert.ok(plantedIntact);
    assert.equal(fallbacks, 300);
    assert.equal(foreignRefused, 20);
  }));

Deno.test("C4 after a real run, index, search and serve every state dir is 0700 and every file 0600", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root);
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const project = join(root, "project");
    Deno.mkdirSync(project);
    const script = join(root, "s.jsonc");
    Deno.writeTextFileSync(
      script,
      JSON.stringify({
        turns: [
          {
            reasoning: "Look around first.",
            text: "Listing.",
            commands: [
              { exec: "echo out; echo err >&2", nonce: "n1" },
              { exec: "head -c 20000 /dev/zero | tr '\\0' 'z'", nonce: "big", pty: true },
            ],
          },
          { ask_human: "Which branch?" },
          { text: "Done.", done: true },
        ],
      }),
    );
    const run = spawnIntendant(root, ["run", "--mock-script", script, "--project", project, "Go"]);
    const dir = await run.dir;
    await waitFor(() => exists(join(dir, "human_question")), 30_000, "human_question");
    const seen = new Map<string, number>();
    const note = (p: string) => {
      const st = Deno.lstatSync(p);
      seen.set(p, st.mode! & 0o7777);
    };
    note(join(dir, "human_question"));
    const answered = await runIntendant(root, ["ctl", "answer", dir.split("/").at(-1)!, "main"]);
    assert.equal(answered.code, 0, answered.stderr);
    const done = await run.done;
    assert.equal(done.code, 0, done.stderr);
    for (const args of [["index"], ["search", "Listing"]]) {
      const r = await runIntendant(root, args);
      assert.equal(r.code, 0, r.stderr);
    }
    // serve: daemon.json and cursor.key while it runs.
    const serve = spawnIntendant(root, ["serve", "--port", "0"]);
    const daemonJson = join(env.INTENDANT_HOME!, "daemon.json");
    await waitFor(() => exists(daemonJson), 30_000, "daemon.json");
    note(daemonJson);
    serve.child.kill("SIGTERM");
    assert.equal((await serve.done).code, 0);
    // In-process writers the CLI run above did not reach: a queued steer, a name overlay.
    const live = await SessionLog.create({
      logsDir: join(env.INTENDANT_HOME!, "logs"),
      tmpDir: env.TMPDIR!,
      meta: { projectRoot: project, task: "running" },
    });
    await requestSteer(live.dir, "steer me");
    for (const f of listAll(join(live.dir, "ctl"))) note(f);
    await setOverlayName(join(env.INTENDANT_HOME!, "session_names.json"), {
      source: "codex",
      sessionId: "019a0000-0000-7000-8000-000000000000",
      name: "Overlay",
    });
    await live.close();
    for (const p of [env.INTENDANT_HOME!, ...listAll(env.INTENDANT_HOME!)]) note(p);
    for (const p of listAll(env.TMPDIR!)) note(p);
    const bad: string[] = [];
    const kinds = { dirs: 0, files: 0 };
    for (const [p, mode] of seen) {
      if (!exists(p)) continue;
      const st = Deno.lstatSync(p);
      if (st.isDirectory) kinds.dirs++;
      else kinds.files++;
      if ((mode & 0o077) !== 0) bad.push(`${p.slice(root.length)} ${mode.toString(8)}`);
    }
    const names = [...seen.keys()].map((p) => p.split("/").at(-1)!);
    for (
      const want of [
        "manifest.json",
        "manifest.journal",
        "generations",
        "cursor.key",
        "session_names.json",
        "daemon.json",
        "human_question",
        "writer.lock",
      ]
    ) assert.ok(names.includes(want), `stat covered ${want}`);
    assert.ok(names.some((n) => n.endsWith("_pty.log")) && names.some((n) => /^\d+-/.test(n)));
    figure("C4", `group/other-accessible entries: ${bad.length}`);
    // deno-lint-ignore no-console
    console.log(
      `C4 detail: entries checked: ${seen.size} (${kinds.dirs} dirs, ${kinds.files} files, ` +
        `under the state root and TMPDIR, incl. manifest.json, generations/, writer.lock, ` +
        `daemon.json, cursor.key, session_names.json, ctl/ requests, human_question, runtime ` +
        `and pty logs); offenders: ${JSON.stringify(bad)}`,
    );
    assert.deepEqual(bad, []);
  }));
