import assert from "node:assert/strict";
import { join } from "node:path";
import { SessionLog } from "./session_log.ts";
import { crashLog, registerCrashLog } from "./crash_hook.ts";
import { installDaemonLogTee } from "./tee.ts";
import { readSessionEvents } from "./read_events.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

Deno.test("when the chosen directory cannot be opened every sink switches to one private fallback", () =>
  withTempDir(async (root) => {
    // The pinned path sits under a regular file, so it can never be created.
    Deno.writeTextFileSync(join(root, "blocker"), "");
    const pinned = join(root, "blocker", "session");
    const tmp = join(root, "tmp");
    Deno.mkdirSync(tmp);
    // A pre-planted predictable path must never be adopted (C3).
    Deno.symlinkSync(root, join(tmp, "intendant_session"));
    const notices: string[] = [];
    const log = await SessionLog.create({
      logsDir: join(root, "logs"),
      pinnedDir: pinned,
      tmpDir: tmp,
      logger: (l) => notices.push(l),
      meta: { projectRoot: "/p", task: "t" },
    });
    assert.notEqual(log.dir, pinned);
    assert.match(log.dir, new RegExp(`^${tmp}/intendant-session-[A-Za-z0-9_]+$`));
    assert.notEqual(log.dir, join(tmp, "intendant_session"));
    assert.equal(Deno.statSync(log.dir).mode! & 0o777, 0o700);
    assert.deepEqual(log.fallback?.from, pinned);
    // Every sink derives from the fallback.
    assert.deepEqual(log.subprocessEnv(), { INTENDANT_LOG_DIR: log.dir });
    assert.equal(log.daemonLogPath, join(log.dir, "daemon.log"));
    assert.equal(log.framesDir, join(log.dir, "frames"));
    registerCrashLog(log);
    assert.equal(crashLog()?.dir, log.dir);
    registerCrashLog(null);
    const terminal: string[] = [];
    const target = { log() {}, info() {}, debug() {}, warn() {}, error() {} } as unknown as Console;
    const tee = installDaemonLogTee({
      dir: log.dir,
      os: "linux",
      target,
      terminal: { stdout: (s) => terminal.push(s), stderr: (s) => terminal.push(s) },
    });
    target.error("controller says hi");
    await tee.drain();
    assert.match(Deno.readTextFileSync(join(log.dir, "daemon.log")), /controller says hi/);
    log.frame("display", new Uint8Array([1]), false);
    log.agentOutput(1, { stdout: "x", stderr: "", exitCodes: [0] });
    await log.finish("completed");
    // Said once on stderr, once in the new log.
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /cannot use session directory/);
    const { events } = await readSessionEvents(log.dir);
    const fb = events.filter((e) => e.event.event === "log_dir_fallback");
    assert.equal(fb.length, 1);
    assert.equal((fb[0]!.event.data as { to: string }).to, log.dir);
    assert.ok(Deno.statSync(join(log.dir, "frames", "frames.jsonl")).isFile);
    assert.ok(Deno.statSync(join(log.dir, "session_meta.json")).isFile);
    await assert.rejects(Deno.stat(pinned), Deno.errors.NotADirectory);
  }));

Deno.test("a session.jsonl planted as a symlink makes the directory unusable, not the target written", () =>
  withTempDir(async (root) => {
    const pinned = join(root, "pinned");
    Deno.mkdirSync(pinned, { mode: 0o700 });
    const canary = join(root, "canary");
    Deno.writeTextFileSync(canary, "secret");
    Deno.symlinkSync(canary, join(pinned, "session.jsonl"));
    const log = await SessionLog.create({
      logsDir: join(root, "logs"),
      pinnedDir: pinned,
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    log.info("x");
    await log.finish("completed");
    assert.notEqual(log.dir, pinned);
    assert.equal(Deno.readTextFileSync(canary), "secret");
  }));
