import assert from "node:assert/strict";
import { join } from "node:path";
import {
  loadOrCreateToken,
  readTokenFile,
  rotateToken,
  tokenFilePath,
  watchTokenFile,
} from "./token_file.ts";

async function withRoot(fn: (root: string, outside: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-token-" });
  try {
    const root = join(dir, "state");
    const outside = join(dir, "outside");
    Deno.mkdirSync(outside);
    await fn(root, outside);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("loadOrCreateToken() writes one 0600 token and returns the same one afterwards", () =>
  withRoot(async (root) => {
    const a = await loadOrCreateToken(root);
    assert.equal(a.replaced, "missing");
    assert.match(a.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Deno.statSync(tokenFilePath(root)).mode! & 0o777, 0o600);
    assert.equal(Deno.readTextFileSync(tokenFilePath(root)), a.token + "\n");
    const b = await loadOrCreateToken(root);
    assert.deepEqual(b, { token: a.token, replaced: null });
  }));

Deno.test("a malformed or oversized token file is replaced by a fresh token", () =>
  withRoot(async (root) => {
    Deno.mkdirSync(root, { recursive: true });
    for (
      const bad of [
        "short\n",
        "has spaces in it but is long enough to pass\n",
        "é".repeat(40),
        "A".repeat(600),
      ]
    ) {
      Deno.writeTextFileSync(tokenFilePath(root), bad);
      assert.equal((await readTokenFile(root)).ok, false, bad.slice(0, 20));
      const r = await loadOrCreateToken(root);
      assert.equal(r.replaced, "malformed");
      assert.notEqual(r.token + "\n", bad);
      assert.equal((await readTokenFile(root)).ok, true);
    }
  }));

Deno.test("a symlink or FIFO at the token's name is never followed: refused, then replaced itself", () =>
  withRoot(async (root, outside) => {
    Deno.mkdirSync(root, { recursive: true });
    const secret = join(outside, "their-token");
    const planted = "P".repeat(43);
    Deno.writeTextFileSync(secret, planted + "\n");
    Deno.symlinkSync(secret, tokenFilePath(root));
    assert.deepEqual(await readTokenFile(root), { ok: false, reason: "refused" });
    const r = await loadOrCreateToken(root);
    assert.equal(r.replaced, "refused");
    assert.notEqual(r.token, planted);
    assert.equal(Deno.lstatSync(tokenFilePath(root)).isSymlink, false, "the link itself replaced");
    assert.equal(Deno.readTextFileSync(secret), planted + "\n", "the target is untouched");

    Deno.removeSync(tokenFilePath(root));
    const fifo = new Deno.Command("mkfifo", { args: [tokenFilePath(root)] }).outputSync();
    assert.equal(fifo.code, 0);
    // A FIFO would block a plain read forever; the contained reader refuses it at once.
    assert.deepEqual(await readTokenFile(root), { ok: false, reason: "refused" });
    assert.equal((await loadOrCreateToken(root)).replaced, "refused");
    assert.ok(Deno.lstatSync(tokenFilePath(root)).isFile);
  }));

Deno.test("watchTokenFile() adopts a rotated token and keeps the last good one while the file is bad", () =>
  withRoot(async (root) => {
    const { token } = await loadOrCreateToken(root);
    const changes: string[] = [];
    const logs: string[] = [];
    const watch = watchTokenFile(root, {
      initial: token,
      intervalMs: 60_000,
      onChange: (t) => void changes.push(t),
      logger: (l) => logs.push(l),
    });
    try {
      await watch.check();
      assert.equal(watch.current(), token);
      const next = await rotateToken(root);
      await watch.check();
      assert.equal(watch.current(), next);
      assert.deepEqual(changes, [next]);
      Deno.writeTextFileSync(tokenFilePath(root), "garbage\n");
      await watch.check();
      assert.equal(watch.current(), next, "a bad file never unlocks or locks out");
      assert.equal(logs.length, 1);
      Deno.removeSync(tokenFilePath(root));
      await watch.check();
      assert.equal(watch.current(), next);
      const third = await rotateToken(root);
      await watch.check();
      assert.equal(watch.current(), third);
      assert.deepEqual(changes, [next, third]);
    } finally {
      await watch.stop();
    }
  }));
