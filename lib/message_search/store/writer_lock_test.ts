import assert from "node:assert/strict";
import { join } from "node:path";
import { LockHeldError } from "../../errors.ts";
import { withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { figure, STRESS } from "../../../tests/helpers/figures.ts";
import { holdLock, LOCK_FILE } from "./writer_lock.ts";

const CHILD = new URL("../../../tests/helpers/store_child.ts", import.meta.url).pathname;

Deno.test("holdLock() excludes a second holder until release, and names the holder", () =>
  withTempDir(async (root) => {
    const a = await holdLock(root);
    await assert.rejects(holdLock(root), (err: Error) => {
      assert.ok(err instanceof LockHeldError);
      assert.match(err.message, new RegExp(`held by another writer \\(pid ${Deno.pid}\\)`));
      return true;
    });
    setTimeout(() => a.release(), 30);
    const b = await holdLock(root, { wait: 2000 });
    b.release();
    b.release();
    await assert.rejects(holdLock(root, { wait: -1 }), RangeError);
  }));

Deno.test("a SIGKILLed holder's lock is free at once: no stale takeover needed (I6)", () =>
  withTempDir(async (root) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CHILD, "hold-lock", root],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("locked\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`child exited early: "${out}"`);
      out += new TextDecoder().decode(value);
    }
    // The holder is named from the kernel's lock table, not from the file's content.
    await assert.rejects(holdLock(root), (err: Error) => {
      assert.ok(err instanceof LockHeldError);
      assert.match(err.message, new RegExp(`\\(pid ${child.pid}\\)`));
      return true;
    });
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
    (await holdLock(root)).release();
  }));

Deno.test("taking and releasing the lock writes nothing: the file keeps its bytes and mtime (issue 16)", () =>
  withTempDir(async (root) => {
    const path = join(root, LOCK_FILE);
    (await holdLock(root)).release();
    assert.equal((await Deno.stat(path)).size, 0, "a new lock file stays empty");
    // A file left by an older version (it wrote {pid, acquired_at_ms} per acquisition) is
    // neither rewritten nor trusted.
    await Deno.writeTextFile(path, JSON.stringify({ pid: 999_999_999, acquired_at_ms: 0 }));
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(path, old, old);
    const before = await Deno.stat(path);
    for (let i = 0; i < 5; i++) (await holdLock(root)).release();
    const after = await Deno.stat(path);
    assert.equal(after.size, before.size);
    assert.equal(after.mtime?.getTime(), before.mtime?.getTime());
    const a = await holdLock(root);
    try {
      await assert.rejects(holdLock(root), (err: Error) => {
        assert.match(err.message, new RegExp(`\\(pid ${Deno.pid}\\)`));
        assert.doesNotMatch(err.message, /999999999/);
        return true;
      });
    } finally {
      a.release();
    }
  }));

/** Plants a lock file that looks abandoned: dead pid, hour-old mtime. */
async function plantStaleLock(path: string): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify({ pid: 999_999_999, acquired_at_ms: 0 }));
  const old = new Date(Date.now() - 3_600_000);
  await Deno.utime(path, old, old);
}

/** The takeover §0.4 warns about: "exists and stale → unlink + createNew". */
async function naiveTakeover(path: string): Promise<boolean> {
  try {
    const st = await Deno.stat(path);
    if (Date.now() - st.mtime!.getTime() > 5 * 60_000) {
      await Deno.remove(path).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  try {
    (await Deno.open(path, { createNew: true, write: true })).close();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  }
}

Deno.test("10 contenders racing for a stale-looking lock: exactly one winner per round (A11)", () =>
  withTempDir(async (root) => {
    const rounds = STRESS ? 500 : 150;
    const path = join(root, LOCK_FILE);
    let multi = 0;
    let none = 0;
    for (let r = 0; r < rounds; r++) {
      await plantStaleLock(path);
      const got = await Promise.allSettled(
        Array.from({ length: 10 }, () => holdLock(root, { wait: 0 })),
      );
      const winners = got.filter((g) => g.status === "fulfilled");
      for (const g of got) {
        if (g.status === "rejected") assert.ok(g.reason instanceof LockHeldError, String(g.reason));
      }
      if (winners.length > 1) multi++;
      if (winners.length === 0) none++;
      for (const w of winners) w.value.release();
    }
    let controlMulti = 0;
    for (let r = 0; r < rounds; r++) {
      await plantStaleLock(path);
      const won = await Promise.all(Array.from({ length: 10 }, () => naiveTakeover(path)));
      if (won.filter(Boolean).length > 1) controlMulti++;
    }
    figure("A11", `rounds with >1 winner: ${multi} (control: ${controlMulti})`);
    console.log(`A11 detail: rounds: ${rounds}, contenders: 10, rounds with no winner: ${none}`);
    assert.equal(multi, 0);
    assert.equal(none, 0);
    assert.ok(controlMulti > 0, "the naive unlink + createNew takeover must be seen to race");
  }));

Deno.test("holdLock() refuses a writer.lock planted as a symlink: the target is never truncated", () =>
  withTempDir(async (root) => {
    const outside = `${root}-outside.txt`;
    Deno.writeTextFileSync(outside, "precious");
    try {
      Deno.symlinkSync(outside, join(root, LOCK_FILE));
      await assert.rejects(holdLock(root), (err: Error) => err.name === "ContainmentError");
      assert.equal(Deno.readTextFileSync(outside), "precious");
      // A FIFO is refused without blocking, a hard link without writing through it.
      Deno.removeSync(join(root, LOCK_FILE));
      Deno.linkSync(outside, join(root, LOCK_FILE));
      await assert.rejects(holdLock(root), /more than one link/);
      assert.equal(Deno.readTextFileSync(outside), "precious");
      Deno.removeSync(join(root, LOCK_FILE));
      new Deno.Command("mkfifo", { args: [join(root, LOCK_FILE)] }).outputSync();
      await assert.rejects(holdLock(root), (err: Error) => err.name === "ContainmentError");
    } finally {
      Deno.removeSync(outside);
    }
  }));
