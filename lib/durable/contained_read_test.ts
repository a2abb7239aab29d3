import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import {
  ContainedReadError,
  openContained,
  openContainedSync,
  refusalError,
  refusalOf,
} from "./contained_open.ts";
import {
  listInside,
  openInside,
  openInsideSync,
  readContained,
  readContainedSync,
  readInside,
  readInsideSync,
} from "./contained_read.ts";
import { openRegularFileSync } from "./safe_create.ts";
import { realFs } from "./fs.ts";

/** A session-like tree with one plant of every kind. */
function hostileTree(root: string): { dir: string; canary: string } {
  const dir = join(root, "sess");
  Deno.mkdirSync(join(dir, "turns"), { recursive: true });
  Deno.mkdirSync(join(root, "outside"));
  const canary = join(root, "outside", "canary.txt");
  Deno.writeTextFileSync(canary, "CANARY");
  Deno.writeTextFileSync(join(dir, "turns", "ok.txt"), "hello world");
  Deno.symlinkSync(canary, join(dir, "turns", "link.txt"));
  Deno.symlinkSync("/dev/zero", join(dir, "zero"));
  Deno.linkSync(canary, join(dir, "hard.txt"));
  Deno.mkdirSync(join(dir, "adir"));
  Deno.symlinkSync(join(root, "outside"), join(dir, "outlink"));
  new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).outputSync();
  Deno.writeTextFileSync(join(dir, "big.txt"), "x".repeat(100));
  return { dir, canary };
}

const CASES: [string, string][] = [
  ["turns/link.txt", "symlink"],
  ["zero", "symlink"],
  ["hard.txt", "hardlinked"],
  ["adir", "not_regular"],
  ["fifo", "not_regular"],
  ["outlink/canary.txt", "parent"],
  ["missing.txt", "missing"],
  ["nodir/x.txt", "missing"],
  ["../outside/canary.txt", "bad_name"],
  ["/etc/passwd", "bad_name"],
  ["turns//ok.txt", "bad_name"],
  ["a/b/c/d/e/f/g/h/i.txt", "bad_name"],
];

Deno.test("openInside() and openInsideSync() refuse every plant with the same typed reason", () =>
  withTempDir(async (root) => {
    const { dir } = hostileTree(root);
    for (const [rel, reason] of CASES) {
      assert.deepEqual(await openInside(dir, rel), { ok: false, reason }, rel);
      assert.deepEqual(openInsideSync(dir, rel), { ok: false, reason }, `${rel} (sync)`);
    }
    // The root itself must be a real directory.
    Deno.symlinkSync(dir, join(root, "sesslink"));
    assert.deepEqual(await openInside(join(root, "sesslink"), "turns/ok.txt"), {
      ok: false,
      reason: "parent",
    });
    assert.equal(await listInside(join(root, "sesslink"), ""), null);
    const ok = await openInside(dir, "turns/ok.txt");
    assert.ok(ok.ok);
    assert.equal(new TextDecoder().decode(await ok.file.read(6, 100)), "world");
    assert.equal(ok.file.nlink, 1);
    await ok.file.close();
    const okSync = openInsideSync(dir, "turns/ok.txt");
    assert.ok(okSync.ok);
    const buf = new Uint8Array(5);
    assert.equal(okSync.file.readInto(buf, 0), 5);
    assert.equal(new TextDecoder().decode(buf), "hello");
    okSync.file.close();
    okSync.file.close(); // idempotent
  }));

Deno.test("hardlinks: 'allow' reads a twin, the default refuses it (lstat and fstat)", () =>
  withTempDir(async (root) => {
    const { dir, canary } = hostileTree(root);
    const path = join(dir, "hard.txt");
    assert.deepEqual(await openContained(path), { ok: false, reason: "hardlinked" });
    assert.deepEqual(openContainedSync(path), { ok: false, reason: "hardlinked" });
    // With the lstat skipped (`expected`), the fstat still sees the link count.
    const st = Deno.lstatSync(path);
    assert.deepEqual(await openContained(path, { expected: { dev: st.dev!, ino: st.ino! } }), {
      ok: false,
      reason: "hardlinked",
    });
    const r = await readContained(path, { hardlinks: "allow", maxBytes: 100 });
    assert.ok(r.ok);
    assert.equal(new TextDecoder().decode(r.bytes), "CANARY");
    // A wrong expected identity is a swap, whatever the file is.
    const other = Deno.lstatSync(canary);
    assert.deepEqual(
      await openContained(join(dir, "turns", "ok.txt"), {
        expected: { dev: other.dev!, ino: other.ino! },
      }),
      { ok: false, reason: "swapped" },
    );
  }));

Deno.test("bounded reads: refuse or truncate past the cap, never return more than asked", () =>
  withTempDir(async (root) => {
    const { dir } = hostileTree(root);
    const big = join(dir, "big.txt");
    for (
      const read of [
        readContained,
        (p: string, o: Parameters<typeof readContainedSync>[1]) =>
          Promise.resolve(readContainedSync(p, o)),
      ]
    ) {
      assert.deepEqual(await read(big, { maxBytes: 99 }), { ok: false, reason: "too_large" });
      const exact = await read(big, { maxBytes: 100 });
      assert.ok(exact.ok && exact.bytes.length === 100 && !exact.truncated);
      const cut = await read(big, { maxBytes: 10, overflow: "truncate", offset: 95 });
      assert.ok(cut.ok && cut.bytes.length === 5 && !cut.truncated);
      const head = await read(big, { maxBytes: 10, overflow: "truncate" });
      assert.ok(head.ok && head.bytes.length === 10 && head.truncated && head.size === 100);
    }
    assert.deepEqual(await openContained(big, { maxSize: 50 }), { ok: false, reason: "too_large" });
    const r = await readInside(dir, "big.txt", { maxBytes: 100, offset: 40 });
    assert.ok(r.ok && r.bytes.length === 60);
    assert.deepEqual(readInsideSync(dir, "zero", { maxBytes: 10 }), {
      ok: false,
      reason: "symlink",
    });
    await assert.rejects(readContained(big, { maxBytes: -1 }), RangeError);
  }));

Deno.test("refusalError() maps missing to NotFound and the rest to a typed ContainmentError", () => {
  const missing = refusalError("/x", "missing");
  assert.ok(missing instanceof Deno.errors.NotFound);
  assert.equal(refusalOf(missing), "missing");
  const hard = refusalError("/x", "hardlinked");
  assert.ok(hard instanceof ContainedReadError);
  assert.equal(hard.name, "ContainmentError");
  assert.equal(refusalOf(hard), "hardlinked");
  assert.match(hard.message, /^Refusing "\/x": it has more than one link/);
  assert.equal(refusalOf(new Error("EIO")), null);
});

Deno.test("Fs.readFileCapped refuses symlinks to /dev/zero, FIFOs and huge files without reading them", () =>
  withTempDir(async (root) => {
    const { dir } = hostileTree(root);
    const reason = async (p: string, max: number) =>
      await realFs.readFileCapped(p, max).then(() => "read", (e) => refusalOf(e) ?? String(e));
    assert.equal(await reason(join(dir, "zero"), 1 << 20), "symlink");
    assert.equal(await reason(join(dir, "fifo"), 1 << 20), "not_regular");
    assert.equal(await reason(join(dir, "big.txt"), 99), "too_large");
    assert.equal(await reason(join(dir, "nope"), 99), "missing");
    // Store files may be hard links (ours, validated): allowed.
    assert.equal(await reason(join(dir, "hard.txt"), 99), "read");
    const r = await realFs.readFileCapped(join(dir, "big.txt"), 100);
    const st = await realFs.stat(join(dir, "big.txt"));
    assert.deepEqual(r.stat, st, "the fstat identity equals Fs.stat's");
  }));

Deno.test("openRegularFileSync() refuses to append to a hard link (it would write outside)", () =>
  withTempDir((root) => {
    const { dir, canary } = hostileTree(root);
    assert.throws(
      () => openRegularFileSync(dir, "hard.txt", { root: dir, append: true }),
      /more than one link/,
    );
    assert.equal(Deno.readTextFileSync(canary), "CANARY");
  }));
