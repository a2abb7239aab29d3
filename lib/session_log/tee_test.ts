import assert from "node:assert/strict";
import { join } from "node:path";
import { installDaemonLogTee } from "./tee.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

function fakeConsole() {
  const calls: string[] = [];
  const c = {
    log: () => calls.push("orig"),
    info: () => calls.push("orig"),
    debug: () => calls.push("orig"),
    warn: () => calls.push("orig"),
    error: () => calls.push("orig"),
  };
  return { c: c as unknown as Console, calls };
}

Deno.test("the tee timestamps each console line into daemon.log and mirrors the raw text", () =>
  withTempDir(async (dir) => {
    const { c, calls } = fakeConsole();
    const out: string[] = [];
    const err: string[] = [];
    let t = Date.UTC(2026, 10, 29, 8, 0, 0);
    const tee = installDaemonLogTee({
      dir,
      os: "linux",
      target: c,
      now: () => t++,
      terminal: { stdout: (s) => out.push(s), stderr: (s) => err.push(s) },
    });
    assert.equal(tee.active, true);
    c.log("hello", { a: 1 });
    c.error("bad\nthings");
    await tee.drain();
    const lines = Deno.readTextFileSync(join(dir, "daemon.log")).trimEnd().split("\n");
    assert.deepEqual(lines.map((l) => l.replace(/^\S+ /, "")), ["hello { a: 1 }", "bad", "things"]);
    for (const l of lines) assert.match(l, /^2026-11-29T08:00:00\.\d{3}Z /);
    assert.deepEqual(out, ["hello { a: 1 }\n"]);
    assert.deepEqual(err, ["bad\nthings\n"]);
    assert.equal(tee.bytesWritten(), Deno.statSync(join(dir, "daemon.log")).size);
    // drain restored the console
    c.log("after");
    assert.deepEqual(calls, ["orig"]);
    assert.equal(Deno.statSync(join(dir, "daemon.log")).mode! & 0o777, 0o600);
  }));

Deno.test("the tee is a no-op off Unix", () =>
  withTempDir(async (dir) => {
    const { c, calls } = fakeConsole();
    const tee = installDaemonLogTee({
      dir,
      os: "windows",
      target: c,
      terminal: { stdout: () => {}, stderr: () => {} },
    });
    assert.equal(tee.active, false);
    c.log("x");
    assert.deepEqual(calls, ["orig"]);
    await tee.drain();
    assert.throws(() => Deno.statSync(join(dir, "daemon.log")), Deno.errors.NotFound);
  }));
